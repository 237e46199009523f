// See gather_units.h.
#include "t5xx/partitioning/gather_units.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/StorageImpl.h>

#include <algorithm>
#include <deque>
#include <utility>

#include "t5xx/models/networks/remat.h"
#include "t5xx/partitioning/collectives/differentiable_collectives.h"
#include "t5xx/partitioning/released_storage.h"
#include "t5xx/util/error.h"

namespace t5xx::partitioning {
// (A named namespace: GatherUnits's members hold these types.)
namespace gather_units_detail {

constexpr size_t kNone = static_cast<size_t>(-1);

// A started all-gather of one unit's flat pieces.
struct InFlight {
  size_t unit = kNone;
  std::function<at::Tensor()> wait;
  at::Tensor Take() {
    at::Tensor g = wait();
    *this = InFlight();
    return g;
  }
  void Drop() {
    if (unit != kNone) Take();
  }
};

}  // namespace gather_units_detail
using gather_units_detail::InFlight;
using gather_units_detail::kNone;

// What the backward pass needs to gather a unit again: where its
// parameters are, and the kernels it released.
struct GatherUnits::Released {
  size_t unit = 0;
  const models::Param* base = nullptr;  // the ParamStore's first parameter
  std::vector<ReleasedStorage> kept;
};

struct GatherUnits::Unit {
  std::string name;
  std::vector<std::string> members;  // paths
  std::vector<size_t> index;         // their positions in the ParamStore
  std::vector<int64_t> dims;         // their 'data' dimensions
  int64_t numel = 0;                 // elements of its pieces
};

// One gathering of a unit in the forward pass: its whole tensors (held
// while the pass is in the unit), the pieces they came from and those
// pieces' versions, the kernels matmuls kept.
struct GatherUnits::Gathering {
  size_t unit = kNone;
  bool grad = false;
  std::vector<at::Tensor> whole;
  std::vector<at::Tensor> pieces;
  std::vector<uint32_t> versions;
  std::shared_ptr<Released> released;
  size_t order_index = kNone;  // its entry in State::order (kNone: not recorded)

  // Whether it was made from the pieces now at `base` in this grad mode.
  bool Current(const models::Param* base, const std::vector<size_t>& index, bool grad_mode) const {
    if (unit == kNone || grad != grad_mode) return false;
    for (size_t i = 0; i < pieces.size(); ++i) {
      const at::Tensor& piece = base[index[i]].value;
      if (!pieces[i].is_same(piece) || versions[i] != piece._version()) return false;
    }
    return true;
  }
};

struct GatherUnits::State {
  Gathering layer;  // the layer unit the forward pass is in
  // The root units (outside the layers), each held from its first use
  // until the forward pass ends.
  std::map<size_t, Gathering> roots;
  // Gather order of this forward pass and of the last one (in which the
  // backward pass runs), and whether each gathering released kernels.
  std::vector<size_t> order, previous_order;
  std::vector<bool> order_released, previous_released;
  size_t backward_cursor = kNone;  // previous_order position last refilled
  // Forward gathers started ahead, in order, through previous_order
  // position `ahead_through`.
  std::deque<InFlight> ahead;
  size_t ahead_through = 0;
  InFlight refill_prefetch;
  // Reduce-scatters of gradients started by the backward pass.
  struct PendingGradient {
    size_t unit;
    const models::Param* base;
    std::function<at::Tensor()> wait;
  };
  std::vector<PendingGradient> gradients;
  const models::Param* base = nullptr;  // the store of the last gathering
};

GatherUnits::GatherUnits(const models::ParamStore& params,
                         const std::map<std::string, PartitionSpec>& specs,
                         std::shared_ptr<const Communicator> data_group,
                         bool reshard_after_forward)
    : group_(std::move(data_group)),
      reshard_after_forward_(reshard_after_forward),
      state_(std::make_unique<State>()) {
  if (group_->size() == 1) return;
  std::map<std::string, size_t> by_name;
  const std::vector<models::Param>& all = params.params();
  for (size_t i = 0; i < all.size(); ++i) {
    auto it = specs.find(all[i].name);
    if (it == specs.end()) continue;
    for (size_t d = 0; d < it->second.size(); ++d) {
      if (!it->second[d] || *it->second[d] != "data") continue;
      const std::string name = UnitOf(all[i].name);
      auto [u, fresh] = by_name.emplace(name, units_.size());
      if (fresh) units_.push_back(Unit{name, {}, {}, {}});
      Unit& unit = units_[u->second];
      where_[all[i].name] = {u->second, unit.members.size()};
      unit.members.push_back(all[i].name);
      unit.index.push_back(i);
      unit.dims.push_back(static_cast<int64_t>(d));
      unit.numel += all[i].value.numel();
      largest_unit_ = std::max(largest_unit_, unit.numel);
    }
  }
}

GatherUnits::~GatherUnits() = default;

std::string GatherUnits::UnitOf(const std::string& path) {
  const std::string layers = ".layers_";
  size_t at = path.find(layers);
  if (at != std::string::npos) {
    const size_t end = path.find('.', at + layers.size());
    return end == std::string::npos ? path : path.substr(0, end);
  }
  at = path.rfind('.');
  return at == std::string::npos ? path : path.substr(0, at);
}

bool GatherUnits::IsRootUnit(const std::string& unit) {
  return unit.find(".layers_") == std::string::npos;
}

bool GatherUnits::Gathers(const models::Param& p) const { return where_.count(p.name) > 0; }

namespace {

// The unit's pieces, found beside `p` (its position `index` in the store).
std::vector<at::Tensor> PiecesOf(const models::Param* base, const std::vector<size_t>& index) {
  std::vector<at::Tensor> pieces;
  for (size_t i : index) pieces.push_back(base[i].value);
  return pieces;
}

}  // namespace

at::Tensor GatherUnits::Gathered(const models::Param& p) const {
  const auto [u, m] = where_.at(p.name);
  const Unit& unit = units_[u];
  const models::Param* base = &p - unit.index[m];
  State& s = *state_;
  const bool grad = at::GradMode::is_enabled();
  const bool root = IsRootUnit(unit.name);
  Gathering& slot = root ? s.roots[u] : s.layer;
  if (slot.unit == u && slot.Current(base, unit.index, grad)) return slot.whole[m];
  for (size_t i = 0; i < unit.members.size(); ++i) {
    T5XX_CHECK(base[unit.index[i]].name == unit.members[i],
               "ZeRO-3 gather of " + p.name + ": parameter " + unit.members[i] +
                   " is not where the partitioner placed it (a ParamStore other than the one "
                   "its hooks were installed on?)");
  }
  s.base = base;
  if (!root) Leave(s.layer);
  slot = Gathering();
  at::Tensor gathered;
  const bool backward = models::Recomputing();
  if (backward && s.refill_prefetch.unit == u) {
    gathered = s.refill_prefetch.Take();
  } else if (!backward && !s.ahead.empty() && s.ahead.front().unit == u) {
    gathered = s.ahead.front().Take();
    s.ahead.pop_front();
  } else {
    DropPrefetches();
  }
  slot.pieces = PiecesOf(base, unit.index);
  // One reduce-scatter in flight beside the backward pass: the one before
  // is finished before this one's buffers (a unit's whole size) are made.
  auto sink = std::make_shared<FlatGradientSink>();
  sink->before_start = [this] { FinishGradients(); };
  sink->deliver = [this, u, base](std::function<at::Tensor()> wait) {
    state_->gradients.push_back(State::PendingGradient{u, base, std::move(wait)});
  };
  slot.whole = GatherFlatShardsForCompute(slot.pieces, unit.dims, *group_, gathered, sink);
  slot.unit = u;
  slot.grad = grad;
  for (const at::Tensor& piece : slot.pieces) slot.versions.push_back(piece._version());
  slot.released = std::make_shared<Released>();
  slot.released->unit = u;
  slot.released->base = base;
  if (backward) {
    // A remat block recomputed in the backward pass: start the next one's.
    PrefetchBefore(u, base, /*released_only=*/false);
    return slot.whole[m];
  }
  // Forward: remember the order; start the gather the last step made next.
  if (s.order.size() < 8 * units_.size() + 8) {
    s.order.push_back(u);
    s.order_released.push_back(false);
    const size_t k = s.order.size() - 1;
    slot.order_index = k;
    if (k < s.previous_order.size() && s.previous_order[k] == u) PrefetchAfter(k, base);
  }
  return slot.whole[m];
}

void GatherUnits::PrefetchAfter(size_t k, const models::Param* base) const {
  State& s = *state_;
  int64_t in_flight = 0;
  for (const InFlight& f : s.ahead) in_flight += units_[f.unit].numel;
  for (size_t j = std::max(k + 1, s.ahead_through + 1);
       j < s.previous_order.size() && in_flight < largest_unit_; ++j) {
    const size_t next = s.previous_order[j];
    s.ahead.emplace_back();
    s.ahead.back().unit = next;
    s.ahead.back().wait = StartGather(next, base);
    s.ahead_through = j;
    in_flight += units_[next].numel;
  }
}

std::function<at::Tensor()> GatherUnits::StartGather(size_t unit,
                                                     const models::Param* base) const {
  return group_->StartAllGather(FlattenPieces(PiecesOf(base, units_[unit].index)));
}

GatherUnits::Gathering* GatherUnits::Holding(size_t unit) const {
  State& s = *state_;
  if (!IsRootUnit(units_[unit].name)) return s.layer.unit == unit ? &s.layer : nullptr;
  const auto it = s.roots.find(unit);
  return it != s.roots.end() && it->second.unit == unit ? &it->second : nullptr;
}

void GatherUnits::DropPrefetches() const {
  State& s = *state_;
  for (InFlight& f : s.ahead) f.Drop();
  s.ahead.clear();
  s.ahead_through = 0;
  s.refill_prefetch.Drop();
}

void GatherUnits::Leave(Gathering& g) const {
  State& s = *state_;
  // Under reshard_after_forward the kernels kept by its matmuls go.
  if (g.unit != kNone && g.grad && g.released) {
    for (const ReleasedStorage& k : g.released->kept) k.Release();
    if (!g.released->kept.empty() && g.order_index < s.order_released.size()) {
      s.order_released[g.order_index] = true;
    }
  }
  g = Gathering();
}

void GatherUnits::ReshardAfterForward(const models::Param& p, const at::Tensor& kept,
                                      const at::Tensor& y) const {
  if (!reshard_after_forward_ || !at::GradMode::is_enabled() || !y.requires_grad()) return;
  const auto it = where_.find(p.name);
  if (it == where_.end()) return;
  Gathering* held = Holding(it->second.first);
  if (!held || !held->released) return;
  Gathering& g = *held;
  if (!ReleasedStorage::Releasable(kept)) return;
  g.released->kept.emplace_back(kept, it->second.second);
  std::shared_ptr<Released> released = g.released;
  y.register_hook([this, released](const at::Tensor&) { Refill(*released); });
}

void GatherUnits::Refill(const Released& r) const {
  bool needed = false;
  for (const ReleasedStorage& k : r.kept) needed = needed || k.IsReleased();
  if (!needed) return;
  State& s = *state_;
  const Unit& unit = units_[r.unit];
  at::Tensor gathered;
  if (s.refill_prefetch.unit == r.unit) {
    gathered = s.refill_prefetch.Take();
  } else {
    s.refill_prefetch.Drop();
    gathered = StartGather(r.unit, r.base)();
  }
  // Each released kernel is written straight from the gathered buffer
  // (no whole copy of the unit in between).
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i : unit.index) shapes.push_back(r.base[i].value.sizes().vec());
  const std::vector<at::Tensor> by_rank =
      GatheredPiecesByRank(gathered, shapes, group_->size());
  for (const ReleasedStorage& k : r.kept) k.Refill(by_rank[k.member()], unit.dims[k.member()]);
  PrefetchBefore(r.unit, r.base, /*released_only=*/true);
}

void GatherUnits::PrefetchBefore(size_t unit, const models::Param* base,
                                 bool released_only) const {
  State& s = *state_;
  size_t pos = std::min(s.backward_cursor, s.previous_order.size());
  while (pos > 0 && s.previous_order[pos - 1] != unit) --pos;
  if (pos == 0 || s.refill_prefetch.unit != kNone) return;
  s.backward_cursor = pos - 1;
  for (size_t j = pos - 1; j-- > 0;) {
    if (released_only && !s.previous_released[j]) continue;
    const size_t next = s.previous_order[j];
    if (next == unit) return;
    s.refill_prefetch.unit = next;
    s.refill_prefetch.wait = StartGather(next, base);
    return;
  }
}

void GatherUnits::FinishGradients() const {
  std::vector<State::PendingGradient> pending = std::move(state_->gradients);
  state_->gradients.clear();
  for (State::PendingGradient& p : pending) {
    const at::Tensor flat = p.wait().reshape({-1});
    int64_t offset = 0;
    for (size_t i : units_[p.unit].index) {
      const at::Tensor& value = p.base[i].value;
      const at::Tensor g = flat.narrow(0, offset, value.numel()).view(value.sizes());
      offset += value.numel();
      at::Tensor& grad = value.mutable_grad();
      if (grad.defined()) {
        grad.add_(g);
      } else {
        grad = g.clone();
      }
    }
  }
}

void GatherUnits::EndForward() const {
  FinishGradients();
  State& s = *state_;
  s.layer = Gathering();  // (the backward pass starts in it: nothing released)
  s.roots.clear();
  DropPrefetches();
  s.previous_order = std::move(s.order);
  s.previous_released = std::move(s.order_released);
  s.order.clear();
  s.order_released.clear();
  s.backward_cursor = kNone;
  // The backward pass's first refill: the last gathering that released.
  for (size_t j = s.previous_order.size(); j-- > 0 && s.base;) {
    if (!s.previous_released[j]) continue;
    const size_t unit = s.previous_order[j];
    s.refill_prefetch.unit = unit;
    s.refill_prefetch.wait = StartGather(unit, s.base);
    break;
  }
}

}  // namespace t5xx::partitioning
