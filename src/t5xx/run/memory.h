// The memory plan of a run (models/memory_plan.h) for its model, optimizer,
// per-process batch and lengths, and the check that it fits this machine:
// done before any parameter is allocated (estimated) and again with the
// parameters' exact shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/models/base_model.h"
#include "t5xx/models/memory_plan.h"
#include "t5xx/run/train_config.h"

namespace t5xx::run {

// models::MemoryPlan for the configured model, optimizer, per-process batch
// (the global batch over the `data_parallel` replicas, divided by
// num_microbatches: one microbatch's activations are alive at a time) and
// lengths (model.ModelFeatureLengths); `param_shapes` (this process's pieces
// of the parameters) empty: parameters, gradients and optimizer state count
// 0. Activations are counted at the model's full width, also when the
// 'model' axis splits heads and MLP units (an upper bound there).
models::MemoryPlan PlanMemory(const TrainSetup& s, const models::BaseTransformerModel& model,
                              const std::vector<std::vector<int64_t>>& param_shapes,
                              int64_t data_parallel = 1);

// Throws t5xx::Error (with what to lower) unless plan.total() - allocated
// fits in `available` bytes (< 0: unknown, no check).
void CheckMemoryPlan(const models::MemoryPlan& plan, int64_t available, int64_t allocated);

// The plan before allocation: activations plus parameters and gradients
// estimated from the network config (half the forward matmul FLOPs of one
// token, models/flops.h: every weight a token's forward pass multiplies),
// so an impossible size never reaches the allocator. Returns why it does
// not fit `device` (the host's available memory on the CPU, a GPU's total
// memory; run/device_setup.h) as CheckMemoryPlan's message, or nullopt.
std::optional<std::string> MemoryProblemBeforeAllocation(const TrainSetup& s,
                                                         const models::BaseTransformerModel& model,
                                                         at::Device device = at::kCPU);

}  // namespace t5xx::run
