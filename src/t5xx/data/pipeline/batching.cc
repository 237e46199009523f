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
  std::vector<Example> rows;
  while (static_cast<int64_t>(rows.size()) < batch_size_) {
    auto ex = input_->Next();
    if (!ex) {
      done_ = true;
      return std::nullopt;  // drop_remainder
    }
    rows.push_back(std::move(*ex));
  }
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
            where + "feature '" + k + "' is a string");
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

nlohmann::json BatchToJson(const Batch& b) {
  return {{"batch_size", b.batch_size}, {"features", b.features}, {"lengths", b.lengths}};
}

// Lengths for an error message: "{a=2, b=3}".
std::string ShowLengths(const FeatureLengths& l) {
  std::string out;
  for (const auto& [k, v] : l) out += (out.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return "{" + out + "}";
}

// A saved batch, checked against what this iterator would have produced
// (`lengths`, `batch_size`) before anything uses it: a batch read back from a
// file is untrusted, and a length or row count that disagrees with its data
// would make the model read past a buffer. `where` names the batch
// ("lookahead[i]").
Batch BatchFromJson(const nlohmann::json& j, int64_t batch_size, const FeatureLengths& lengths,
                    const std::string& where, const char* who) {
  Batch b;
  b.batch_size = StateField(j, "batch_size", who).get<int64_t>();
  b.features =
      StateField(j, "features", who).get<std::map<std::string, std::vector<int32_t>>>();
  b.lengths = StateField(j, "lengths", who).get<std::map<std::string, int64_t>>();
  const std::string at = std::string(who) + ": saved batch " + where + ": ";
  T5XX_CHECK(b.batch_size == batch_size,
             std::string(who) + ": saved batch size " + std::to_string(b.batch_size) +
                 " differs from this iterator's " + std::to_string(batch_size));
  T5XX_CHECK(b.lengths == lengths, at + "its feature lengths " + ShowLengths(b.lengths) +
                                       " are not the iterator's " + ShowLengths(lengths));
  T5XX_CHECK(b.features.size() == b.lengths.size(),
             at + "holds " + std::to_string(b.features.size()) + " features for " +
                 std::to_string(b.lengths.size()) + " lengths " + ShowLengths(b.lengths));
  for (const auto& [k, L] : b.lengths) {
    auto it = b.features.find(k);
    T5XX_CHECK(it != b.features.end(), at + "lacks feature '" + k + "'");
    const auto n = static_cast<int64_t>(it->second.size());
    // n == batch_size * L, without forming a product that could overflow.
    T5XX_CHECK(L >= 0 && n % batch_size == 0 && n / batch_size == L,
               at + "feature '" + k + "' holds " + std::to_string(n) + " values, not batch_size " +
                   std::to_string(batch_size) + " x length " + std::to_string(L));
  }
  return b;
}

}  // namespace

nlohmann::json BatchIterator::SaveState() const { return SaveStateBefore({}); }

nlohmann::json BatchIterator::SaveStateBefore(const std::vector<const Batch*>& returned) const {
  nlohmann::json lookahead = nullptr;
  if (!returned.empty() || !lookahead_.empty()) {
    lookahead = nlohmann::json::array();
    for (const Batch* b : returned) lookahead.push_back(BatchToJson(*b));
    for (const Batch& b : lookahead_) lookahead.push_back(BatchToJson(b));
  }
  return WrapRootState({{"examples_read", examples_read_},
                        {"done", done_},
                        {"lengths", lengths_},
                        {"lookahead", std::move(lookahead)},
                        {"input", input_->SaveState()}});
}

void BatchIterator::RestoreState(const nlohmann::json& root) {
  const nlohmann::json state = UnwrapRootState(root);
  const char* who = "BatchIterator";
  examples_read_ = StateField(state, "examples_read", who).get<int64_t>();
  done_ = StateField(state, "done", who).get<bool>();
  const FeatureLengths saved = StateField(state, "lengths", who).get<FeatureLengths>();
  if (!lengths_.empty() && !saved.empty() && saved != lengths_) {
    throw Error(std::string(who) + ": the saved position is for feature lengths " +
                ShowLengths(saved) + ", this pipeline has " + ShowLengths(lengths_));
  }
  lengths_ = saved;
  const auto& la = StateField(state, "lookahead", who);
  lookahead_.clear();
  if (la.is_array()) {
    for (size_t i = 0; i < la.size(); ++i) {
      lookahead_.push_back(
          BatchFromJson(la[i], batch_size_, lengths_, "lookahead[" + std::to_string(i) + "]", who));
    }
  } else if (!la.is_null()) {  // one batch (older layout)
    lookahead_.push_back(BatchFromJson(la, batch_size_, lengths_, "lookahead", who));
  }
  input_->RestoreState(StateField(state, "input", who));
}

Batch BatchIterator::NextBatch() {
  auto b = Next();
  T5XX_CHECK(b.has_value(), "BatchIterator: dataset exhausted (a final partial "
                       "batch, if any, is dropped)");
  return std::move(*b);
}

}  // namespace t5xx::seqio
