// Where a train step's time and launches go, for t5xx_gpu_train_bench:
//
// PhaseTimer: the device time of each phase of a step (the Trainer's user
//   scopes, trainer/step_scopes.h: forward, backward, optimizer) from
//   device::DeviceMark pairs recorded when a scope opens and closes -- CUDA
//   events on the current stream on a GPU, so the GPU's own time for the
//   phase's queued work -- beside the host's time inside the scope (its
//   enqueue time on a GPU). Everything outside the three scopes is "other":
//   step time minus their sum.
//
// LaunchCounter: the ATen ops of each phase that run a kernel, counted
//   through at::RecordFunction on every thread: leaf ops only (an op that
//   calls other ops is counted through them), less ops that only make views
//   or allocate (NoKernelOps). On a GPU each counted op is about one kernel
//   launch; on the CPU the same count says how many a GPU would get for the
//   same code (libtorch >= 2.2's multi-tensor ops count once per list on a
//   GPU but record their per-tensor ops on the CPU). An estimate, not a
//   trace: libtorch's profiler (--trace_dir) names the real kernels.
//
// Both register global RecordFunction callbacks; one of each at a time.
#pragma once

#include <ATen/record_function.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "t5xx/device/device_timer.h"
#include "t5xx/trainer/step_scopes.h"

namespace t5xx::bench {

enum Phase { kPhaseForward = 0, kPhaseBackward = 1, kPhaseOptimizer = 2, kNumPhases = 3 };
inline const char* const kPhaseNames[kNumPhases] = {"forward", "backward", "optimizer"};

// The phase a user scope's name opens, or -1.
inline int PhaseOfScope(const char* name) {
  if (std::strcmp(name, trainer::kForwardScope) == 0) return kPhaseForward;
  if (std::strcmp(name, trainer::kBackwardScope) == 0) return kPhaseBackward;
  if (std::strcmp(name, trainer::kOptimizerScope) == 0) return kPhaseOptimizer;
  return -1;
}

class PhaseTimer {
 public:
  explicit PhaseTimer(at::Device device) : device_(device) {
    Current() = this;
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&OnStart, &OnEnd).scopes({at::RecordScope::USER_SCOPE}));
  }
  ~PhaseTimer() {
    at::removeCallback(handle_);
    Current() = nullptr;
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

  struct Totals {
    std::array<double, kNumPhases> device_ms{};  // summed over the recorded steps
    std::array<double, kNumPhases> host_ms{};
  };
  // Waits for the device; sums every recorded phase.
  Totals Sum() const {
    std::lock_guard<std::mutex> lock(mutex_);
    Totals t;
    for (const Span& s : spans_) {
      t.device_ms[s.phase] += s.end.MillisecondsSince(s.start);
      t.host_ms[s.phase] +=
          std::chrono::duration<double, std::milli>(s.end.host_time() - s.start.host_time()).count();
    }
    return t;
  }

 private:
  struct Span {
    int phase;
    device::DeviceMark start, end;
  };
  static PhaseTimer*& Current() {
    static PhaseTimer* current = nullptr;
    return current;
  }
  static std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
    PhaseTimer* self = Current();
    const int phase = PhaseOfScope(fn.name());
    if (!self || phase < 0) return nullptr;
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->open_[phase] = device::DeviceMark::Record(self->device_);
    return nullptr;
  }
  static void OnEnd(const at::RecordFunction& fn, at::ObserverContext*) {
    PhaseTimer* self = Current();
    const int phase = PhaseOfScope(fn.name());
    if (!self || phase < 0) return;
    const device::DeviceMark end = device::DeviceMark::Record(self->device_);
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->spans_.push_back({phase, self->open_[phase], end});
  }

  at::Device device_;
  at::CallbackHandle handle_ = 0;
  mutable std::mutex mutex_;
  std::array<device::DeviceMark, kNumPhases> open_;
  std::vector<Span> spans_;
};

// ATen ops that make views, allocate or read metadata: no kernel.
inline const std::unordered_set<std::string>& NoKernelOps() {
  static const std::unordered_set<std::string> ops = {
      "aten::view", "aten::reshape", "aten::_reshape_alias", "aten::_unsafe_view",
      "aten::narrow", "aten::slice", "aten::select", "aten::unsqueeze", "aten::squeeze",
      "aten::expand", "aten::expand_as", "aten::view_as", "aten::as_strided", "aten::unbind",
      "aten::split", "aten::split_with_sizes", "aten::chunk", "aten::detach", "aten::alias",
      "aten::t", "aten::transpose", "aten::permute", "aten::flatten", "aten::empty",
      "aten::empty_strided", "aten::empty_like", "aten::resize_", "aten::to", "aten::contiguous",
      "aten::lift_fresh", "aten::result_type", "aten::size", "aten::stride", "aten::set_",
      "aten::requires_grad_", "aten::_has_compatible_shallow_copy_type", "aten::is_pinned",
      "aten::broadcast_tensors", "aten::_unsafe_split", "aten::numel", "aten::dim",
      "aten::is_nonzero", "aten::detach_", "aten::new_empty", "aten::new_empty_strided",
      "aten::movedim", "aten::swapaxes", "aten::matrix_H", "aten::align_to",
  };
  return ops;
}

class LaunchCounter {
 public:
  LaunchCounter() {
    Current() = this;
    phase_ = -1;
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&OnStart, &OnEnd)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
  }
  ~LaunchCounter() {
    at::removeCallback(handle_);
    Current() = nullptr;
  }
  LaunchCounter(const LaunchCounter&) = delete;
  LaunchCounter& operator=(const LaunchCounter&) = delete;

  // Kernel-running leaf ops per phase, and outside the phases ("other").
  std::array<int64_t, kNumPhases> per_phase() const {
    return {counts_[0].load(), counts_[1].load(), counts_[2].load()};
  }
  int64_t other() const { return counts_[kNumPhases].load(); }

 private:
  struct Frame {
    bool has_child = false;
  };
  static LaunchCounter*& Current() {
    static LaunchCounter* current = nullptr;
    return current;
  }
  static std::vector<Frame>& Stack() {
    thread_local std::vector<Frame> stack;
    return stack;
  }
  static std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
    LaunchCounter* self = Current();
    if (!self) return nullptr;
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
      const int phase = PhaseOfScope(fn.name());
      if (phase >= 0) self->phase_ = phase;
      return nullptr;
    }
    auto& stack = Stack();
    if (!stack.empty()) stack.back().has_child = true;
    stack.push_back(Frame{});
    return nullptr;
  }
  static void OnEnd(const at::RecordFunction& fn, at::ObserverContext*) {
    LaunchCounter* self = Current();
    if (!self) return;
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
      if (PhaseOfScope(fn.name()) >= 0) self->phase_ = -1;
      return;
    }
    auto& stack = Stack();
    if (stack.empty()) return;  // opened before the counter started
    const bool leaf = !stack.back().has_child;
    stack.pop_back();
    if (!leaf || NoKernelOps().count(fn.name())) return;
    const int phase = self->phase_.load();
    ++self->counts_[phase < 0 ? kNumPhases : phase];
  }

  at::CallbackHandle handle_ = 0;
  std::atomic<int> phase_{-1};
  std::array<std::atomic<int64_t>, kNumPhases + 1> counts_{};
};

}  // namespace t5xx::bench
