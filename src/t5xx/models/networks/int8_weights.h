// int8 copies of a model's float32 kernels for inference (`t5xx infer|eval
// --int8_weights`, docs/inference_eval.md): while an Int8WeightsScope is
// open on a thread, MatmulIn (layers.h) multiplies by a parameter through
// kernels/int8_matmul.h instead of in float32.
//
// Which products: those whose right operand is a float32 CPU parameter of
// the scope's ParamStore with both sizes >= kInt8MinSize (attention
// projections, MLP kernels, logits_dense, a tied embedding read as logits),
// seen as it is multiplied (a kernel [K, N], an embedding's transpose):
// each such view is quantized the first time it is used, per output
// column, and kept for the scope's life. Activations times activations
// (attention's q k^T and probabilities v) stay float32, as does anything
// requiring gradients. A parameter changed in place since its copy was made
// (its version counter moved) is quantized again.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>

#include "t5xx/kernels/int8_matmul.h"
#include "t5xx/models/param_store.h"

namespace t5xx::models {

// The smallest size, in both dimensions, of a kernel worth quantizing
// (relative-position tables and the like are left alone).
inline constexpr int64_t kInt8MinSize = 16;

class Int8Weights {
 public:
  // Remembers the float32 CPU parameters of `params` (their data pointers);
  // quantizes nothing yet.
  explicit Int8Weights(const ParamStore& params);

  // The int8 form of w (a view [K, N] of one of the parameters, any
  // strides), quantized now if this is its first use; nullptr when w is
  // not such a view (or K or N is below kInt8MinSize). Thread-safe.
  const Int8Weight* Find(const at::Tensor& w);

  // How many views were quantized, and their int8 bytes.
  int64_t quantized() const;
  int64_t quantized_bytes() const;

 private:
  using Key = std::tuple<const void*, int64_t, int64_t, int64_t, int64_t>;
  std::set<const void*> params_;
  mutable std::mutex mu_;
  struct Copy {
    std::unique_ptr<Int8Weight> weight;
    uint32_t version = 0;  // the parameter's _version() when quantized
  };
  std::map<Key, Copy> views_;
};

// While alive, MatmulIn on this thread uses `weights` (nullptr: none).
// Scopes nest; each restores the one before it.
class Int8WeightsScope {
 public:
  explicit Int8WeightsScope(Int8Weights* weights);
  ~Int8WeightsScope();
  Int8WeightsScope(const Int8WeightsScope&) = delete;
  Int8WeightsScope& operator=(const Int8WeightsScope&) = delete;

 private:
  Int8Weights* previous_;
};

// The innermost open scope's weights on this thread, or nullptr.
Int8Weights* ActiveInt8Weights();

}  // namespace t5xx::models
