// A per-op wall-clock profile of libtorch work, for t5xx_step_profile:
// every at::RecordFunction (the dispatcher records each ATen op, the
// autograd engine each backward node, RECORD_USER_SCOPE each user scope)
// is timed through a global callback, and its time is summed per row.
//
// Self and inclusive time. Each thread keeps a stack of the records open on
// it. A record's inclusive time is from its start to its end; its self time
// is that minus the inclusive time of the records opened inside it on the
// same thread, so the self times of one thread never overlap and add up to
// at most the wall time. A row's inclusive time counts only its outermost
// record when the same row is open twice on a stack (aten::to inside
// aten::to), so it does not count time twice either.
//
// Rows. A row is (phase, label, thread). The phase comes from the train
// step's user scopes (trainer/step_scopes.h): ops inside
// t5xx::train_step::forward are kForward, and so on; the autograd engine's
// records (scope BACKWARD_FUNCTION, and the engine's own
// "autograd::engine::evaluate_function: <node>" around each node) and all
// ops inside them are kBackward, whichever thread runs them; everything
// else is kOther. On threads other than the one that called Start() (libtorch's
// intra-op or autograd worker threads) an op opened with nothing below it
// takes the phase the starting thread is in at that moment. The label is the
// op's name ("aten::mm"); inside a backward node it is "<node> > <op>"
// ("MmBackward0 > aten::mm"), the node's own time outside any op is the row
// "<node>", and the engine's work between nodes (summing gradients into
// input buffers) is "autograd engine" and "autograd engine > <op>".
//
// Cost: two steady_clock reads, a string and a hash-map update per record
// (about a microsecond); step_profile.cc reports the step time with and
// without recording.
//
// The RecordFunction API used here (RecordFunctionCallback(start, end),
// scopes(), addGlobalCallback, removeCallback, RecordFunction::name() and
// scope()) is spelled the same in libtorch 1.13 and 2.x (checked against
// 1.13's and PyTorch main's ATen/record_function.h), so nothing of it is in
// util/torch_compat.h.
#pragma once

#include <ATen/record_function.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "t5xx/trainer/step_scopes.h"

namespace t5xx::bench {

enum class StepPhase { kForward = 0, kBackward = 1, kOptimizer = 2, kOther = 3 };

inline const char* PhaseName(StepPhase p) {
  switch (p) {
    case StepPhase::kForward: return "forward";
    case StepPhase::kBackward: return "backward";
    case StepPhase::kOptimizer: return "optimizer";
    case StepPhase::kOther: return "other";
  }
  return "?";
}

// What a row's records are.
enum class RowKind {
  kOp,           // an op the dispatcher recorded (aten::*, or a custom op)
  kNode,         // a backward node's own time outside ops ("MmBackward0")
  kEngine,       // the autograd engine's time between nodes, outside ops
  kPhaseScope,   // a step phase's own time outside any record (C++ between ops)
  kOtherScope,   // any other user scope's own time
};

// One row of the profile; times in seconds, summed over all recorded steps.
struct OpRow {
  std::string label;   // "aten::mm", "MmBackward0 > aten::mm", "MmBackward0"
  std::string op;      // the record's own name: "aten::mm", "MmBackward0"
  StepPhase phase = StepPhase::kOther;
  RowKind kind = RowKind::kOp;
  bool main_thread = true;  // false: on another thread, overlapping main-thread time
  int64_t calls = 0;
  double self_s = 0;
  double inclusive_s = 0;
};

// Records while started; one at a time per process (the callbacks are
// global). Start and Stop from the thread that runs the work (the "main"
// thread); Rows() after Stop().
class OpProfiler {
 public:
  OpProfiler() = default;
  ~OpProfiler() {
    Stop();
    std::lock_guard<std::mutex> lock(Registry().mutex);
    if (Registry().last == this) Registry().last = nullptr;
  }
  OpProfiler(const OpProfiler&) = delete;
  OpProfiler& operator=(const OpProfiler&) = delete;

  // Starts (or resumes) recording, adding to the rows recorded so far by
  // this profiler; a profiler started from another thread, or after another
  // profiler, begins with no rows. Throws std::logic_error when another
  // OpProfiler is recording.
  void Start() {
    std::lock_guard<std::mutex> lock(Registry().mutex);
    if (Registry().active) throw std::logic_error("OpProfiler: another profiler is recording");
    const bool resume =
        Registry().last == this && Registry().main_thread == std::this_thread::get_id();
    Registry().main_thread = std::this_thread::get_id();
    for (auto& t : Registry().threads) {
      t->main = t->id == Registry().main_thread;
      if (!resume) {
        t->rows.clear();
        t->unmatched = 0;
      }
      t->stack.clear();
    }
    Registry().last = this;
    Registry().main_phase.store(static_cast<int>(StepPhase::kOther));
    Registry().active = this;
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&OnStart, &OnEnd)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                     at::RecordScope::USER_SCOPE}));
  }

  // Stops recording (no-op when not recording).
  void Stop() {
    if (handle_ == at::INVALID_CALLBACK_HANDLE) return;
    at::removeCallback(handle_);
    handle_ = at::INVALID_CALLBACK_HANDLE;
    std::lock_guard<std::mutex> lock(Registry().mutex);
    Registry().active = nullptr;
  }

  // The rows of all threads, in no order.
  std::vector<OpRow> Rows() const {
    std::lock_guard<std::mutex> lock(Registry().mutex);
    std::vector<OpRow> out;
    for (const auto& t : Registry().threads) {
      for (const auto& kv : t->rows) out.push_back(kv.second);
    }
    return out;
  }

  // Ends that did not match the innermost open record of their thread (an
  // async record ending elsewhere); 0 in a clean profile.
  int64_t UnmatchedEnds() const {
    std::lock_guard<std::mutex> lock(Registry().mutex);
    int64_t n = 0;
    for (const auto& t : Registry().threads) n += t->unmatched;
    return n;
  }

 private:
  using Clock = std::chrono::steady_clock;

  struct Frame {
    const at::RecordFunction* fn;
    std::string key;     // the row's key in ThreadState::rows
    std::string node;    // the enclosing backward node, or "autograd engine"; "" outside
    StepPhase phase;
    bool outermost;      // no frame below has the same key
    Clock::time_point start;
    double child_s = 0;  // inclusive time of frames opened inside
  };

  struct ThreadState {
    std::thread::id id;
    bool main = false;  // id == RegistryData::main_thread
    std::vector<Frame> stack;
    std::unordered_map<std::string, OpRow> rows;
    int64_t unmatched = 0;
  };

  struct RegistryData {
    std::mutex mutex;
    std::vector<std::unique_ptr<ThreadState>> threads;  // kept for the process's life
    std::thread::id main_thread;
    std::atomic<int> main_phase{static_cast<int>(StepPhase::kOther)};
    OpProfiler* active = nullptr;  // recording now
    OpProfiler* last = nullptr;    // whose rows the threads hold
  };

  static RegistryData& Registry() {
    static RegistryData* r = new RegistryData();  // never destroyed: threads may outlive main
    return *r;
  }

  static ThreadState& State() {
    thread_local ThreadState* state = nullptr;
    if (!state) {
      auto s = std::make_unique<ThreadState>();
      std::lock_guard<std::mutex> lock(Registry().mutex);
      s->id = std::this_thread::get_id();
      s->main = s->id == Registry().main_thread;
      state = s.get();
      Registry().threads.push_back(std::move(s));
    }
    return *state;
  }

  static bool IsPhaseScope(const char* name, StepPhase* phase) {
    if (std::strcmp(name, trainer::kForwardScope) == 0) {
      *phase = StepPhase::kForward;
    } else if (std::strcmp(name, trainer::kBackwardScope) == 0) {
      *phase = StepPhase::kBackward;
    } else if (std::strcmp(name, trainer::kOptimizerScope) == 0) {
      *phase = StepPhase::kOptimizer;
    } else {
      return false;
    }
    return true;
  }

  static std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
    ThreadState& ts = State();
    const char* name = fn.name();
    const at::RecordScope scope = fn.scope();
    const Frame* parent = ts.stack.empty() ? nullptr : &ts.stack.back();
    Frame f;
    f.fn = &fn;
    f.node = parent ? parent->node : std::string();
    f.phase = parent ? parent->phase
                     : ts.main ? StepPhase::kOther
                               : static_cast<StepPhase>(Registry().main_phase.load());
    OpRow row;
    row.op = name;
    row.kind = RowKind::kOp;
    StepPhase scope_phase;
    if (scope == at::RecordScope::USER_SCOPE) {
      row.kind = RowKind::kOtherScope;
      if (IsPhaseScope(name, &scope_phase)) {
        f.phase = scope_phase;
        row.kind = RowKind::kPhaseScope;
        if (ts.main) Registry().main_phase.store(static_cast<int>(f.phase));
      }
      row.label = name;
    } else if (scope == at::RecordScope::BACKWARD_FUNCTION) {
      f.phase = StepPhase::kBackward;
      f.node = name;
      row.kind = RowKind::kNode;
      row.label = name;
    } else if (std::strncmp(name, "autograd::engine::evaluate_function", 35) == 0) {
      f.phase = StepPhase::kBackward;
      f.node = "autograd engine";
      row.kind = RowKind::kEngine;
      row.op = f.node;
      row.label = f.node;
    } else {
      row.label = f.node.empty() ? row.op : f.node + " > " + row.op;
    }
    row.phase = f.phase;
    row.main_thread = ts.main;
    f.key = std::to_string(static_cast<int>(f.phase)) + (ts.main ? "m" : "w") + row.label;
    f.outermost = std::none_of(ts.stack.begin(), ts.stack.end(),
                               [&](const Frame& g) { return g.key == f.key; });
    auto it = ts.rows.find(f.key);
    if (it == ts.rows.end()) ts.rows.emplace(f.key, std::move(row));
    f.start = Clock::now();
    ts.stack.push_back(std::move(f));
    return nullptr;
  }

  static void OnEnd(const at::RecordFunction& fn, at::ObserverContext*) {
    const Clock::time_point now = Clock::now();
    ThreadState& ts = State();
    // The innermost frame of `fn`; frames above it never ended (counted).
    auto it = std::find_if(ts.stack.rbegin(), ts.stack.rend(),
                           [&](const Frame& g) { return g.fn == &fn; });
    if (it == ts.stack.rend()) {
      ++ts.unmatched;
      return;
    }
    const size_t index = static_cast<size_t>(ts.stack.rend() - it) - 1;
    ts.unmatched += static_cast<int64_t>(ts.stack.size() - index - 1);
    ts.stack.resize(index + 1);
    Frame& f = ts.stack.back();
    const double elapsed = std::chrono::duration<double>(now - f.start).count();
    OpRow& row = ts.rows[f.key];
    ++row.calls;
    row.self_s += elapsed - f.child_s;
    if (f.outermost) row.inclusive_s += elapsed;
    const bool phase_scope = row.kind == RowKind::kPhaseScope;
    ts.stack.pop_back();
    if (!ts.stack.empty()) ts.stack.back().child_s += elapsed;
    if (ts.main && phase_scope) {
      Registry().main_phase.store(static_cast<int>(ts.stack.empty() ? StepPhase::kOther
                                                                    : ts.stack.back().phase));
    }
  }

  at::CallbackHandle handle_ = at::INVALID_CALLBACK_HANDLE;
};

}  // namespace t5xx::bench
