// See partitioned_hooks.h.
#include "t5xx/partitioning/partitioned_hooks.h"

#include "t5xx/models/networks/layers.h"
#include "t5xx/partitioning/collectives/differentiable_collectives.h"
#include "t5xx/partitioning/split_activations.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::partitioning {
namespace {

// x @ w^T for tied-embedding logits: float32 through MatmulIn (its few-row
// and --int8_weights paths, as on one process), other dtypes as before.
at::Tensor AttendProduct(const at::Tensor& x, const at::Tensor& w) {
  if (x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat) {
    return models::MatmulIn(x, w.t(), at::kFloat);
  }
  return at::matmul(x, w.t());
}


}  // namespace

PartitionedHooks::PartitionedHooks(const models::ParamStore& params,
                                   std::map<std::string, PartitionSpec> specs, Mesh mesh,
                                   MeshCoordinates coords,
                                   std::shared_ptr<const Communicator> data_group,
                                   std::shared_ptr<const Communicator> model_group,
                                   bool reshard_after_forward, bool split_embed)
    : specs_(std::move(specs)),
      mesh_(mesh),
      coords_(coords),
      data_group_(std::move(data_group)),
      model_group_(std::move(model_group)),
      split_embed_(split_embed && mesh.model > 1),
      units_(params, specs_, data_group_, reshard_after_forward) {
  for (const models::Param& p : params.params()) {
    const PartitionSpec& spec = SpecOf(p);
    if (EndsWith(p.name, ".query.kernel") && OnModel(spec, 1)) heads_split_ = true;
    const std::vector<int64_t> global = GlobalShapeOf(p.value.sizes().vec(), spec, mesh_);
    for (size_t d = 0; d < p.axes.size(); ++d) {
      if (p.axes[d] == "vocab") vocab_size_ = global[d];
      if (p.axes[d] == "embed") embed_size_ = global[d];
      if (p.axes[d] == "mlp" && OnModel(spec, d)) mlp_split_ = true;
    }
  }
  T5XX_CHECK(!split_embed_ || embed_size_ % mesh_.model == 0,
             "activation_partitioning_dims = 2 splits the activations' 'embed' (" +
                 std::to_string(embed_size_) + ") over the 'model' axis (" +
                 std::to_string(mesh_.model) + " processes), which does not divide it: choose "
                 "num_partitions dividing emb_dim, or activation_partitioning_dims = 1");
}

const PartitionSpec& PartitionedHooks::SpecOf(const models::Param& p) const {
  auto it = specs_.find(p.name);
  T5XX_CHECK(it != specs_.end(), "the partitioner has no partition spec for parameter " + p.name);
  return it->second;
}

bool PartitionedHooks::OnModel(const PartitionSpec& spec, size_t dim) const {
  return dim < spec.size() && spec[dim] && *spec[dim] == "model" && mesh_.model > 1;
}

at::Tensor PartitionedHooks::GatherData(const models::Param& p) const {
  return units_.Gathers(p) ? units_.Gathered(p) : p.value;
}

at::Tensor PartitionedHooks::Weight(const models::Param& p) const {
  const PartitionSpec& spec = SpecOf(p);
  at::Tensor w = GatherData(p);
  for (size_t d = 0; d < spec.size(); ++d) {
    // Split as the activations it meets are split, else whole.
    const bool split = (p.axes[d] == "heads" && heads_split_) ||
                       (p.axes[d] == "embed" && split_embed_);
    if (OnModel(spec, d) && !split) {
      w = GatherReplicated(w, static_cast<int64_t>(d), *model_group_);
    } else if (!OnModel(spec, d) && split) {
      w = ScatterReplicated(w, static_cast<int64_t>(d), *model_group_);
    }
  }
  return w;
}

at::Tensor PartitionedHooks::CopyToModelOnce(const at::Tensor& x) const {
  if (last_copy_in_.defined() && last_copy_in_.is_same(x) &&
      last_copy_in_._version() == x._version()) {
    return last_copy_out_;
  }
  last_copy_in_ = x;
  last_copy_out_ = CopyToGroup(x, *model_group_);
  return last_copy_out_;
}

bool PartitionedHooks::InputSplit(const at::Tensor& x, const models::Param& kernel) const {
  return split_embed_ && !OnModel(SpecOf(kernel), 0) && kernel.axes[0] == "embed" &&
         x.size(-1) * mesh_.model == embed_size_;
}

at::Tensor PartitionedHooks::CompleteOutput(const at::Tensor& y,
                                            const models::Param& kernel) const {
  const PartitionSpec& spec = SpecOf(kernel);
  const bool to_split = split_embed_ && kernel.axes.back() == "embed";
  const Communicator& model = *model_group_;
  if (OnModel(spec, 0)) return to_split ? ReduceScatterToSplit(y, -1, model) : ReduceFromGroup(y, model);
  if (to_split && !OnModel(spec, 1)) return ScatterReplicated(y, -1, model);
  return y;
}

at::Tensor PartitionedHooks::Dense(const at::Tensor& x, const models::Param& kernel,
                                   at::ScalarType dtype) const {
  if (InputSplit(x, kernel)) return DenseEach(x, {&kernel}, dtype)[0];
  const PartitionSpec& spec = SpecOf(kernel);
  T5XX_CHECK(spec.size() == 2, "Dense: kernel " + kernel.name + " is not 2-D");
  // The kernel in the matmul's dtype (MatmulIn's own cast is then the
  // identity, so this is the tensor the matmul keeps for its backward).
  const at::Tensor w = GatherData(kernel).to(dtype);
  const Communicator& model = *model_group_;
  at::Tensor y;
  if (OnModel(spec, 0)) {  // row-parallel
    const at::Tensor piece = x.size(-1) == w.size(0) ? x : ScatterReplicated(x, -1, model);
    y = models::MatmulIn(piece, w, dtype);
  } else {
    const at::Tensor whole = x.size(-1) == w.size(0) ? x : GatherReplicated(x, -1, model);
    // Column-parallel: the output is this process's slice.
    y = models::MatmulIn(OnModel(spec, 1) ? CopyToModelOnce(whole) : whole, w, dtype);
  }
  units_.ReshardAfterForward(kernel, w, y);
  return CompleteOutput(y, kernel);
}

std::vector<at::Tensor> PartitionedHooks::DenseEach(
    const at::Tensor& x, const std::vector<const models::Param*>& kernels,
    at::ScalarType dtype) const {
  bool split = !kernels.empty();
  for (const models::Param* k : kernels) split = split && InputSplit(x, *k);
  if (!split) return ShardingHooks::DenseEach(x, kernels, dtype);
  // The split residual stream into column-parallel kernels: one all-gather
  // for all of them; the gathered copy the matmuls keep is dropped until
  // the backward pass reaches them.
  const at::Tensor whole = GatherFromSplit(x, -1, *model_group_).to(dtype);
  std::vector<at::Tensor> ys;
  for (const models::Param* k : kernels) {
    const at::Tensor w = GatherData(*k).to(dtype);
    const at::Tensor y = models::MatmulIn(whole, w, dtype);
    units_.ReshardAfterForward(*k, w, y);
    ys.push_back(CompleteOutput(y, *k));
  }
  ReleaseUntilBackward(whole, x, ys, model_group_);
  return ys;
}

at::Tensor PartitionedHooks::RmsNorm(const at::Tensor& x, const models::Param& scale,
                                     double epsilon, at::ScalarType dtype) const {
  if (!split_embed_) return ShardingHooks::RmsNorm(x, scale, epsilon, dtype);
  const at::Tensor w = Weight(scale);  // this process's piece of 'embed'
  const at::Tensor xf = x.to(at::kFloat);
  if (dtype == at::kFloat) return SplitRmsNorm(xf, w, epsilon, embed_size_, *model_group_);
  // t5x: the normalized x cast to dtype, times the scale cast to dtype.
  return SplitRmsNorm(xf, at::Tensor(), epsilon, embed_size_, *model_group_).to(dtype) *
         w.to(dtype);
}

at::Tensor PartitionedHooks::Dropout(const at::Tensor& x, const std::string& axis, double rate,
                                     bool train, at::Generator* rng,
                                     bool broadcast_over_length) const {
  const bool split = (axis == "embed" && split_embed_) || (axis == "mlp" && mlp_split_);
  if (!split) return models::Dropout(x, rate, train, rng, broadcast_over_length);
  return models::DropoutOfSlice(x, x.size(-1) * mesh_.model, coords_.model * x.size(-1), rate,
                                train, rng, broadcast_over_length);
}

at::Tensor PartitionedHooks::Embed(const models::Param& table, const at::Tensor& tokens) const {
  const PartitionSpec& spec = SpecOf(table);
  const Communicator& model = *model_group_;
  at::Tensor w = GatherData(table);
  if (OnModel(spec, 1) && !split_embed_) w = GatherReplicated(w, 1, model);
  if (!OnModel(spec, 0)) {
    const at::Tensor rows = at::embedding(w, tokens);
    return split_embed_ && !OnModel(spec, 1) ? ScatterReplicated(rows, -1, model) : rows;
  }
  // Vocabulary-parallel embedding: the rows this process holds, zero
  // elsewhere, summed over the pieces.
  const int64_t rows = w.size(0);
  const at::Tensor local = tokens - coords_.model * rows;
  const at::Tensor mine = at::logical_and(local >= 0, local < rows);
  const at::Tensor looked_up =
      at::embedding(w, local.clamp(0, rows - 1)) * mine.unsqueeze(-1).to(w.scalar_type());
  return split_embed_ ? ReduceScatterToSplit(looked_up, -1, model)
                      : ReduceFromGroup(looked_up, model);
}

at::Tensor PartitionedHooks::Attend(const at::Tensor& x, const models::Param& table) const {
  const PartitionSpec& spec = SpecOf(table);
  const at::Tensor w = GatherData(table);
  const Communicator& model = *model_group_;
  if (OnModel(spec, 1)) {  // the embedding dimension split: row-parallel
    const at::Tensor piece = x.size(-1) == w.size(1) ? x : ScatterReplicated(x, -1, model);
    const at::Tensor logits = AttendProduct(piece, w);
    return OnModel(spec, 0) ? logits : ReduceFromGroup(logits, model);
  }
  const bool split_in = split_embed_ && x.size(-1) != w.size(1);
  if (OnModel(spec, 0)) {  // vocabulary slice
    if (!split_in) return AttendProduct(CopyToGroup(x, model), w);
    const at::Tensor whole = GatherFromSplit(x, -1, model);
    const at::Tensor logits = AttendProduct(whole, w);
    ReleaseUntilBackward(whole, x, {logits}, model_group_);
    return logits;
  }
  return AttendProduct(split_in ? GatherReplicated(x, -1, model) : x, w);
}

std::vector<int64_t> PartitionedHooks::GlobalShape(const models::Param& p) const {
  return GlobalShapeOf(p.value.sizes().vec(), SpecOf(p), mesh_);
}

models::VocabPartition PartitionedHooks::VocabPartitionOf(const at::Tensor& logits) const {
  models::VocabPartition v;
  if (mesh_.model == 1 || vocab_size_ == 0 || logits.size(-1) == vocab_size_) return v;
  T5XX_CHECK(logits.size(-1) * mesh_.model == vocab_size_,
             "logits of width " + std::to_string(logits.size(-1)) + " are neither the vocabulary (" +
                 std::to_string(vocab_size_) + ") nor its slice over " +
                 std::to_string(mesh_.model) + " model-axis processes");
  v.vocab_size = vocab_size_;
  v.offset = coords_.model * logits.size(-1);
  std::shared_ptr<const Communicator> model = model_group_;
  v.sum = [model](const at::Tensor& t) { return ReduceFromGroup(t, *model); };
  v.max = [model](const at::Tensor& t) { return model->AllReduceMax(t); };
  return v;
}

}  // namespace t5xx::partitioning
