// PendingExamples, the produced-but-not-emitted queue of a dataset stage
// (see pending_examples.h).
#include "t5xx/data/pending_examples.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/dataset.h"

namespace t5xx::seqio {

void PendingExamples::PushAll(std::vector<Example> examples) {
  for (auto& ex : examples) queue_.push_back(std::move(ex));
}

Example PendingExamples::Pop() {
  Example out = std::move(queue_.front());
  queue_.pop_front();
  return out;
}

nlohmann::json PendingExamples::ToJson() const {
  nlohmann::json array = nlohmann::json::array();
  for (const auto& ex : queue_) array.push_back(ExampleToJson(ex));
  return array;
}

void PendingExamples::FromJson(const nlohmann::json& array) {
  queue_.clear();
  for (const auto& j : array) queue_.push_back(ExampleFromJson(j));
}

}  // namespace t5xx::seqio
