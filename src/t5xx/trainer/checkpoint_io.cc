// Writes the train state (parameters, optimizer state, step) in t5x's
// checkpoint layout through the framework-free checkpoints library -- the
// implementation of checkpoint_io.h.
#include "t5xx/trainer/checkpoint_io.h"

#include <algorithm>
#include <ctime>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "t5xx/checkpoints/npy.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/optim/multi_optimizer.h"
#include "t5xx/trainer/summary_writer.h"
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

// The wholes of arrays of `globals` shapes whose processes each hold the
// box `boxes[i]` of array i (equal box shapes everywhere): every process's
// boxes and their origins gathered -- in two collectives for all the arrays
// (their pieces flattened into one buffer, as float64: exact for the
// float32 and integer statistics stored inline), not two per array, since
// each collective costs round trips between hosts -- then copied into
// place (replicas hold equal values). Results in each local's dtype.
std::vector<at::Tensor> GatherWholes(const std::vector<at::Tensor>& locals,
                                     const std::vector<partitioning::ShardBox>& boxes,
                                     const std::vector<std::vector<int64_t>>& globals,
                                     const partitioning::Communicator& comm) {
  std::vector<at::Tensor> flat;
  std::vector<int64_t> origin_list;
  for (size_t i = 0; i < locals.size(); ++i) {
    flat.push_back(locals[i].contiguous().reshape({-1}).to(at::kDouble));
    origin_list.insert(origin_list.end(), boxes[i].origin.begin(), boxes[i].origin.end());
  }
  std::vector<at::Tensor> out;
  if (locals.empty()) return out;
  const at::Tensor pieces = comm.AllGather(at::cat(flat).reshape({1, -1}));
  const at::Tensor origins = comm.AllGather(at::tensor(origin_list, at::kLong).reshape({1, -1}));
  int64_t at_piece = 0, at_origin = 0;
  for (size_t i = 0; i < locals.size(); ++i) {
    const std::vector<int64_t>& global = globals[i];
    const std::vector<int64_t>& shape = boxes[i].shape;
    const int64_t numel = flat[i].numel();
    at::Tensor whole = at::zeros(global, locals[i].options().dtype(at::kDouble));
    for (int64_t r = 0; r < pieces.size(0); ++r) {
      at::Tensor dst = whole;
      for (size_t d = 0; d < global.size(); ++d) {
        const int64_t o = origins[r][at_origin + static_cast<int64_t>(d)].item<int64_t>();
        dst = dst.narrow(static_cast<int64_t>(d), o, shape[d]);
      }
      dst.copy_(pieces[r].narrow(0, at_piece, numel).reshape(shape));
    }
    out.push_back(whole.to(locals[i].scalar_type()));
    at_piece += numel;
    at_origin += static_cast<int64_t>(global.size());
  }
  return out;
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
  // In StateArrays' order on every process, so the gathers pair up. The
  // split statistics stored inline (rank 0 writes them whole into the
  // msgpack index) are gathered together after the loop.
  std::vector<size_t> split_inline;
  std::vector<at::Tensor> locals;
  std::vector<partitioning::ShardBox> boxes;
  std::vector<std::vector<int64_t>> globals;
  for (const auto& s : optimizer.StateArrays()) {
    const partitioning::VariableInfo& row = RowOf(rows, "state/" + s.path, s.value);
    if (s.store_inline) {
      out.arrays.push_back(Copy("state." + s.path, s.value, true));
      out.arrays.back().write = comm.rank() == 0;
      if (row.box.shape != row.shape) {
        split_inline.push_back(out.arrays.size() - 1);
        locals.push_back(s.value.detach().to(at::kCPU));
        boxes.push_back(row.box);
        globals.push_back(row.shape);
      }
    } else {
      out.arrays.push_back(Copy("state." + s.path, s.value, false));
      place(out.arrays.back(), row);
    }
  }
  const std::vector<at::Tensor> wholes = GatherWholes(locals, boxes, globals, comm);
  for (size_t i = 0; i < split_inline.size(); ++i) {
    checkpoints::OwnedArray& a = out.arrays[split_inline[i]];
    const bool write = a.write;
    a = Copy(a.path, wholes[i], true);
    a.write = write;
  }
  out.extra_files = std::move(extra_files);
  out.sharded.process_index = comm.rank();
  out.sharded.process_count = comm.size();
  out.sharded.tmp_dir = checkpoints::ShardedTemporaryDir(model_dir, step, stamp);
  out.sharded.wait_seconds = wait_seconds;
  return out;
}

checkpoints::PendingCheckpoint SnapshotTrainState(
    const models::ParamStore& params, const optim::Optimizer& optimizer, SaveDType dtype,
    std::vector<checkpoints::ExtraFile> extra_files,
    const std::optional<checkpoints::ScanLayout>& scan) {
  checkpoints::PendingCheckpoint out;
  out.step = optimizer.step();
  const at::ScalarType target = dtype == SaveDType::kBFloat16 ? at::kBFloat16 : at::kFloat;
  for (const auto& p : params.params()) {
    out.arrays.push_back(Copy("target." + p.name, p.value.to(target), false));
  }
  std::map<std::string, std::vector<int64_t>> slot_dims;
  for (const auto& s : optimizer.StateArrays()) {
    out.arrays.push_back(Copy("state." + s.path, s.value, s.store_inline));
    if (s.param_dims) slot_dims["state." + s.path] = *s.param_dims;
  }
  out.extra_files = std::move(extra_files);
  if (!scan) return out;
  std::map<std::string, checkpoints::StateArrayBytes> per_layer;
  for (checkpoints::OwnedArray& a : out.arrays) {
    per_layer[a.path] = {{a.dtype, a.shape, std::move(a.bytes)}, a.store_inline};
  }
  out.arrays.clear();
  for (auto& [path, a] : checkpoints::StackTrainState(per_layer, *scan, slot_dims)) {
    checkpoints::OwnedArray o;
    o.path = path;
    o.dtype = a.array.dtype;
    o.shape = a.array.shape;
    o.bytes = std::move(a.array.bytes);
    o.store_inline = a.store_inline;
    out.arrays.push_back(std::move(o));
  }
  return out;
}

std::string SaveTrainState(const std::string& model_dir, const models::ParamStore& params,
                           const optim::Optimizer& optimizer,
                           const std::optional<checkpoints::ScanLayout>& scan) {
  const checkpoints::PendingCheckpoint c =
      SnapshotTrainState(params, optimizer, SaveDType::kFloat32, {}, scan);
  return checkpoints::SaveCheckpoint(model_dir, c.step, checkpoints::ArrayRefs(c.arrays), {},
                                     c.extra_files);
}

checkpoints::RetentionPolicy RetentionPolicyOf(std::optional<int64_t> keep,
                                               std::optional<int64_t> keep_dataset_checkpoints,
                                               std::optional<int64_t> force_keep_period,
                                               const std::optional<checkpoints::SaveBestConfig>& save_best,
                                               const std::string& model_dir) {
  checkpoints::RetentionPolicy p{keep, keep_dataset_checkpoints, force_keep_period, nullptr};
  if (save_best && keep) {
    p.choose_removals = [best = *save_best, n = *keep, model_dir](const std::vector<int64_t>& steps) {
      return checkpoints::SaveBestStepsToRemove(steps, n, best, [&] {
        std::map<int64_t, double> m = MetricsForSteps(
            model_dir, best.metric_name_to_monitor, std::set<int64_t>(steps.begin(), steps.end()));
        // The newest step's evaluations are written after its save, while
        // the save commits in the background: whether they are on disk yet
        // is a race. They count from the next save on, as with a save that
        // blocks; train/ summaries are written before the save and count.
        if (!steps.empty() && best.metric_name_to_monitor.rfind("train/", 0) != 0) {
          m.erase(steps.back());
        }
        return m;
      });
    };
  }
  return p;
}

std::function<void(int64_t, const models::ParamStore&)> NumpyCheckpointHook(
    const std::string& model_dir, const std::vector<std::string>& regexes) {
  std::vector<std::regex> compiled(regexes.begin(), regexes.end());
  return [model_dir, compiled](int64_t step, const models::ParamStore& params) {
    std::vector<checkpoints::NpyEntry> arrays;
    const std::vector<models::ParamSpec> specs = params.Specs();
    for (size_t i = 0; i < params.params().size(); ++i) {
      const models::Param& p = params.params()[i];
      const std::string path = optim::FlaxParamPath(p.name).substr(1);
      if (std::none_of(compiled.begin(), compiled.end(),
                       [&](const std::regex& r) { return std::regex_match(path, r); })) {
        continue;
      }
      const at::Tensor v = p.value.detach().to(at::kCPU, at::kFloat).contiguous();
      T5XX_CHECK(v.sizes().vec() == specs[i].shape,
                 "prompt_utils.Checkpointer: parameter " + p.name +
                     " is split across processes; the numpy checkpoint needs it whole (keep "
                     "its axes replicated)");
      arrays.push_back({p.name, specs[i].shape,
                        std::vector<float>(v.data_ptr<float>(), v.data_ptr<float>() + v.numel())});
    }
    checkpoints::SaveNumpyCheckpoint(model_dir, step, arrays);
  };
}

}  // namespace t5xx::trainer
