// PendingExamples, the produced-but-not-emitted queue of a dataset stage
// (see pending_examples.h).
#include "t5xx/data/pipeline/pending_examples.h"

#include <utility>

namespace t5xx::seqio {

void PendingExamples::BeginUnit(nlohmann::json start) {
  DropEmptyUnits();
  units_.push_back({std::move(start), 0, 0});
}

void PendingExamples::PushAll(std::vector<Example> examples) {
  if (!units_.empty()) units_.back().queued += examples.size();
  for (auto& ex : examples) items_.push_back({std::move(ex), nullptr});
}

void PendingExamples::PushError(std::exception_ptr error) {
  if (!units_.empty()) ++units_.back().queued;
  items_.push_back({std::nullopt, std::move(error)});
}

void PendingExamples::CountEmitted(size_t n) {
  if (!units_.empty()) units_.back().emitted += n;
}

void PendingExamples::DropEmptyUnits() {
  while (!units_.empty() && units_.front().queued == 0) units_.pop_front();
}

Example PendingExamples::Pop() {
  DropEmptyUnits();
  if (!units_.empty()) {
    --units_.front().queued;
    ++units_.front().emitted;
  }
  Item item = std::move(items_.front());
  items_.pop_front();
  if (!item.example) std::rethrow_exception(item.error);
  return std::move(*item.example);
}

nlohmann::json PendingExamples::Position(
    const std::function<nlohmann::json()>& current) const {
  for (const Unit& u : units_) {
    if (u.queued == 0) continue;
    nlohmann::json out = u.start;
    out["skip"] = u.emitted;
    return out;
  }
  nlohmann::json out = current();
  out["skip"] = 0;
  return out;
}

}  // namespace t5xx::seqio
