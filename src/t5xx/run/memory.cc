// See memory.h.
#include "t5xx/run/memory.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <stdexcept>
#include <vector>

#include "t5xx/models/flops.h"
#include "t5xx/partitioning/communication_plan.h"
#include "t5xx/partitioning/gather_units.h"
#include "t5xx/partitioning/sharding.h"
#include "t5xx/run/device_setup.h"
#include "t5xx/util/error.h"

namespace t5xx::run {
namespace {

models::OptimizerSlots SlotsOf(const optim::OptimizerConfig& o) {
  models::OptimizerSlots slots;
  // MultiOptimizer: its parameters planned as its first optimizer's (frozen
  // ones have none: HasState).
  if (o.kind == optim::OptimizerConfig::Kind::kMulti && !o.multi.empty()) {
    return SlotsOf(o.multi.front().optimizer);
  }
  if (o.kind == optim::OptimizerConfig::Kind::kAdafactor) {
    slots.factored = o.adafactor.factored;
    slots.min_dim_size_to_factor = o.adafactor.min_dim_size_to_factor;
    slots.momentum = o.adafactor.beta1.has_value();
  } else {
    slots.kind = models::OptimizerSlots::Kind::kAdamW;
  }
  return slots;
}

// Whether parameter `name` has optimizer state: not when a MultiOptimizer's
// traversals (empty for other optimizers) leave it frozen.
// (Compiled once per traversal, reused over the parameters.)
bool HasState(const std::vector<std::vector<std::regex>>& traversals, const std::string& name) {
  if (traversals.empty()) return true;  // not a MultiOptimizer
  for (const auto& t : traversals) {
    if (optim::ParamTraversal::MatchesAny(t, name)) return true;
  }
  return false;
}

// How the activations are split over 'model' (models::ActivationSplit): an
// activation axis of the weight matmuls' outputs (heads, mlp, vocab) is
// split when every parameter dimension of that logical axis (heads and
// joined_kv for the heads) is on 'model'; the residual stream's 'embed'
// when the rules put the activations' ('batch', 'length', 'embed') embed on
// 'model' (t5x's 2-D activation rules; partitioned_hooks.h).
models::ActivationSplit SplitOf(const std::vector<models::ParamSpec>& specs,
                                const std::vector<partitioning::PartitionSpec>& mesh_specs,
                                const partitioning::Mesh& mesh,
                                const partitioning::LogicalAxisRules& rules) {
  bool heads = false, mlp = false, vocab = false;            // seen on 'model'
  bool heads_whole = false, mlp_whole = false, vocab_whole = false;  // seen elsewhere
  for (size_t i = 0; i < specs.size(); ++i) {
    for (size_t d = 0; d < specs[i].axes.size(); ++d) {
      const std::string& axis = specs[i].axes[d];
      const bool on_model = mesh_specs[i][d] && *mesh_specs[i][d] == "model";
      bool* seen = axis == "heads" || axis == "joined_kv" ? (on_model ? &heads : &heads_whole)
                   : axis == "mlp"                        ? (on_model ? &mlp : &mlp_whole)
                   : axis == "vocab"                      ? (on_model ? &vocab : &vocab_whole)
                                                          : nullptr;
      if (seen) *seen = true;
    }
  }
  const partitioning::PartitionSpec residual =
      partitioning::LogicalToMeshAxes({"batch", "length", "embed"}, rules);
  const bool embed = residual[2] && *residual[2] == "model";
  return {heads && !heads_whole ? mesh.model : 1, mlp && !mlp_whole ? mesh.model : 1,
          vocab && !vocab_whole ? mesh.model : 1, embed ? mesh.model : 1};
}

int64_t ActivationBytes(const TrainSetup& s, const models::BaseTransformerModel& model,
                        int64_t batch, const models::ActivationSplit& split) {
  const std::map<std::string, int64_t> lens =
      model.ModelFeatureLengths(s.train_dataset.task_feature_lengths);
  if (s.model.kind == ModelKind::kEncoderDecoder) {
    return models::EncoderDecoderActivationBytes(s.model.t5_config, batch,
                                                 lens.at("encoder_input_tokens"),
                                                 lens.at("decoder_target_tokens"), split);
  }
  return models::DecoderOnlyActivationBytes(s.model.decoder_only_config, batch,
                                            lens.at("decoder_target_tokens"), split);
}

double Numel(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

// "encoder.layers_3" for "encoder.layers_3.mlp.wi.kernel"; "" outside the
// layers (embeddings, final norms, logits).
}  // namespace

int64_t TotalLayers(const TrainSetup& s) {
  return s.model.kind == ModelKind::kEncoderDecoder
             ? s.model.t5_config.num_encoder_layers + s.model.t5_config.num_decoder_layers
             : s.model.decoder_only_config.num_layers;
}

models::MemoryPlan PlanMemory(const TrainSetup& s, const models::BaseTransformerModel& model,
                              const std::vector<models::ParamSpec>& specs,
                              const partitioning::Mesh& mesh,
                              const partitioning::LogicalAxisRules& rules) {
  models::MemoryPlan plan;
  std::vector<std::vector<int64_t>> shapes, boxes;
  std::vector<bool> has_state;
  std::vector<std::vector<std::regex>> traversals;
  for (const optim::MultiOptimizerPart& part : s.optimizer.multi) {
    traversals.push_back(part.traversal.Compiled());
  }
  std::vector<partitioning::PartitionSpec> mesh_specs;
  double largest_split = 0, roots_gathered = 0, all_gathered = 0, replicated_over_data = 0;
  std::map<std::string, double> gathered_by_layer;  // "decoder.layers_3" -> whole bytes
  for (const models::ParamSpec& p : specs) {
    const partitioning::PartitionSpec spec = partitioning::LogicalToMeshAxes(p.axes, rules);
    const partitioning::ShardBox box =
        partitioning::LocalShardBox(p.shape, spec, mesh, partitioning::MeshCoordinates{}, p.name);
    shapes.push_back(p.shape);
    boxes.push_back(box.shape);
    has_state.push_back(HasState(traversals, p.name));
    mesh_specs.push_back(spec);
    const double whole = 4 * Numel(p.shape), piece = 4 * Numel(box.shape);
    if (piece < whole) largest_split = std::max(largest_split, whole);
    if (partitioning::UsesAxis(spec, "data")) {
      const double gathered = piece * static_cast<double>(mesh.data);
      all_gathered += gathered;
      const std::string unit = partitioning::GatherUnits::UnitOf(p.name);
      if (partitioning::GatherUnits::IsRootUnit(unit)) {
        roots_gathered += gathered;
      } else {
        gathered_by_layer[unit] += gathered;
      }
    } else {
      replicated_over_data += piece;
    }
  }
  models::SetStateBytes(shapes, SlotsOf(s.optimizer), s.save_checkpoints, plan, boxes, has_state);
  plan.runtime = models::kRuntimeBytes;
  plan.startup_transient = models::SaturatingBytes(
      std::max(largest_split, static_cast<double>(models::kPeakMeasurementBytes)));
  double largest_layer = 0;
  for (const auto& [layer, bytes] : gathered_by_layer) largest_layer = std::max(largest_layer, bytes);
  // ZeRO-3's gathers (partitioning/gather_units.h): the root units, whole
  // for the forward pass, and about eight layers' worth at the backward
  // pass's peak -- the layer refilled and its gathered buffer, the next
  // layer's prefetch, the layer's whole gradients, their flat copy and the
  // all-to-all's receive buffer, the reduce-scatter before it still in
  // flight; without resharding, every layer stays whole from forward to
  // backward (the refill terms go). Fitted on decoder-only large.gin and
  // small dims, 2 and 4 processes (bench/memory_plan_bench.py: plan /
  // measured 0.95 on large.gin's dims, 1.01-1.06 small).
  plan.gathered_weights = models::SaturatingBytes(
      s.reshard_after_forward ? roots_gathered + 8 * largest_layer
                              : all_gathered + 6 * largest_layer);
  if (mesh.data > 1) plan.gradient_buckets = models::SaturatingBytes(replicated_over_data);
  const int64_t batch = s.train_dataset.batch_size / std::max<int64_t>(1, mesh.data) /
                        s.num_microbatches.value_or(1);
  plan.activations = ActivationBytes(s, model, batch, SplitOf(specs, mesh_specs, mesh, rules));
  return plan;
}

partitioning::LogicalAxisRules LayoutPlan::Rules() const {
  return partitioning::StandardLogicalAxisRules(1, zero3 ? 2 : 1);
}

std::string LayoutPlan::Name() const {
  return std::string(zero3 ? "ZeRO-3 " : "") + std::to_string(mesh.data) + "x" +
         std::to_string(mesh.model);
}

std::string LayoutPlan::Describe() const {
  return std::string(zero3 ? "ZeRO-3 on " : "") + std::to_string(mesh.size()) +
         (mesh.size() == 1 ? " process (" : " processes (") + std::to_string(mesh.data) + "x" +
         std::to_string(mesh.model) +
         ", data x model): " + models::FormatBytes(static_cast<double>(plan.peak())) +
         " per process";
}

double TensorParallelActivationElements(const TrainSetup& s,
                                        const models::BaseTransformerModel& model) {
  const std::map<std::string, int64_t> lens =
      model.ModelFeatureLengths(s.train_dataset.task_feature_lengths);
  const int64_t b = s.train_dataset.batch_size;
  if (s.model.kind == ModelKind::kEncoderDecoder) {
    return partitioning::TensorParallelActivationElements(
        s.model.t5_config, b, lens.at("encoder_input_tokens"), lens.at("decoder_target_tokens"));
  }
  return partitioning::TensorParallelActivationElements(s.model.decoder_only_config, b,
                                                        lens.at("decoder_target_tokens"));
}

std::vector<LayoutPlan> PlanLayouts(const TrainSetup& s, const models::BaseTransformerModel& model,
                                    const std::vector<models::ParamSpec>& specs, int64_t processes,
                                    std::vector<std::string>* left_out) {
  std::vector<int64_t> model_sizes;  // the divisors of `processes`, in O(sqrt)
  for (int64_t m = 1; m <= processes / m; ++m) {
    if (processes % m != 0) continue;
    model_sizes.push_back(m);
    if (m != processes / m) model_sizes.push_back(processes / m);
  }
  std::sort(model_sizes.begin(), model_sizes.end());
  std::vector<LayoutPlan> out;
  for (int64_t m : model_sizes) {
    for (int param_dims : {1, 2}) {
      LayoutPlan l;
      l.mesh = {processes / m, m};
      l.zero3 = param_dims == 2;
      if (l.zero3 && l.mesh.data == 1) continue;  // nothing to split over 'data'
      const std::string name = l.Name();
      if (s.train_dataset.batch_size % l.mesh.data != 0) {
        if (left_out) {
          left_out->push_back(name + ": BATCH_SIZE " + std::to_string(s.train_dataset.batch_size) +
                              " does not divide into " + std::to_string(l.mesh.data) +
                              " data replicas");
        }
        continue;
      }
      try {
        l.plan = PlanMemory(s, model, specs, l.mesh, l.Rules());
      } catch (const Error& e) {  // a dimension does not divide by this mesh
        if (left_out) left_out->push_back(name + ": " + e.what());
        continue;
      }
      out.push_back(l);
    }
  }
  std::sort(out.begin(), out.end(), [](const LayoutPlan& a, const LayoutPlan& b) {
    return a.plan.peak() < b.plan.peak();
  });
  return out;
}

void CheckMemoryPlan(const models::MemoryPlan& plan, int64_t available, int64_t allocated,
                     const std::vector<LayoutPlan>& layouts) {
  if (available < 0 || plan.peak() - allocated <= available) return;
  std::string fits;
  for (const LayoutPlan& l : layouts) {
    if (l.plan.peak() - allocated <= available) fits += (fits.empty() ? "" : "; ") + l.Describe();
  }
  throw Error("the memory plan needs " + models::FormatBytes(static_cast<double>(plan.peak())) +
              " per process at its peak (" + plan.ToString() + "; models/memory_plan.h) but only " +
              models::FormatBytes(static_cast<double>(available)) + " are available to it; " +
              (fits.empty() ? std::string()
                            : "these layouts would fit -- " + fits +
                                  " (set partitioning.PjitPartitioner.num_partitions to the "
                                  "'model' size, and for ZeRO-3 partitioning."
                                  "standard_logical_axis_rules.parameter_partitioning_dims = "
                                  "2); or ") +
              "lower train/utils.DatasetConfig.batch_size (BATCH_SIZE) or the "
              "task_feature_lengths (TASK_FEATURE_LENGTHS), raise trainer.Trainer.num_microbatches, "
              "set remat_policy = 'minimal' or 'full' on the network config, or use a smaller "
              "model");
}

std::vector<LayoutPlan> LayoutsThatFit(const TrainSetup& s, const models::BaseTransformerModel& model,
                                       const std::vector<models::ParamSpec>& specs,
                                       int64_t processes, int64_t available, int64_t allocated) {
  std::vector<LayoutPlan> out;
  for (int64_t n = processes; n <= processes * 64 && out.empty(); n *= 2) {
    for (LayoutPlan& l : PlanLayouts(s, model, specs, n)) {
      if (l.plan.peak() - allocated <= available) out.push_back(std::move(l));
    }
  }
  return out;
}

std::optional<std::string> MemoryProblemBeforeAllocation(
    const TrainSetup& s, const models::BaseTransformerModel& model, at::Device device,
    int64_t processes) {
  const int64_t available = AvailableMemoryBytes(device);
  const int64_t model_axis = std::max<int64_t>(1, s.num_partitions);
  const partitioning::Mesh mesh{std::max<int64_t>(1, processes / model_axis), model_axis};
  models::MemoryPlan plan;
  std::vector<LayoutPlan> layouts;
  try {
    if (TotalLayers(s) > kMaxListedLayers) throw std::length_error("too many layers to list");
    const std::vector<models::ParamSpec> specs = model.ParamSpecs();
    try {
      plan = PlanMemory(s, model, specs, mesh, s.logical_axis_rules);
    } catch (const Error&) {
      return std::nullopt;  // a layout problem: the partitioner reports those, all at once
    }
    if (available >= 0 && plan.peak() > available) {
      layouts = LayoutsThatFit(s, model, specs, processes, available, 0);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {
    // Too large for libtorch to describe, or too many layers to list in
    // good time: parameters estimated from the forward FLOPs of one token
    // (every weight a token multiplies), whole.
    const double param_elements =
        (s.model.kind == ModelKind::kEncoderDecoder
             ? models::EncoderDecoderForwardFlops(s.model.t5_config, 1, 1)
             : models::DecoderOnlyForwardFlops(s.model.decoder_only_config, 1)) /
        2;
    models::SetStateBytes({{models::SaturatingBytes(param_elements)}}, SlotsOf(s.optimizer),
                          s.save_checkpoints, plan);
    plan.runtime = models::kRuntimeBytes;
    plan.activations = ActivationBytes(s, model, s.train_dataset.batch_size / mesh.data, {});
  }
  try {
    CheckMemoryPlan(plan, available, /*allocated=*/0, layouts);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace t5xx::run
