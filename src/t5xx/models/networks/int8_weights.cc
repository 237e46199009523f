// See int8_weights.h.
#include "t5xx/models/networks/int8_weights.h"

#include <ATen/ATen.h>

namespace t5xx::models {
namespace {
thread_local Int8Weights* active_int8_weights = nullptr;
}  // namespace

Int8Weights::Int8Weights(const ParamStore& params) {
  for (const Param& p : params.params()) {
    const at::Tensor& v = p.value;
    if (v.defined() && v.is_cpu() && v.scalar_type() == at::kFloat && v.dim() >= 2) {
      params_.insert(v.data_ptr());
    }
  }
}

const Int8Weight* Int8Weights::Find(const at::Tensor& w) {
  if (!w.defined() || w.dim() != 2 || !w.is_cpu() || w.scalar_type() != at::kFloat ||
      w.size(0) < kInt8MinSize || w.size(1) < kInt8MinSize || w.size(0) > 65535 ||
      params_.count(w.data_ptr()) == 0) {
    return nullptr;
  }
  const Key key{w.data_ptr(), w.size(0), w.size(1), w.stride(0), w.stride(1)};
  const std::lock_guard<std::mutex> lock(mu_);
  const uint32_t version = w._version();
  Copy& copy = views_[key];
  if (!copy.weight || copy.version != version) {
    copy.weight = std::make_unique<Int8Weight>(QuantizeInt8Weight(w));
    copy.version = version;
  }
  return copy.weight.get();
}

int64_t Int8Weights::quantized() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(views_.size());
}

int64_t Int8Weights::quantized_bytes() const {
  const std::lock_guard<std::mutex> lock(mu_);
  int64_t bytes = 0;
  for (const auto& [key, copy] : views_) {
    bytes += copy.weight->packed.numel() + 8 * copy.weight->n_padded;
  }
  return bytes;
}

Int8WeightsScope::Int8WeightsScope(Int8Weights* weights) : previous_(active_int8_weights) {
  active_int8_weights = weights;
}

Int8WeightsScope::~Int8WeightsScope() { active_int8_weights = previous_; }

Int8Weights* ActiveInt8Weights() { return active_int8_weights; }

}  // namespace t5xx::models
