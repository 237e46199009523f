// PendingExamples, the produced-but-not-emitted queue of a dataset stage
// (see pending_examples.h).
#include "t5xx/data/pipeline/pending_examples.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/dataset.h"

namespace t5xx::seqio {

void PendingExamples::PushAll(std::vector<Example> examples) {
  tail_ += examples.size();
  for (auto& ex : examples) queue_.push_back(std::move(ex));
}

void PendingExamples::PushError(std::exception_ptr error) {
  errors_.push_back({tail_, std::move(error)});
  tail_ = 0;
}

Example PendingExamples::Pop() {
  if (!errors_.empty() && errors_.front().before == 0) {
    const std::exception_ptr e = errors_.front().error;
    errors_.pop_front();
    std::rethrow_exception(e);
  }
  if (errors_.empty()) {
    --tail_;
  } else {
    --errors_.front().before;
  }
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
  errors_.clear();
  for (const auto& j : array) queue_.push_back(ExampleFromJson(j));
  tail_ = queue_.size();
}

}  // namespace t5xx::seqio
