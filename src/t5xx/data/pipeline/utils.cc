// seqio utilities: the counter-based RNG, autoregressive inputs, trim-and-pack,
// shuffle (see utils.h).
#include "t5xx/data/pipeline/utils.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/data/pipeline/pending_examples.h"
#include "t5xx/data/pipeline/seed_purposes.h"
#include "t5xx/data/pipeline/worker_group.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

uint64_t StatelessRng::NextU64() {
  ++counter_;
  return SplitMix64(key_ + counter_ * kSplitMix64Gamma);
}

int64_t StatelessRng::UniformInt(int64_t n) {
  T5XX_CHECK(n > 0, "StatelessRng::UniformInt: n must be > 0, got " +
                   std::to_string(n));
  const uint64_t un = static_cast<uint64_t>(n);
  // Rejection sampling removes modulo bias.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % un);
  uint64_t r;
  do {
    r = NextU64();
  } while (r >= limit);
  return static_cast<int64_t>(r % un);
}

double StatelessRng::Uniform01() {
  return static_cast<double>(NextU64() >> 11) * 0x1.0p-53;
}

// ---------------------------------------------------------------------------

Tokens MakeAutoregressiveInputs(const Tokens& targets, int32_t bos_id) {
  Tokens out(targets.size(), 0);
  if (targets.empty()) return out;
  out[0] = bos_id;
  for (size_t i = 1; i < targets.size(); ++i) out[i] = targets[i - 1];
  return out;
}

Tokens MakeAutoregressiveInputs(const Tokens& targets, const Tokens& segment_ids,
                                int32_t bos_id) {
  T5XX_CHECK(targets.size() == segment_ids.size(),
        "make_autoregressive_inputs: targets has length " +
            std::to_string(targets.size()) + " but segment_ids has length " +
            std::to_string(segment_ids.size()));
  Tokens out = MakeAutoregressiveInputs(targets, bos_id);
  for (size_t i = 1; i < targets.size(); ++i) {
    if (segment_ids[i] != segment_ids[i - 1]) out[i] = bos_id;
  }
  return out;
}

// ---------------------------------------------------------------------------

namespace {

void CheckLengths(const FeatureLengths& lengths, const char* who) {
  T5XX_CHECK(!lengths.empty(), std::string(who) + ": no feature lengths given");
  for (const auto& [k, L] : lengths) {
    T5XX_CHECK(L >= 1, std::string(who) + ": length of feature '" + k +
                      "' must be >= 1, got " + std::to_string(L));
  }
}

const Tokens& TokensFor(const Example& ex, const std::string& key,
                        const char* who) {
  auto it = ex.find(key);
  T5XX_CHECK(it != ex.end(),
        std::string(who) + ": example has no feature '" + key + "'");
  T5XX_CHECK(std::holds_alternative<Tokens>(it->second),
        std::string(who) + ": feature '" + key + "' is " + DescribeValue(it->second) +
            "; tokenize it before packing");
  return std::get<Tokens>(it->second);
}

// Per feature (in `lengths` order): the packed row under construction.
struct PackRow {
  std::vector<Tokens> tokens, positions;
  int num_examples = 0;
};

// The row's features padded to their lengths, with segment ids and
// positions (moves the row's vectors out).
Example FinishRow(PackRow& row, const std::vector<std::pair<std::string, int64_t>>& lengths) {
  Example out;
  for (size_t f = 0; f < lengths.size(); ++f) {
    const auto& [k, L] = lengths[f];
    Tokens tok = std::move(row.tokens[f]);
    Tokens pos = std::move(row.positions[f]);
    tok.resize(static_cast<size_t>(L), 0);
    pos.resize(static_cast<size_t>(L), 0);
    Tokens seg(static_cast<size_t>(L), 0);
    int32_t starts = 0;
    for (int64_t i = 0; i < L; ++i) {
      if (pos[i] == 0) ++starts;
      seg[i] = tok[i] != 0 ? starts : 0;
    }
    out[k] = std::move(tok);
    out[k + "_segment_ids"] = std::move(seg);
    out[k + "_positions"] = std::move(pos);
  }
  return out;
}

// Packs one padded_batch block with greedy next-fit.
std::vector<Example> PackBlock(const std::vector<Example>& block,
                               const FeatureLengths& lengths) {
  const std::vector<std::pair<std::string, int64_t>> features(lengths.begin(), lengths.end());
  const size_t num_features = features.size();
  std::vector<Example> rows;
  PackRow row;
  auto reset = [&] {
    row.tokens.assign(num_features, Tokens());
    row.positions.assign(num_features, Tokens());
    for (size_t f = 0; f < num_features; ++f) {
      row.tokens[f].reserve(static_cast<size_t>(features[f].second));
      row.positions[f].reserve(static_cast<size_t>(features[f].second));
    }
    row.num_examples = 0;
  };
  reset();
  // The example's piece of each feature: the first `nonzero` tokens of its
  // trimmed value, nonzero = the count of non-zero tokens in it.
  std::vector<const Tokens*> values(num_features);
  std::vector<size_t> piece(num_features);
  for (const Example& ex : block) {
    bool overflow = false;
    for (size_t f = 0; f < num_features; ++f) {
      const auto& [k, L] = features[f];
      const Tokens& v = TokensFor(ex, k, "trim_and_pack");
      const size_t trimmed = std::min<size_t>(v.size(), static_cast<size_t>(L));
      size_t nonzero = 0;
      for (size_t i = 0; i < trimmed; ++i) nonzero += v[i] != 0;
      values[f] = &v;
      piece[f] = nonzero;
      if (static_cast<int64_t>(row.tokens[f].size() + nonzero) > L) overflow = true;
    }
    if (overflow && row.num_examples > 0) {
      rows.push_back(FinishRow(row, features));
      reset();
    }
    for (size_t f = 0; f < num_features; ++f) {
      const Tokens& v = *values[f];
      row.tokens[f].insert(row.tokens[f].end(), v.begin(),
                           v.begin() + static_cast<std::ptrdiff_t>(piece[f]));
      for (size_t i = 0; i < piece[f]; ++i) row.positions[f].push_back(static_cast<int32_t>(i));
    }
    ++row.num_examples;
  }
  if (row.num_examples > 0) rows.push_back(FinishRow(row, features));
  return rows;
}

int64_t BlockSize(const FeatureLengths& lengths) {
  int64_t m = 0;
  for (const auto& kv : lengths) m = std::max(m, kv.second);
  return m;
}

// Reads num_threads blocks at a time and packs them at once (each block
// alone, as rows never cross blocks), emitting the rows in block order. An
// error (the input's, or packing's) is rethrown in its place: after the rows
// of the blocks before it.
class PackDataset : public Dataset {
 public:
  PackDataset(DatasetPtr input, FeatureLengths lengths, int num_threads)
      : input_(std::move(input)), lengths_(std::move(lengths)),
        num_threads_(static_cast<size_t>(std::max(num_threads, 1))) {}
  std::optional<Example> Next() override {
    while (pending_.empty()) {
      if (done_) return std::nullopt;
      ReadAndPackBlocks();
    }
    return pending_.Pop();
  }
  // Compact (dataset.h, version 2): {"input": the input's state where the
  // block being emitted started, "skip": its rows emitted}; "done" when
  // nothing is pending and the input has ended.
  nlohmann::json SaveState() const override {
    if (!saveable_) (void)input_->SaveState();  // throws the input's error
    return pending_.Position([&] {
      return nlohmann::json{{"done", done_}, {"input", input_->SaveState()}};
    });
  }
  void RestoreState(const nlohmann::json& state) override {
    done_ = state.contains("done") && state.at("done").get<bool>();
    input_->RestoreState(StateField(state, "input", "trim_and_pack"));
    // A block of n examples makes at most n rows (and an error, the last).
    SkipOutputs(*this, StateCount(state, "skip", "trim_and_pack"),
                static_cast<uint64_t>(BlockSize(lengths_)), "trim_and_pack");
  }

 private:
  void ReadAndPackBlocks() {
    const int64_t n = BlockSize(lengths_);
    std::vector<std::vector<Example>> blocks;
    std::vector<nlohmann::json> starts;  // the input's state at each block
    std::exception_ptr input_error;
    try {
      while (!done_ && blocks.size() < num_threads_) {
        starts.push_back({{"input", InputStateOrNull(*input_, &saveable_)}});
        std::vector<Example> block;
        done_ = !ReadUpTo(*input_, static_cast<size_t>(n), &block);
        blocks.push_back(std::move(block));
      }
    } catch (...) {
      input_error = std::current_exception();  // the block being read is dropped
    }
    std::vector<std::vector<Example>> rows(blocks.size());
    std::vector<std::exception_ptr> errors(blocks.size());
    if (!workers_) workers_ = std::make_unique<WorkerGroup>(num_threads_ - 1);
    workers_->ParallelFor(blocks.size(), [&](size_t b) {
      try {
        rows[b] = PackBlock(blocks[b], lengths_);
      } catch (...) {
        errors[b] = std::current_exception();
      }
    });
    for (size_t b = 0; b < blocks.size(); ++b) {
      pending_.BeginUnit(std::move(starts[b]));
      if (errors[b]) {
        pending_.PushError(errors[b]);
      } else {
        pending_.PushAll(std::move(rows[b]));
      }
    }
    if (input_error) {  // the block being read is dropped; replayed, it fails again
      pending_.BeginUnit(std::move(starts.back()));
      pending_.PushError(input_error);
    }
  }

  DatasetPtr input_;
  FeatureLengths lengths_;
  size_t num_threads_;
  PendingExamples pending_;  // packed rows, not yet emitted (errors in place)
  bool saveable_ = true;     // InputStateOrNull
  bool done_ = false;
  std::unique_ptr<WorkerGroup> workers_;  // started with the first blocks
};

}  // namespace

std::vector<Example> TrimAndPack(const std::vector<Example>& examples,
                                 const FeatureLengths& lengths) {
  CheckLengths(lengths, "trim_and_pack");
  std::vector<Example> out;
  const size_t n = static_cast<size_t>(BlockSize(lengths));
  for (size_t start = 0; start < examples.size(); start += n) {
    const size_t end = std::min(examples.size(), start + n);
    std::vector<Example> block(examples.begin() + start, examples.begin() + end);
    for (auto& r : PackBlock(block, lengths)) out.push_back(std::move(r));
  }
  return out;
}

DatasetPtr TrimAndPackDataset(DatasetPtr input, const FeatureLengths& lengths,
                              int num_threads) {
  CheckLengths(lengths, "trim_and_pack");
  T5XX_CHECK(input != nullptr, "trim_and_pack: input dataset is null");
  T5XX_CHECK(num_threads >= 0, "trim_and_pack: num_threads must be >= 0, got " +
                                   std::to_string(num_threads));
  return std::make_unique<PackDataset>(std::move(input), lengths,
                                       ResolveDataThreads(num_threads));
}

Example TrimAndPad(Example ex, const FeatureLengths& lengths) {
  for (const auto& [k, L] : lengths) {
    (void)TokensFor(ex, k, "trim_and_pad");
    Tokens& t = std::get<Tokens>(ex[k]);
    t.resize(static_cast<size_t>(L), 0);
  }
  return ex;
}

// ---------------------------------------------------------------------------

namespace {

class ShuffleDataset : public Dataset {
 public:
  ShuffleDataset(DatasetPtr input, int64_t buffer_size, uint64_t seed)
      : input_(std::move(input)), buffer_size_(static_cast<size_t>(buffer_size)),
        seed_(seed) {}
  std::optional<Example> Next() override {
    if (filling_ || next_ == window_.size()) {
      if (!filling_) {
        if (exhausted_) return std::nullopt;
        StartWindow();
      }
      Fill();  // an input error leaves the window filling: the next call goes on
      if (window_.empty()) return std::nullopt;
    }
    return std::move(window_[order_[next_++]]);
  }
  // Compact (dataset.h, version 2): {"window": the window's number, "input":
  // the input's state where it started, "skip": its examples emitted}; after
  // a window is emitted whole, the next window's number, the input's state
  // now and 0.
  nlohmann::json SaveState() const override {
    if (!saveable_) (void)input_->SaveState();  // throws the input's error
    if (window_started_ && (filling_ || next_ < window_.size())) {
      return {{"window", window_index_}, {"skip", next_}, {"input", window_start_}};
    }
    return {{"window", window_started_ ? window_index_ + 1 : window_index_},
            {"skip", 0},
            {"input", input_->SaveState()}};
  }
  void RestoreState(const nlohmann::json& state) override {
    window_index_ = StateCount(state, "window", "Shuffle");
    const uint64_t skip = StateCount(state, "skip", "Shuffle");
    T5XX_CHECK(skip <= buffer_size_, "Shuffle: saved position is example " +
                                         std::to_string(skip) + " of a window of buffer_size " +
                                         std::to_string(buffer_size_));
    input_->RestoreState(StateField(state, "input", "Shuffle"));
    if (skip == 0) return;
    StartWindow();
    while (filling_) {
      try {
        Fill();
      } catch (const Error&) {  // the saved run met it while filling and went on
      }
    }
    T5XX_CHECK(skip <= window_.size(),
               "Shuffle: the saved position is example " + std::to_string(skip) +
                   " of window " + std::to_string(window_index_) +
                   ", but the data ends after " + std::to_string(window_.size()) +
                   " examples of it (did the data or the configuration change?)");
    next_ = skip;
  }

 private:
  void StartWindow() {
    if (window_started_) ++window_index_;
    window_started_ = true;
    window_start_ = InputStateOrNull(*input_, &saveable_);
    window_.clear();
    order_.clear();
    next_ = 0;
    filling_ = true;
  }
  // Reads the window's examples; once it is full (or the input ended),
  // orders it: a Fisher-Yates permutation drawn from (seed, window number).
  void Fill() {
    exhausted_ = !ReadUpTo(*input_, buffer_size_, &window_);
    filling_ = false;
    order_.resize(window_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    StatelessRng rng(seed_, window_index_, seed_purpose::kShuffleBuffer);
    for (size_t i = order_.size(); i > 1; --i) {
      const size_t j = static_cast<size_t>(rng.UniformInt(static_cast<int64_t>(i)));
      std::swap(order_[i - 1], order_[j]);
    }
  }

  DatasetPtr input_;
  size_t buffer_size_;
  uint64_t seed_;
  std::vector<Example> window_;
  std::vector<size_t> order_;  // emission order of window_'s examples
  size_t next_ = 0;            // examples of the window emitted
  uint64_t window_index_ = 0;
  bool window_started_ = false;
  bool filling_ = false;
  bool exhausted_ = false;
  nlohmann::json window_start_;  // the input's state where the window started
  bool saveable_ = true;         // InputStateOrNull
};

}  // namespace

DatasetPtr Shuffle(DatasetPtr input, int64_t buffer_size, uint64_t seed) {
  T5XX_CHECK(input != nullptr, "Shuffle: input dataset is null");
  T5XX_CHECK(buffer_size >= 1, "Shuffle: buffer_size must be >= 1, got " +
                              std::to_string(buffer_size));
  return std::make_unique<ShuffleDataset>(std::move(input), buffer_size, seed);
}

}  // namespace t5xx::seqio
