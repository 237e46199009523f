// Where a parameter meets an activation: the few operations through which
// model code uses its parameters, so that the partitioner -- not the model --
// decides how sharded parameters compute and which collectives complete them.
//
// t5x's model code declares logical axes (param_with_axes) and constrains
// activations (with_sharding_constraint); GSPMD then inserts the
// communication. t5xx runs eagerly, so the same decision points are explicit
// calls: a dense kernel applied to an activation, an embedding lookup, an
// attention to the embedding, a parameter used elementwise, a layer norm and
// a dropout (whose activations may be split), and the cross-entropy over the
// vocabulary. ShardingHooks is single-device math;
// the partitioner installs its own (partitioning/partitioned_hooks.h) on
// the ParamStore of a sharded run, and layers read as single-device code
// either way. No collective is named here.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "t5xx/models/losses.h"

namespace t5xx::models {

struct Param;

class ShardingHooks {
 public:
  virtual ~ShardingHooks() = default;

  // The tensor to compute with when `p` is used elementwise or as a table
  // (norm scales, the relative position table): whole, or split the way the
  // activations it meets are split (e.g. the heads of a relative position
  // table when attention heads are split).
  virtual at::Tensor Weight(const Param& p) const;

  // x @ kernel for a DenseGeneral kernel [in, out] (MatmulIn(x, kernel,
  // dtype), layers.h). x: [..., in], or this process's slice of `in` when
  // the activation is split along it. Returns [..., out], or a slice of
  // `out` when the kernel's output dimension is split.
  virtual at::Tensor Dense(const at::Tensor& x, const Param& kernel, at::ScalarType dtype) const;

  // Dense(x, kernel, dtype) for each of `kernels`, all reading the same x
  // (self-attention's query, key and value; the gated MLP's input
  // projections): a partitioner may then complete x once for all of them.
  virtual std::vector<at::Tensor> DenseEach(const at::Tensor& x,
                                            const std::vector<const Param*>& kernels,
                                            at::ScalarType dtype) const;

  // t5x's LayerNorm (RmsNorm, layers.h) of x [..., E] with the norm scale
  // `scale` [E]; x and the result may be this process's slice of E when the
  // partitioner splits the activations' 'embed' dimension.
  virtual at::Tensor RmsNorm(const at::Tensor& x, const Param& scale, double epsilon,
                             at::ScalarType dtype) const;

  // Dropout (layers.h) of x whose last dimension has the logical axis
  // `axis` ("embed", "mlp"): where x holds a slice of that dimension, the
  // mask one process would draw for the whole, sliced (DropoutOfSlice).
  virtual at::Tensor Dropout(const at::Tensor& x, const std::string& axis, double rate,
                             bool train, at::Generator* rng,
                             bool broadcast_over_length = true) const;

  // Rows of an embedding table [vocab, E] for int64 tokens [...]:
  // at::embedding(table, tokens), float32 [..., E].
  virtual at::Tensor Embed(const Param& table, const at::Tensor& tokens) const;

  // x @ table^T for a table [vocab, E] (flax Embed.attend), float32 x
  // [..., E] -> [..., vocab] or a slice of the vocabulary.
  virtual at::Tensor Attend(const at::Tensor& x, const Param& table) const;

  // The global shape of `p` (its local tensor may be a slice).
  virtual std::vector<int64_t> GlobalShape(const Param& p) const;

  // This process's index along the 'model' axis (tensor parallelism): a
  // layer's outputs split over it are contiguous blocks in this order, e.g.
  // the attention heads of Dense(x, query kernel). 0 without one.
  virtual int64_t ModelIndex() const { return 0; }

  // How the vocabulary dimension of `logits` [..., V_local] is split, for
  // the loss (losses.h VocabPartition); a whole vocabulary (the default)
  // gives an unset partition.
  virtual VocabPartition VocabPartitionOf(const at::Tensor& logits) const;
};

// The single-device hooks every ParamStore starts with.
const ShardingHooks& SingleDeviceHooks();

}  // namespace t5xx::models
