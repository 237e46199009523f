#include "t5xx/trainer/checkpoint_io.h"

#include <vector>

#include "t5xx/checkpoints/checkpoints.h"

namespace t5xx::trainer {

std::string SaveTrainState(const std::string& model_dir,
                           const models::ParamStore& params,
                           const optim::Adafactor& optimizer) {
  std::vector<at::Tensor> keep_alive;
  std::vector<checkpoints::ArrayRef> arrays;
  auto add = [&](const std::string& path, const at::Tensor& t) {
    at::Tensor c = t.detach().to(at::kFloat).contiguous();
    keep_alive.push_back(c);
    arrays.push_back({path, checkpoints::DType::kFloat32, c.sizes().vec(),
                      c.data_ptr(), false});
  };
  const at::Tensor unused = at::zeros({1}, at::kFloat);  // t5x's empty slot
  for (const auto& p : params.params()) {
    add("target." + p.name, p.value);
    const auto& s = optimizer.state().at(p.name);
    const std::string slot = "state.param_states." + p.name + ".";
    add(slot + "v_row", s.v_row);
    add(slot + "v_col", s.v_col);
    add(slot + "v", s.v);
    add(slot + "m", unused);  // no momentum (beta1 = None)
  }
  return checkpoints::SaveCheckpoint(model_dir, optimizer.step(), arrays);
}

}  // namespace t5xx::trainer
