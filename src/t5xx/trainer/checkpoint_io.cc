// Writes the train state (parameters, optimizer state, step) in t5x's
// checkpoint layout through the framework-free checkpoints library -- the
// implementation of checkpoint_io.h.
#include "t5xx/trainer/checkpoint_io.h"

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

}  // namespace

std::string SaveTrainState(const std::string& model_dir,
                           const models::ParamStore& params,
                           const optim::Optimizer& optimizer) {
  std::vector<at::Tensor> keep_alive;
  std::vector<checkpoints::ArrayRef> arrays;
  auto add = [&](const std::string& path, const at::Tensor& t, bool store_inline) {
    at::Tensor c = t.detach().to(at::kCPU).contiguous();
    keep_alive.push_back(c);
    arrays.push_back({path, ToDType(c.scalar_type(), path), c.sizes().vec(), c.data_ptr(),
                      store_inline});
  };
  for (const auto& p : params.params()) add("target." + p.name, p.value.to(at::kFloat), false);
  for (const auto& s : optimizer.StateArrays()) add("state." + s.path, s.value, s.store_inline);
  return checkpoints::SaveCheckpoint(model_dir, optimizer.step(), arrays);
}

}  // namespace t5xx::trainer
