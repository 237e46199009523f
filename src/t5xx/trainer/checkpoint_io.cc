// Writes the train state (parameters, optimizer state, step) in t5x's
// checkpoint layout through the framework-free checkpoints library -- the
// implementation of checkpoint_io.h.
#include "t5xx/trainer/checkpoint_io.h"

#include <ctime>
#include <cstring>
#include <map>
#include <stdexcept>
#include <vector>

#include "t5xx/checkpoints/checkpoints.h"
#include "t5xx/util/error.h"

namespace t5xx::trainer {
namespace {

checkpoints::DType ToDType(at::ScalarType t, const std::string& path) {
  switch (t) {
    case at::kFloat: return checkpoints::DType::kFloat32;
    case at::kBFloat16: return checkpoints::DType::kBFloat16;
    case at::kInt: return checkpoints::DType::kInt32;
    case at::kLong: return checkpoints::DType::kInt64;
    default:
      throw std::logic_error("SaveTrainState: " + path + " has a dtype the checkpoint cannot hold");
  }
}

checkpoints::OwnedArray Copy(const std::string& path, const at::Tensor& t, bool store_inline) {
  const at::Tensor c = t.detach().to(at::kCPU).contiguous();
  checkpoints::OwnedArray a;
  a.path = path;
  a.dtype = ToDType(c.scalar_type(), path);
  a.shape = c.sizes().vec();
  a.bytes.resize(static_cast<size_t>(c.numel()) * c.element_size());
  if (!a.bytes.empty()) std::memcpy(a.bytes.data(), c.data_ptr(), a.bytes.size());
  a.store_inline = store_inline;
  return a;
}

// The whole of an array of `global` shape whose processes each hold the
// box `box` of it (equal box shapes everywhere): every process's box and
// its origin gathered, then copied into place (replicas hold equal values).
at::Tensor GatherWhole(const at::Tensor& local, const partitioning::ShardBox& box,
                       const std::vector<int64_t>& global,
                       const partitioning::Communicator& comm) {
  const at::Tensor pieces = comm.AllGather(local.contiguous().reshape({1, -1}));
  const at::Tensor origins =
      comm.AllGather(at::tensor(box.origin, at::kLong).reshape({1, -1}));
  at::Tensor whole = at::zeros(global, local.options());
  for (int64_t r = 0; r < pieces.size(0); ++r) {
    at::Tensor dst = whole;
    for (size_t d = 0; d < global.size(); ++d) {
      dst = dst.narrow(static_cast<int64_t>(d), origins[r][static_cast<int64_t>(d)].item<int64_t>(),
                       box.shape[d]);
    }
    dst.copy_(pieces[r].reshape(box.shape));
  }
  return whole;
}

// The layout row of `name`; std::logic_error naming it when absent or when
// its box is not the live tensor's shape.
const partitioning::VariableInfo& RowOf(
    const std::map<std::string, const partitioning::VariableInfo*>& rows,
    const std::string& name, const at::Tensor& live) {
  const auto it = rows.find(name);
  if (it == rows.end()) {
    throw std::logic_error("sharded checkpoint save: the layout has no variable " + name);
  }
  if (it->second->box.shape != live.sizes().vec()) {
    throw std::logic_error("sharded checkpoint save: " + name + " holds " +
                           checkpoints::ShapeString(live.sizes().vec()) +
                           " but its box in the layout is " +
                           checkpoints::ShapeString(it->second->box.shape));
  }
  return *it->second;
}

}  // namespace

checkpoints::PendingCheckpoint SnapshotShardedTrainState(
    const std::string& model_dir, const models::ParamStore& params,
    const optim::Optimizer& optimizer, const std::vector<partitioning::VariableInfo>& layout,
    const partitioning::Communicator& comm, SaveDType dtype,
    std::vector<checkpoints::ExtraFile> extra_files, double wait_seconds) {
  if (comm.size() <= 1) return SnapshotTrainState(params, optimizer, dtype, std::move(extra_files));
  const int64_t step = optimizer.step();
  // Process 0 makes the temporary directory and shares its name; a failure
  // there reaches every process through the same broadcast.
  int64_t stamp = static_cast<int64_t>(std::time(nullptr));
  std::string begin_error;
  if (comm.rank() == 0) {
    try {
      checkpoints::BeginShardedSave(model_dir, step, stamp);
    } catch (const Error& e) {
      begin_error = e.what();
      stamp = -1;
    }
  }
  at::Tensor shared = at::tensor({stamp}, at::kLong);
  comm.Broadcast(shared, 0);
  stamp = shared.item<int64_t>();
  if (stamp < 0) {
    throw Error(comm.rank() == 0 ? begin_error
                                 : "process 0 could not start the checkpoint of step " +
                                       std::to_string(step) + " (its log says why)");
  }
  std::map<std::string, const partitioning::VariableInfo*> rows;
  for (const partitioning::VariableInfo& v : layout) rows[v.name] = &v;
  auto place = [](checkpoints::OwnedArray& a, const partitioning::VariableInfo& row) {
    a.shape = row.shape;
    a.box = checkpoints::Box{row.box.origin, row.box.shape};
    a.write = row.primary;
  };
  checkpoints::PendingCheckpoint out;
  out.step = step;
  const at::ScalarType target = dtype == SaveDType::kBFloat16 ? at::kBFloat16 : at::kFloat;
  for (const auto& p : params.params()) {
    const partitioning::VariableInfo& row = RowOf(rows, "target/" + p.name, p.value);
    out.arrays.push_back(Copy("target." + p.name, p.value.to(target), false));
    place(out.arrays.back(), row);
  }
  // In StateArrays' order on every process, so the gathers pair up.
  for (const auto& s : optimizer.StateArrays()) {
    const partitioning::VariableInfo& row = RowOf(rows, "state/" + s.path, s.value);
    if (s.store_inline) {
      const at::Tensor whole = row.box.shape == row.shape
                                   ? s.value
                                   : GatherWhole(s.value.detach().to(at::kCPU), row.box,
                                                 row.shape, comm);
      out.arrays.push_back(Copy("state." + s.path, whole, true));
      out.arrays.back().write = comm.rank() == 0;
    } else {
      out.arrays.push_back(Copy("state." + s.path, s.value, false));
      place(out.arrays.back(), row);
    }
  }
  out.extra_files = std::move(extra_files);
  out.sharded.process_index = comm.rank();
  out.sharded.process_count = comm.size();
  out.sharded.tmp_dir = checkpoints::ShardedTemporaryDir(model_dir, step, stamp);
  out.sharded.wait_seconds = wait_seconds;
  return out;
}

checkpoints::PendingCheckpoint SnapshotTrainState(const models::ParamStore& params,
                                                  const optim::Optimizer& optimizer,
                                                  SaveDType dtype,
                                                  std::vector<checkpoints::ExtraFile> extra_files) {
  checkpoints::PendingCheckpoint out;
  out.step = optimizer.step();
  const at::ScalarType target = dtype == SaveDType::kBFloat16 ? at::kBFloat16 : at::kFloat;
  for (const auto& p : params.params()) {
    out.arrays.push_back(Copy("target." + p.name, p.value.to(target), false));
  }
  for (const auto& s : optimizer.StateArrays()) {
    out.arrays.push_back(Copy("state." + s.path, s.value, s.store_inline));
  }
  out.extra_files = std::move(extra_files);
  return out;
}

std::string SaveTrainState(const std::string& model_dir, const models::ParamStore& params,
                           const optim::Optimizer& optimizer) {
  const checkpoints::PendingCheckpoint c = SnapshotTrainState(params, optimizer);
  return checkpoints::SaveCheckpoint(model_dir, c.step, checkpoints::ArrayRefs(c.arrays), {},
                                     c.extra_files);
}

}  // namespace t5xx::trainer
