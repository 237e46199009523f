// The memory plan of a run (models/memory_plan.h) -- and the activation
// elements of its communication plan -- for its model, optimizer,
// per-process batch, lengths and layout, and the check that it fits: done
// from the parameters' specs (names, global shapes, logical axes; nothing
// allocated) and the partitioner's mesh and rules, so it plans any mesh,
// also one far larger than this machine (`t5xx model_info --num_devices`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/models/base_model.h"
#include "t5xx/models/memory_plan.h"
#include "t5xx/partitioning/logical_axis_rules.h"
#include "t5xx/partitioning/mesh.h"
#include "t5xx/run/train_config.h"

namespace t5xx::run {

// The plan of one process of `mesh` under `rules`: parameters, gradients,
// optimizer slots and the checkpoint copy from the boxes of `specs` (every
// box of a parameter has the same shape); activations for the global batch
// over the 'data' replicas, divided by num_microbatches (one microbatch's
// activations are alive at a time), split as the rules split 'heads',
// 'mlp' and 'vocab' over 'model'; gathered weights (parameters split over
// 'data': ZeRO-3): twice the whole weights of the largest layer and the
// largest weight outside the layers (the gathered weights and their
// gradients before the reduce-scatter: the tensor cache keeps a block of
// each size), or with reshard_after_forward false every such weight whole
// plus those gradients; the start-up transient: the largest
// parameter that is split (it is made whole once); gradient buckets (more
// than one data replica): the gradients of the parameters not split over
// 'data', once (pjit_partitioner.h). Throws t5xx::Error (from
// the rules or the mesh) when a parameter cannot be split on `mesh`.
models::MemoryPlan PlanMemory(const TrainSetup& s, const models::BaseTransformerModel& model,
                              const std::vector<models::ParamSpec>& specs,
                              const partitioning::Mesh& mesh,
                              const partitioning::LogicalAxisRules& rules);

// A layout a run could use on `processes` processes, with its plan.
struct LayoutPlan {
  partitioning::Mesh mesh;
  bool zero3 = false;  // parameter_partitioning_dims = 2
  models::MemoryPlan plan;
  // t5x's standard rules of this layout (parameter_partitioning_dims 2 for
  // ZeRO-3, activation_partitioning_dims 1).
  partitioning::LogicalAxisRules Rules() const;
  // "ZeRO-3 4x1" (data x model).
  std::string Name() const;
  // "ZeRO-3 on 4 processes (4x1, data x model): 1.52 GiB per process".
  std::string Describe() const;
};

// Every layout of t5x's standard rules on `processes` processes (each
// divisor of it as num_partitions, with parameter_partitioning_dims 1 and
// 2), ordered by peak; those whose batch or parameters do not split are
// left out, each with why in `left_out` when given.
std::vector<LayoutPlan> PlanLayouts(const TrainSetup& s, const models::BaseTransformerModel& model,
                                    const std::vector<models::ParamSpec>& specs, int64_t processes,
                                    std::vector<std::string>* left_out = nullptr);

// A of partitioning/communication_plan.h for the run's global batch and
// model lengths: the elements Megatron-style tensor parallelism
// all-reduces per step.
double TensorParallelActivationElements(const TrainSetup& s,
                                        const models::BaseTransformerModel& model);

// Layers of the network (encoder + decoder); beyond kMaxListedLayers the
// plan estimates the parameters instead of listing them (listing takes
// about 1.6 ms a layer).
int64_t TotalLayers(const TrainSetup& s);
constexpr int64_t kMaxListedLayers = 4096;

// Throws t5xx::Error unless plan.peak() - allocated fits in `available`
// bytes (< 0: unknown, no check): names what to lower, and the `layouts`
// that fit.
void CheckMemoryPlan(const models::MemoryPlan& plan, int64_t available, int64_t allocated,
                     const std::vector<LayoutPlan>& layouts = {});

// The layouts of PlanLayouts on the fewest processes -- `processes`, twice
// as many, four times, ... up to 64 times -- of which some fit `available`
// (after `allocated`); empty when none does.
std::vector<LayoutPlan> LayoutsThatFit(const TrainSetup& s, const models::BaseTransformerModel& model,
                                       const std::vector<models::ParamSpec>& specs,
                                       int64_t processes, int64_t available, int64_t allocated);

// The plan before allocation, for the run's layout (num_partitions of
// `processes`, the run's rules); the parameters' specs come from the model
// without allocating (an absurd size that libtorch cannot even describe
// falls back to parameters estimated from the forward FLOPs, models/
// flops.h). Returns why it does not fit `device` (the host's available
// memory on the CPU, a GPU's total memory; run/device_setup.h) as
// CheckMemoryPlan's message, or nullopt.
std::optional<std::string> MemoryProblemBeforeAllocation(const TrainSetup& s,
                                                         const models::BaseTransformerModel& model,
                                                         at::Device device = at::kCPU,
                                                         int64_t processes = 1);

}  // namespace t5xx::run
