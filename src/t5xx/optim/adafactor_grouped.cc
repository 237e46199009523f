// Adafactor's general path over stacked parameter groups -- the
// implementation of adafactor_grouped.h.
#include "t5xx/optim/adafactor_grouped.h"

#include "t5xx/optim/adafactor_math.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "t5xx/util/torch_compat.h"

namespace t5xx::optim {
namespace {

// Dims of a member shifted past the stacked array's leading member dim.
std::vector<int64_t> Shifted(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d + 1);
  return out;
}

// ShardedMean (sharded_statistics.h) of every member at once, for
// statistics that are local (GroupableParam): sum over the member dims
// `dims`, divided by a float32 0-d count on x's device, as ShardedMean
// divides. Empty dims: x itself, as jnp.mean(x, axis=()).
at::Tensor GroupMean(const at::Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  if (dims.empty()) return x;
  const std::vector<int64_t> shifted = Shifted(dims);
  const at::Tensor sum = x.sum(shifted, keepdim);
  int64_t n = 1;
  for (int64_t d : shifted) n *= x.size(d);
  return sum / at::scalar_tensor(static_cast<double>(n), sum.options().dtype(at::kFloat));
}

// Inserts size-1 dims at member dims `dims` (ascending) of a stacked array.
at::Tensor ExpandMemberDims(at::Tensor x, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) x = x.unsqueeze(d + 1);
  return x;
}

// Stacks the members' slot `slot` into a new [n, ...] buffer and points
// each member's slot at its row.
at::Tensor StackSlot(const std::vector<GroupMember>& members, at::Tensor AdafactorParamState::*slot) {
  std::vector<at::Tensor> rows;
  for (const GroupMember& g : members) rows.push_back(g.state->*slot);
  at::Tensor buffer = at::stack(rows);
  for (size_t i = 0; i < members.size(); ++i) {
    members[i].state->*slot = buffer.select(0, static_cast<int64_t>(i));
  }
  return buffer;
}

}  // namespace

void DeviceStepScalars::Set(const AdafactorStepScalars& k, at::Device device) {
  at::Tensor host = at::empty({4}, at::kFloat);
  float* v = host.data_ptr<float>();
  v[0] = static_cast<float>(k.learning_rate);
  v[1] = k.decay;
  v[2] = k.mixing;
  v[3] = k.weight_decay ? static_cast<float>(1.0 - *k.weight_decay) : 1.0f;
  if (!device_.defined() || device_.device() != device) {
    device_ = at::empty({4}, at::TensorOptions(device).dtype(at::kFloat));
  }
  if (device.is_cpu()) {
    device_.copy_(host);
  } else {
    // A fresh pinned block from libtorch's caching host allocator, which
    // keeps it until the copy has run; device_ itself stays where it is.
    device_.copy_(host.pin_memory(), /*non_blocking=*/true);
  }
  host_ = host;
}

bool GroupableParam(const AdafactorConfig& config, const models::Param& p,
                    const AdafactorParamState& s, const Reducer& reducer) {
  (void)config;
  if (s.stack_averaged || p.value.numel() == 0) return false;
  for (const std::vector<int64_t>* dims : {&s.averaging_dims, &s.row_dims, &s.col_dims}) {
    if (!dims->empty() && !reducer.SumIsLocal(ReduceContext{p.name, *dims})) return false;
  }
  return true;
}

std::vector<AdafactorGroup> MakeAdafactorGroups(
    const std::vector<size_t>& candidates, const models::ParamStore& params,
    const std::map<std::string, AdafactorParamState>& states, int64_t max_elements) {
  using Key = std::tuple<std::vector<int64_t>, at::ScalarType, std::string, bool,
                         std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>,
                         at::ScalarType>;
  std::map<Key, size_t> open;  // key -> index of the group being filled
  std::vector<AdafactorGroup> groups;
  for (size_t i : candidates) {
    const models::Param& p = params.params()[i];
    const AdafactorParamState& s = states.at(p.name);
    const Key key{p.value.sizes().vec(), p.value.scalar_type(), p.value.device().str(),
                  s.is_factored,          s.row_dims,            s.col_dims,
                  s.averaging_dims,       s.m.scalar_type()};
    auto it = open.find(key);
    const int64_t numel = p.value.numel();
    if (it != open.end()) {
      AdafactorGroup& g = groups[it->second];
      if (static_cast<int64_t>(g.members.size() + 1) * numel <= max_elements) {
        g.members.push_back(i);
        continue;
      }
    }
    open[key] = groups.size();
    groups.push_back(AdafactorGroup{{i}, {}, {}, {}, {}});
  }
  return groups;
}

void GroupedAdafactorUpdate(const AdafactorConfig& c, const DeviceStepScalars& k,
                            bool weight_decay, const at::Tensor& grad_scale,
                            const std::vector<GroupMember>& members, AdafactorGroup& group) {
  const AdafactorParamState& plan = *members.front().state;
  if (!group.v_row.defined()) {  // the group's first step: stack its slots
    group.v_row = StackSlot(members, &AdafactorParamState::v_row);
    group.v_col = StackSlot(members, &AdafactorParamState::v_col);
    group.v = StackSlot(members, &AdafactorParamState::v);
    group.m = StackSlot(members, &AdafactorParamState::m);
  }
  std::vector<at::Tensor> values, grads;
  for (const GroupMember& g : members) {
    values.push_back(g.param->value);
    grads.push_back(g.grad);
  }
  const at::Tensor param = at::stack(values);
  at::Tensor grad = at::stack(grads);
  if (grad_scale.defined()) grad = grad * grad_scale;
  auto mean = [](const at::Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
                 const std::vector<int64_t>&) { return GroupMean(x, dims, keepdim); };
  const std::optional<at::Tensor> keep =
      weight_decay ? std::optional<at::Tensor>(k.keep()) : std::nullopt;
  const AdafactorNewValues n =
      AdafactorUpdateValues(c, plan, param, grad, group.v_row, group.v_col, group.v, group.m,
                            k.learning_rate(), k.decay(), k.mixing(), keep, mean,
                            ExpandMemberDims);
  const at::Tensor &new_v_row = n.v_row, &new_v_col = n.v_col, &new_v = n.v, &new_m = n.m,
                   &new_param = n.param;
  if (plan.is_factored) {
    group.v_row.copy_(new_v_row);
    group.v_col.copy_(new_v_col);
  } else {
    group.v.copy_(new_v);
  }
  if (c.beta1) group.m.copy_(new_m);  // cast to dtype_momentum
  compat::ForeachCopy(values, new_param.unbind(0));
}

}  // namespace t5xx::optim
