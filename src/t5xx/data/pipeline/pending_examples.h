// PendingExamples: the queue of examples a dataset stage has produced but not
// yet emitted (FlatMap, ParallelMap and trim_and_pack fill it a unit at a
// time -- one input, a chunk, a block -- and emit it one example per Next()),
// the errors met while producing them, each rethrown in its place, and the
// stage's compact position: where the oldest unit not yet emitted whole
// started and how many of its items were emitted.
//
// Behaviour source: tf.data's flat_map / parallel map buffers, which seqio's
// pipelines rely on; the position is t5xx's pipeline state (dataset.h:
// a start and a count of outputs to skip, so a saved position holds no
// examples).
// Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/example.h"

namespace t5xx::seqio {

class PendingExamples {
 public:
  // True when neither an example nor an error is queued.
  bool empty() const { return items_.empty(); }
  // Starts a unit: the items pushed until the next BeginUnit were produced
  // from the stage's input read from `start` on (a JSON object the stage
  // makes: its input's state and its own counters at that point).
  void BeginUnit(nlohmann::json start);
  // Appends `examples` in order (after what is already queued) to the
  // latest unit.
  void PushAll(std::vector<Example> examples);
  // Appends an error after what is already queued (the error of one example
  // or of the input, to be rethrown in its place, after the examples before
  // it) to the latest unit.
  void PushError(std::exception_ptr error);
  // Counts n items of the latest unit as emitted before the ones queued (a
  // restored position whose first items were dropped).
  void CountEmitted(size_t n);
  // Removes and returns the oldest queued example, or, when the oldest item
  // is an error, removes it and rethrows it. Must not be called when empty()
  // (undefined behaviour, as std::deque::front).
  Example Pop();

  // The stage's position: the start of the oldest unit that still has
  // queued items with "skip" = its items already emitted added; when
  // nothing is queued, current() with "skip" = 0. A stage restores it by
  // restoring the start and calling SkipOutputs(stage, skip) (dataset.h).
  nlohmann::json Position(const std::function<nlohmann::json()>& current) const;

 private:
  struct Item {
    std::optional<Example> example;  // else error
    std::exception_ptr error;
  };
  struct Unit {
    nlohmann::json start;
    size_t queued = 0;   // items still queued
    size_t emitted = 0;  // items popped
  };
  std::deque<Item> items_;
  std::deque<Unit> units_;  // oldest first; units with nothing queued dropped
  // Drops the oldest units that hold nothing queued.
  void DropEmptyUnits();
};

}  // namespace t5xx::seqio
