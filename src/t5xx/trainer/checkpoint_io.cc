// Writes the train state (parameters, optimizer state, step) in t5x's
// checkpoint layout through the framework-free checkpoints library -- the
// implementation of checkpoint_io.h.
#include "t5xx/trainer/checkpoint_io.h"

#include <cstring>
#include <stdexcept>
#include <vector>

#include "t5xx/checkpoints/checkpoints.h"

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

}  // namespace

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
