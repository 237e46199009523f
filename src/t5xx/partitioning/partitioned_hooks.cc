// See partitioned_hooks.h.
#include "t5xx/partitioning/partitioned_hooks.h"

#include "t5xx/models/networks/layers.h"
#include "t5xx/partitioning/differentiable_collectives.h"
#include "t5xx/util/error.h"

namespace t5xx::partitioning {
namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

PartitionedHooks::PartitionedHooks(const models::ParamStore& params,
                                   std::map<std::string, PartitionSpec> specs, Mesh mesh,
                                   MeshCoordinates coords,
                                   std::shared_ptr<const Communicator> data_group,
                                   std::shared_ptr<const Communicator> model_group,
                                   bool reshard_after_forward)
    : specs_(std::move(specs)),
      mesh_(mesh),
      coords_(coords),
      data_group_(std::move(data_group)),
      model_group_(std::move(model_group)),
      units_(params, specs_, data_group_, reshard_after_forward) {
  for (const models::Param& p : params.params()) {
    const PartitionSpec& spec = SpecOf(p);
    if (EndsWith(p.name, ".query.kernel") && OnModel(spec, 1)) heads_split_ = true;
    for (size_t d = 0; d < p.axes.size(); ++d) {
      if (p.axes[d] == "vocab") {
        vocab_size_ = GlobalShapeOf(p.value.sizes().vec(), spec, mesh_)[d];
      }
    }
  }
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
    const bool heads = p.axes[d] == "heads";
    if (OnModel(spec, d) && !(heads && heads_split_)) {
      w = GatherReplicated(w, static_cast<int64_t>(d), *model_group_);
    } else if (!OnModel(spec, d) && heads && heads_split_) {
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

at::Tensor PartitionedHooks::Dense(const at::Tensor& x, const models::Param& kernel,
                                   at::ScalarType dtype) const {
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
  return OnModel(spec, 0) ? ReduceFromGroup(y, model) : y;
}

at::Tensor PartitionedHooks::Embed(const models::Param& table, const at::Tensor& tokens) const {
  const PartitionSpec& spec = SpecOf(table);
  at::Tensor w = GatherData(table);
  if (OnModel(spec, 1)) w = GatherReplicated(w, 1, *model_group_);
  if (!OnModel(spec, 0)) return at::embedding(w, tokens);
  // Vocabulary-parallel embedding: the rows this process holds, zero
  // elsewhere, summed over the pieces.
  const int64_t rows = w.size(0);
  const at::Tensor local = tokens - coords_.model * rows;
  const at::Tensor mine = at::logical_and(local >= 0, local < rows);
  const at::Tensor looked_up =
      at::embedding(w, local.clamp(0, rows - 1)) * mine.unsqueeze(-1).to(w.scalar_type());
  return ReduceFromGroup(looked_up, *model_group_);
}

at::Tensor PartitionedHooks::Attend(const at::Tensor& x, const models::Param& table) const {
  const PartitionSpec& spec = SpecOf(table);
  const at::Tensor w = GatherData(table);
  const Communicator& model = *model_group_;
  if (OnModel(spec, 1)) {  // the embedding dimension split: row-parallel
    const at::Tensor piece = x.size(-1) == w.size(1) ? x : ScatterReplicated(x, -1, model);
    const at::Tensor logits = at::matmul(piece, w.t());
    return OnModel(spec, 0) ? logits : ReduceFromGroup(logits, model);
  }
  if (OnModel(spec, 0)) return at::matmul(CopyToGroup(x, model), w.t());  // vocabulary slice
  return at::matmul(x, w.t());
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
