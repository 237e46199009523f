// Named parameters that carry t5x's logical axis names.
//
// Each parameter has t5x's dotted path (e.g.
// "encoder.layers_0.attention.query.kernel"), a float32 tensor and one logical
// axis name per dimension (embed, mlp, heads, kv, joined_kv, vocab,
// relpos_buckets; t5x/examples/t5/layers.py param_with_axes). Model code only
// declares axes; the partitioner maps them to mesh axes.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/models/sharding_hooks.h"

namespace t5xx::models {

struct Param {
  std::string name;               // t5x dotted path, without "target."
  at::Tensor value;               // float32, requires_grad for training
  std::vector<std::string> axes;  // logical axis names, one per dim
};

// A parameter as a network declares it, before any value exists.
struct ParamSpec {
  std::string name;                // t5x dotted path
  std::vector<int64_t> shape;      // global shape
  std::vector<std::string> axes;   // logical axis names, one per dim
};

// What a store keeps of each parameter as a network creates it
// (Transformer::InitParams(seed, placement)): the default keeps the whole
// value; a partitioner keeps only this process's box, so that no process
// ever holds more than one whole parameter at a time (sharded
// initialisation, with values equal to a one-process initialisation because
// each parameter's value depends only on the seed and its name).
class ParamPlacement {
 public:
  virtual ~ParamPlacement() = default;
  // The tensor the store holds for `spec`; `make` returns the whole float32
  // value (a placement that needs only the shapes need not call it).
  virtual at::Tensor Place(const ParamSpec& spec, const std::function<at::Tensor()>& make) const {
    return make();
  }
};

// Keeps no values: meta tensors of each global shape, for the shapes and
// axes alone (plans and checks before anything is allocated).
class SpecsOnlyPlacement final : public ParamPlacement {
 public:
  at::Tensor Place(const ParamSpec& spec, const std::function<at::Tensor()>& make) const override;
};

// Allocates each parameter without computing its initial value (at::empty,
// float32): for a store a checkpoint fills, where t5x's initialisers (a
// truncated normal through erfinv) would be most of the start-up. `inner`
// (a partitioner's placement, or null for whole values) decides what is
// kept of the uninitialised value.
class UninitializedPlacement final : public ParamPlacement {
 public:
  explicit UninitializedPlacement(const ParamPlacement* inner = nullptr) : inner_(inner) {}
  at::Tensor Place(const ParamSpec& spec, const std::function<at::Tensor()>& make) const override;

 private:
  const ParamPlacement* inner_;
};

class ParamStore {
 public:
  // Adds a parameter; throws std::logic_error on a duplicate name or when
  // axes.size() != value.dim().
  Param& Add(std::string name, at::Tensor value, std::vector<std::string> axes);
  // Throws std::out_of_range naming the parameter when absent.
  const at::Tensor& Get(const std::string& name) const;
  const Param& GetParam(const std::string& name) const;
  bool Contains(const std::string& name) const;

  std::vector<Param>& params() { return params_; }
  const std::vector<Param>& params() const { return params_; }
  int64_t NumElements() const;
  // Each parameter's name, shape and axes (its tensor's shape: global for
  // whole or meta tensors, local for a partitioner's pieces).
  std::vector<ParamSpec> Specs() const;
  void SetRequiresGrad(bool requires_grad);
  // Moves every parameter to `device` (a copy per parameter, keeping
  // requires_grad; none when it is there already). Call before the
  // optimizer is initialised, so that its state is created beside them.
  void To(at::Device device);
  void ZeroGrad();

  // How model code uses these parameters (sharding_hooks.h): single-device
  // math unless a partitioner installed its own hooks on a sharded store
  // (its tensors are then this process's pieces).
  const ShardingHooks& hooks() const { return hooks_ ? *hooks_ : SingleDeviceHooks(); }
  void set_hooks(std::shared_ptr<const ShardingHooks> hooks) { hooks_ = std::move(hooks); }
  // The installed hooks (null: single-device), to share with another store.
  const std::shared_ptr<const ShardingHooks>& hooks_ptr() const { return hooks_; }

 private:
  std::vector<Param> params_;
  std::shared_ptr<const ShardingHooks> hooks_;
};

// Stores every float32 CPU parameter of two dimensions that `which`
// selects (a kernel [K, N]) as the transpose of a row-major [N, K]: the
// same shape and values, strides {1, K}. For inference (`t5xx infer|eval`
// decoding a few rows): a decode step's matrix-vector products then read
// each output column's weights as one contiguous row (skinny_matmul.h,
// which gives the same bits for both layouts), faster than streaming
// [K, N] row by row. Parameters that require gradients, are already so laid
// out, or are a partitioner's pieces (a local shape other than the hooks'
// GlobalShape) are left alone. Returns how many were re-laid out.
int64_t StoreKernelsTransposed(ParamStore& params,
                               const std::function<bool(const Param&)>& which);

}  // namespace t5xx::models
