// Named parameters that carry t5x's logical axis names -- the implementation
// of param_store.h.
#include "t5xx/models/param_store.h"

#include <stdexcept>

#include "t5xx/kernels/cpu/tensor_offsets.h"
#include "t5xx/kernels/skinny_matmul.h"

namespace t5xx::models {

Param& ParamStore::Add(std::string name, at::Tensor value,
                       std::vector<std::string> axes) {
  if (Contains(name)) throw std::logic_error("duplicate parameter " + name);
  if (static_cast<int64_t>(axes.size()) != value.dim()) {
    throw std::logic_error("parameter " + name + " has " +
                           std::to_string(value.dim()) + " dims but " +
                           std::to_string(axes.size()) + " axis names");
  }
  params_.push_back({std::move(name), std::move(value), std::move(axes)});
  return params_.back();
}

const Param& ParamStore::GetParam(const std::string& name) const {
  for (const auto& p : params_) {
    if (p.name == name) return p;
  }
  throw std::out_of_range("no parameter named " + name);
}

const at::Tensor& ParamStore::Get(const std::string& name) const {
  return GetParam(name).value;
}

bool ParamStore::Contains(const std::string& name) const {
  for (const auto& p : params_) {
    if (p.name == name) return true;
  }
  return false;
}

at::Tensor SpecsOnlyPlacement::Place(const ParamSpec& spec,
                                     const std::function<at::Tensor()>&) const {
  return at::empty(spec.shape, at::TensorOptions().dtype(at::kFloat).device(at::kMeta));
}

at::Tensor UninitializedPlacement::Place(const ParamSpec& spec,
                                         const std::function<at::Tensor()>&) const {
  const auto empty = [&] { return at::empty(spec.shape, at::TensorOptions().dtype(at::kFloat)); };
  return inner_ ? inner_->Place(spec, empty) : empty();
}

std::vector<ParamSpec> ParamStore::Specs() const {
  std::vector<ParamSpec> out;
  out.reserve(params_.size());
  for (const Param& p : params_) out.push_back({p.name, p.value.sizes().vec(), p.axes});
  return out;
}

int64_t ParamStore::NumElements() const {
  int64_t n = 0;
  for (const auto& p : params_) n += p.value.numel();
  return n;
}

void ParamStore::SetRequiresGrad(bool requires_grad) {
  for (auto& p : params_) p.value.set_requires_grad(requires_grad);
}

void ParamStore::ZeroGrad() {
  for (auto& p : params_) {
    if (p.value.grad().defined()) p.value.mutable_grad() = at::Tensor();
  }
}

void ParamStore::To(at::Device device) {
  for (Param& p : params_) {
    if (p.value.device() == device) continue;
    const bool grad = p.value.requires_grad();
    p.value = p.value.detach().to(device).set_requires_grad(grad);
  }
}

int64_t StoreKernelsTransposed(ParamStore& params,
                               const std::function<bool(const Param&)>& which) {
  int64_t changed = 0;
  for (Param& p : params.params()) {
    const at::Tensor& v = p.value;
    if (!which(p) || !device::IsFloat32CpuStrided(v) || v.dim() != 2 || v.requires_grad() ||
        v.size(0) < 2 || v.size(1) < 2 || SkinnyLayoutOf(v) == SkinnyLayout::kTransposed) {
      continue;
    }
    // A partitioner's piece keeps the partitioner's layout.
    if (params.hooks_ptr() && params.hooks().GlobalShape(p) != v.sizes().vec()) continue;
    p.value = v.t().contiguous().t();  // [K, N] with strides {1, K}
    ++changed;
  }
  return changed;
}

}  // namespace t5xx::models
