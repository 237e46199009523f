// PendingExamples: the queue of examples a dataset stage has produced but not
// yet emitted (FlatMap, ParallelMap and trim_and_pack fill it a block at a
// time and emit it one example per Next()), with its saved state.
//
// Behaviour source: tf.data's flat_map / parallel map buffers, which seqio's
// pipelines rely on; the JSON form is t5xx's pipeline state (dataset.h).
// Framework-free: no libtorch.
#pragma once

#include <deque>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "t5xx/data/example.h"

namespace t5xx::seqio {

class PendingExamples {
 public:
  bool empty() const { return queue_.empty(); }
  // Appends `examples` in order (after the ones already queued).
  void PushAll(std::vector<Example> examples);
  // Removes and returns the oldest queued example. Must not be called when
  // empty() (undefined behaviour, as std::deque::front).
  Example Pop();

  // The queued examples, oldest first, as a JSON array of ExampleToJson
  // objects (dataset.h).
  nlohmann::json ToJson() const;
  // Replaces the queue by the examples of `array` as ToJson wrote them.
  // Throws t5xx::Error as ExampleFromJson does for a malformed example.
  void FromJson(const nlohmann::json& array);

 private:
  std::deque<Example> queue_;
};

}  // namespace t5xx::seqio
