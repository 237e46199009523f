// The ShardingHooks (models/sharding_hooks.h) of a ParamStore whose tensors
// are this process's pieces under t5x's logical axis rules on a ('data',
// 'model') mesh: how each use of a parameter computes and which collective
// completes it (differentiable_collectives.h).
//
//  - Dimensions mapped to 'data' (parameter_partitioning_dims = 2: 'embed'
//    -> 'data', ZeRO-3) are gathered a layer at a time, ahead of use; their
//    gradients are reduce-scattered back (which also sums them over the
//    data replicas); a dense kernel's gathered copy is released when the
//    forward pass leaves its layer and gathered again for the backward pass
//    (FSDP's reshard_after_forward; off: kept from forward to backward), so
//    only the layers computing hold whole kernels (gather_units.h).
//  - A dense kernel whose output dimension is on 'model' is column-parallel
//    (Megatron's f before it, its output a slice: the attention heads, the
//    MLP hidden units, the vocabulary of the logits); one whose input
//    dimension is on 'model' is row-parallel (its input sliced if whole,
//    Megatron's g after it). An activation arriving split where the kernel
//    wants it whole is gathered.
//  - The embedding table split over the vocabulary looks up the rows it
//    holds and sums the pieces; attending to it gives vocabulary-sliced
//    logits, and the loss completes over the pieces (VocabPartitionOf).
//  - A parameter used elementwise is gathered whole over 'model', except a
//    'heads' dimension when the attention heads are split (the relative
//    position table then holds the same heads as the queries) and an
//    'embed' one when the activations' 'embed' is split.
//  - Under t5x's 2-D activation rules ('embed' -> 'model' for activations,
//    `split_embed`) the residual stream between the layers is split too
//    (split_activations.h): the embedding lookup and the row-parallel
//    outputs are reduce-scattered along 'embed' instead of all-reduced, the
//    norms sum their statistics over the pieces, column-parallel layers
//    all-gather their input and drop the gathered copy until the backward
//    pass, and dropout masks are drawn whole and sliced.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/models/param_store.h"
#include "t5xx/models/sharding_hooks.h"
#include "t5xx/partitioning/collectives/communicator.h"
#include "t5xx/partitioning/gather_units.h"
#include "t5xx/partitioning/logical_axis_rules.h"
#include "t5xx/partitioning/sharding.h"

namespace t5xx::partitioning {

class PartitionedHooks final : public models::ShardingHooks {
 public:
  // For `params` (this process's pieces) with mesh axes `specs` by t5x
  // path; data_group / model_group: this process's slice of each mesh axis.
  PartitionedHooks(const models::ParamStore& params, std::map<std::string, PartitionSpec> specs,
                   Mesh mesh, MeshCoordinates coords,
                   std::shared_ptr<const Communicator> data_group,
                   std::shared_ptr<const Communicator> model_group,
                   bool reshard_after_forward = true, bool split_embed = false);

  at::Tensor Weight(const models::Param& p) const override;
  at::Tensor Dense(const at::Tensor& x, const models::Param& kernel,
                   at::ScalarType dtype) const override;
  std::vector<at::Tensor> DenseEach(const at::Tensor& x,
                                    const std::vector<const models::Param*>& kernels,
                                    at::ScalarType dtype) const override;
  at::Tensor RmsNorm(const at::Tensor& x, const models::Param& scale, double epsilon,
                     at::ScalarType dtype) const override;
  at::Tensor Dropout(const at::Tensor& x, const std::string& axis, double rate, bool train,
                     at::Generator* rng, bool broadcast_over_length) const override;
  at::Tensor Embed(const models::Param& table, const at::Tensor& tokens) const override;
  at::Tensor Attend(const at::Tensor& x, const models::Param& table) const override;
  std::vector<int64_t> GlobalShape(const models::Param& p) const override;
  int64_t ModelIndex() const override { return coords_.model; }
  models::VocabPartition VocabPartitionOf(const at::Tensor& logits) const override;
  // The forward pass of a train step ended (GatherUnits::EndForward).
  void EndForward() const { units_.EndForward(); }
  // The gradients of ZeRO-3's pieces arrive (GatherUnits::FinishGradients).
  void FinishGradients() const { units_.FinishGradients(); }

 private:
  const PartitionSpec& SpecOf(const models::Param& p) const;
  // The parameter with its 'data' dimensions gathered (ZeRO-3).
  at::Tensor GatherData(const models::Param& p) const;
  bool OnModel(const PartitionSpec& spec, size_t dim) const;
  // Whether x arrives as this process's slice of the kernel's whole input
  // dimension (the split residual stream meeting a kernel that reads it
  // whole).
  bool InputSplit(const at::Tensor& x, const models::Param& kernel) const;
  // A row-parallel (or whole) output completed: summed over the model
  // group, and under split_embed, when its axis is 'embed', left split.
  at::Tensor CompleteOutput(const at::Tensor& y, const models::Param& kernel) const;
  // Megatron's f on `x`, once per activation: the query, key and value
  // kernels (and the gated MLP's wi_0 and wi_1) read the same input, so
  // their input gradients are summed locally and all-reduced once.
  at::Tensor CopyToModelOnce(const at::Tensor& x) const;

  std::map<std::string, PartitionSpec> specs_;
  Mesh mesh_;
  MeshCoordinates coords_;
  std::shared_ptr<const Communicator> data_group_;
  std::shared_ptr<const Communicator> model_group_;
  // The last CopyToModelOnce input (held, so its address cannot be reused)
  // and output. A train step runs on one thread.
  mutable at::Tensor last_copy_in_, last_copy_out_;
  bool heads_split_ = false;  // attention's query kernels split their heads
  bool mlp_split_ = false;    // the MLP's hidden units are split over 'model'
  bool split_embed_ = false;  // the activations' 'embed' is split over 'model'
  int64_t embed_size_ = 0;    // the global 'embed' dimension
  GatherUnits units_;  // ZeRO-3's gathers
  int64_t vocab_size_ = 0;    // the global vocabulary (the embedding's rows)
};

}  // namespace t5xx::partitioning
