// PendingExamples: the queue of examples a dataset stage has produced but not
// yet emitted (FlatMap, ParallelMap and trim_and_pack fill it a block at a
// time and emit it one example per Next()), with its saved state, and the
// errors met while producing them, each rethrown in its place.
//
// Behaviour source: tf.data's flat_map / parallel map buffers, which seqio's
// pipelines rely on; the JSON form is t5xx's pipeline state (dataset.h).
// Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <deque>
#include <exception>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "t5xx/data/pipeline/example.h"

namespace t5xx::seqio {

class PendingExamples {
 public:
  // True when neither an example nor an error is queued.
  bool empty() const { return queue_.empty() && errors_.empty(); }
  // Appends `examples` in order (after what is already queued).
  void PushAll(std::vector<Example> examples);
  // Appends an error after what is already queued (a stage that works on
  // blocks of examples: the error of one example or of its input, to be
  // rethrown in its place, after the examples before it).
  void PushError(std::exception_ptr error);
  // Removes and returns the oldest queued example, or, when the oldest item
  // is an error, removes it and rethrows it. Must not be called when empty()
  // (undefined behaviour, as std::deque::front).
  Example Pop();

  // The queued examples, oldest first, as a JSON array of ExampleToJson
  // objects (dataset.h); queued errors are not part of it.
  nlohmann::json ToJson() const;
  // Replaces the queue by the examples of `array` as ToJson wrote them.
  // Throws t5xx::Error as ExampleFromJson does for a malformed example.
  void FromJson(const nlohmann::json& array);

 private:
  struct QueuedError {
    size_t before;  // queued examples to emit before it
    std::exception_ptr error;
  };
  std::deque<Example> queue_;
  std::deque<QueuedError> errors_;  // oldest first
  size_t tail_ = 0;                 // examples queued after the last error
};

}  // namespace t5xx::seqio
