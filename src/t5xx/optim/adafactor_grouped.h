// Adafactor's general path for many parameters at once: the parameters
// whose updates have the same shape are stacked along a new leading dim and
// updated by one sequence of whole-tensor ATen ops per group, instead of
// ~30-50 ops (and as many kernel launches on a GPU) per parameter. Same
// formulas and the same order of operations as the per-parameter general
// path (GeneralUpdate in adafactor.cc, adafactor.h's formulas); the leading
// dim acts as one more BATCH dim, so every statistic stays per parameter.
//
// A group: parameters of the same local shape, dtype and device, the same
// factoring plan (factored or not, ROW/COLUMN/averaging dims), and every
// statistic local to this process (Reducer::SumIsLocal for each of those
// dim sets: replicated parameters, or any parameter on one process); at
// most kMaxGroupElements elements per stacked array (bigger groups are
// split), which bounds the update's temporaries. The rest -- parameters
// sharded along a statistic's dims, scanned stacks averaged whole -- keep
// the per-parameter path.
//
// Per group and step: the gradients stacked (one op), the parameters
// stacked (one op), the update, the new parameters copied back
// (compat::ForeachCopy: one multi-tensor op on libtorch >= 2.2, one copy_
// per parameter before). The slots live stacked: at the group's first step
// its v_row/v_col/v/m buffers are allocated [n, ...] and each parameter's
// AdafactorParamState holds views into them (checkpoints read and restore
// through those views, in place), so slots are updated without copies.
//
// Step-dependent scalars (learning rate, decay, mixing, weight decay) reach
// the ops as 0-d tensors on the parameters' device (DeviceStepScalars), set
// by one host-to-device copy per step: no op bakes a step's value in, as a
// captured CUDA graph needs. Constants of the configuration (epsilons,
// beta1, thresholds) stay plain scalars.
//
// Agreement with the per-parameter path: the same elementwise arithmetic
// in float32; sums over a stacked array's member dims may be added in
// another order by ATen's reductions (tests/optim/adafactor_grouped_test.cc
// measures it: float32 rounding).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/models/param_store.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/adafactor_fused.h"  // AdafactorStepScalars

namespace t5xx::optim {

// The largest stacked array of a group, in elements (2^25: 128 MiB of
// float32); a bigger group is split into groups under it.
inline constexpr int64_t kMaxGroupElements = int64_t{1} << 25;

// A step's scalars on a device: float32 [4] = learning rate, decay, mixing,
// 1 - weight decay (1 when there is none), as the per-parameter path rounds
// them (learning rate and 1 - weight decay computed in double, then
// float32). Set() fills a host tensor (pinned when the device is a GPU) and
// copies it to the device without blocking; the tensors below are 0-d views
// of the device copy.
class DeviceStepScalars {
 public:
  void Set(const AdafactorStepScalars& k, at::Device device);
  at::Tensor learning_rate() const { return device_[0]; }
  at::Tensor decay() const { return device_[1]; }
  at::Tensor mixing() const { return device_[2]; }
  at::Tensor keep() const { return device_[3]; }  // 1 - weight decay

 private:
  at::Tensor host_, device_;
};

// One parameter of a group.
struct GroupMember {
  models::Param* param = nullptr;
  at::Tensor grad;  // float32, the parameter's shape
  AdafactorParamState* state = nullptr;
};

// A group with its stacked slot buffers (undefined until its first step).
struct AdafactorGroup {
  std::vector<size_t> members;  // indices into the ParamStore, ascending
  at::Tensor v_row, v_col, v, m;
};

// What Adafactor keeps between steps for its grouped updates: the groups,
// the candidates they were made from (remade when those change) and the
// step scalars' device buffer.
struct AdafactorGroups {
  std::vector<size_t> candidates;
  std::vector<AdafactorGroup> groups;
  DeviceStepScalars scalars;
};

// Whether parameter `p` (state `s`) may join a group: its statistics are
// all local (reducer.SumIsLocal), it is not a scanned stack averaged whole,
// it has at least one element, and skip_nan_updates is off or on (both
// work). Decided from the plan and the reducer, as every process decides.
bool GroupableParam(const AdafactorConfig& config, const models::Param& p,
                    const AdafactorParamState& s, const Reducer& reducer);

// Groups of the parameters `candidates` (ParamStore indices in order; each
// GroupableParam): same shape, dtype, device and plan, split so that no
// stacked array exceeds max_elements (a parameter bigger than that is a
// group of its own). Groups in order of their first member; members in
// index order.
std::vector<AdafactorGroup> MakeAdafactorGroups(
    const std::vector<size_t>& candidates, const models::ParamStore& params,
    const std::map<std::string, AdafactorParamState>& states,
    int64_t max_elements = kMaxGroupElements);

// One Adafactor step of a group, in place (parameters and slots). `members`
// are the group's parameters in order; `grad_scale` (0-d float32 on the
// device) multiplies every gradient first when defined (global-norm
// clipping); `weight_decay` says whether the step applies one (keep()).
// On the group's first step, its slot buffers are made from the members'
// current slots and the members' states pointed into them.
void GroupedAdafactorUpdate(const AdafactorConfig& config, const DeviceStepScalars& scalars,
                            bool weight_decay, const at::Tensor& grad_scale,
                            const std::vector<GroupMember>& members, AdafactorGroup& group);

}  // namespace t5xx::optim
