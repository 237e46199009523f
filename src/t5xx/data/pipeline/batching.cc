// Batching of converted examples (see batching.h): Batch rows and
// BatchIterator.
#include "t5xx/data/pipeline/batching.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"

namespace t5xx::seqio {

std::vector<int32_t> Batch::Row(const std::string& feature, int64_t r) const {
  auto it = features.find(feature);
  T5XX_CHECK(it != features.end(), "Batch::Row: no feature '" + feature + "'");
  T5XX_CHECK(r >= 0 && r < batch_size, "Batch::Row: row " + std::to_string(r) +
                                      " outside [0, " +
                                      std::to_string(batch_size) + ")");
  const int64_t L = lengths.at(feature);
  return std::vector<int32_t>(it->second.begin() + r * L,
                              it->second.begin() + (r + 1) * L);
}

BatchIterator::BatchIterator(DatasetPtr input, int64_t batch_size,
                             FeatureLengths lengths)
    : input_(std::move(input)), batch_size_(batch_size),
      lengths_(std::move(lengths)) {
  T5XX_CHECK(input_ != nullptr, "BatchIterator: input dataset is null");
  T5XX_CHECK(batch_size_ >= 1, "BatchIterator: batch_size must be >= 1, got " +
                              std::to_string(batch_size_));
}

std::optional<Batch> BatchIterator::Next() {
  if (!lookahead_.empty()) {
    std::optional<Batch> out(std::move(lookahead_.front()));
    lookahead_.pop_front();
    return out;
  }
  if (done_) return std::nullopt;
  BatchStart start{InputStateOrNull(*input_, &saveable_), examples_read_};
  std::vector<Example> rows;
  while (static_cast<int64_t>(rows.size()) < batch_size_) {
    auto ex = input_->Next();
    if (!ex) {
      done_ = true;
      return std::nullopt;  // drop_remainder
    }
    rows.push_back(std::move(*ex));
  }
  starts_.push_back(std::move(start));
  while (starts_.size() > lookahead_.size() + kKeptBatchStarts) starts_.pop_front();
  if (lengths_.empty()) {
    for (const auto& [k, v] : rows[0])
      if (std::holds_alternative<Tokens>(v))
        lengths_[k] = static_cast<int64_t>(std::get<Tokens>(v).size());
    T5XX_CHECK(!lengths_.empty(), "BatchIterator: first example has no token features");
  }
  Batch b;
  b.batch_size = batch_size_;
  b.lengths = lengths_;
  for (const auto& [k, L] : lengths_) {
    auto& flat = b.features[k];
    flat.reserve(static_cast<size_t>(batch_size_ * L));
    for (size_t r = 0; r < rows.size(); ++r) {
      const std::string where =
          "BatchIterator: example " + std::to_string(examples_read_ + r) + ": ";
      auto it = rows[r].find(k);
      T5XX_CHECK(it != rows[r].end(), where + "missing feature '" + k + "'");
      T5XX_CHECK(std::holds_alternative<Tokens>(it->second),
            where + "feature '" + k + "' is " + DescribeValue(it->second));
      const Tokens& t = std::get<Tokens>(it->second);
      T5XX_CHECK(static_cast<int64_t>(t.size()) == L,
            where + "feature '" + k + "' has length " +
                std::to_string(t.size()) + ", expected exactly " +
                std::to_string(L) + " (use a FeatureConverter to pad/pack)");
      flat.insert(flat.end(), t.begin(), t.end());
    }
  }
  examples_read_ += static_cast<int64_t>(rows.size());
  return b;
}

bool BatchIterator::HasNext() {
  if (!lookahead_.empty()) return true;
  std::optional<Batch> b = Next();
  if (!b) return false;
  lookahead_.push_back(std::move(*b));
  return true;
}


namespace {
// Lengths for an error message: "{a=2, b=3}".
std::string ShowLengths(const FeatureLengths& l) {
  std::string out;
  for (const auto& [k, v] : l) out += (out.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return "{" + out + "}";
}
}  // namespace

nlohmann::json BatchIterator::SaveState() const { return SaveStateBefore({}); }

nlohmann::json BatchIterator::SaveStateBefore(const std::vector<const Batch*>& returned) const {
  // Batches formed after the position: the read-ahead ones and `returned`.
  const size_t after = lookahead_.size() + returned.size();
  if (after == 0) {
    return WrapRootState({{"examples_read", examples_read_},
                          {"done", done_},
                          {"lengths", lengths_},
                          {"input", input_->SaveState()}});
  }
  T5XX_CHECK(after <= starts_.size(),
             "BatchIterator: cannot save the position " + std::to_string(after) +
                 " batches back; it keeps the starts of the last " +
                 std::to_string(starts_.size()));
  const BatchStart& start = starts_[starts_.size() - after];
  if (start.input.is_null()) (void)input_->SaveState();  // throws the input's error
  return WrapRootState({{"examples_read", start.examples_read},
                        {"done", false},
                        {"lengths", lengths_},
                        {"input", start.input}});
}

void BatchIterator::RestoreState(const nlohmann::json& root) {
  const nlohmann::json state = UnwrapRootState(root);
  const char* who = "BatchIterator";
  examples_read_ = static_cast<int64_t>(StateCount(state, "examples_read", who));
  done_ = StateField(state, "done", who).get<bool>();
  const FeatureLengths saved = StateField(state, "lengths", who).get<FeatureLengths>();
  if (!lengths_.empty() && !saved.empty() && saved != lengths_) {
    throw Error(std::string(who) + ": the saved position is for feature lengths " +
                ShowLengths(saved) + ", this pipeline has " + ShowLengths(lengths_));
  }
  lengths_ = saved;
  lookahead_.clear();
  starts_.clear();
  input_->RestoreState(StateField(state, "input", who));
}

Batch BatchIterator::NextBatch() {
  auto b = Next();
  T5XX_CHECK(b.has_value(), "BatchIterator: dataset exhausted (a final partial "
                       "batch, if any, is dropped)");
  return std::move(*b);
}

}  // namespace t5xx::seqio
