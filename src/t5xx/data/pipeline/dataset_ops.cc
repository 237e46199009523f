// Dataset ops on one input, example by example (declared in dataset.h): Map,
// MapIndexed, Filter, FlatMap (tf.data map/filter/flat_map, seqio's
// map_over_dataset), Take and Skip (tf.data take/skip), each with its saved
// state.
#include "t5xx/data/pipeline/dataset.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/pending_examples.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

using json = nlohmann::json;

namespace {

class MapDataset : public Dataset {
 public:
  MapDataset(DatasetPtr input, std::function<Example(Example)> fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}
  std::optional<Example> Next() override {
    auto ex = input_->Next();
    if (!ex) return std::nullopt;
    return fn_(std::move(*ex));
  }
  json SaveState() const override { return {{"input", input_->SaveState()}}; }
  void RestoreState(const json& state) override {
    input_->RestoreState(StateField(state, "input", "Map"));
  }

 private:
  DatasetPtr input_;
  std::function<Example(Example)> fn_;
};

class FilterDataset : public Dataset {
 public:
  FilterDataset(DatasetPtr input, std::function<bool(const Example&)> pred)
      : input_(std::move(input)), pred_(std::move(pred)) {}
  std::optional<Example> Next() override {
    while (auto ex = input_->Next()) {
      if (pred_(*ex)) return ex;
    }
    return std::nullopt;
  }
  json SaveState() const override { return {{"input", input_->SaveState()}}; }
  void RestoreState(const json& state) override {
    input_->RestoreState(StateField(state, "input", "Filter"));
  }

 private:
  DatasetPtr input_;
  std::function<bool(const Example&)> pred_;
};

class FlatMapDataset : public Dataset {
 public:
  FlatMapDataset(DatasetPtr input,
                 std::function<std::vector<Example>(Example)> fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}
  std::optional<Example> Next() override {
    while (pending_.empty()) {
      json start = {{"input", InputStateOrNull(*input_, &saveable_)}};
      auto ex = input_->Next();
      if (!ex) return std::nullopt;
      pending_.BeginUnit(std::move(start));
      pending_.PushAll(fn_(std::move(*ex)));
    }
    return pending_.Pop();
  }
  // Compact (dataset.h, version 2): {"input": the input's state before the
  // example whose outputs are being emitted, "skip": its outputs emitted}.
  json SaveState() const override {
    if (!saveable_) (void)input_->SaveState();  // throws the input's error
    return pending_.Position([&] { return json{{"input", input_->SaveState()}}; });
  }
  // Forms the unit again (the example's outputs) and drops "skip" of them.
  void RestoreState(const json& state) override {
    input_->RestoreState(StateField(state, "input", "FlatMap"));
    const uint64_t skip = StateCount(state, "skip", "FlatMap");
    if (skip == 0) return;
    std::vector<Example> outputs;
    json start = {{"input", InputStateOrNull(*input_, &saveable_)}};
    if (auto ex = input_->Next()) outputs = fn_(std::move(*ex));
    T5XX_CHECK(skip < outputs.size(),
               "FlatMap: the saved position is output " + std::to_string(skip) +
                   " of an example that has " + std::to_string(outputs.size()) +
                   " (did the data or the configuration change?)");
    outputs.erase(outputs.begin(), outputs.begin() + static_cast<std::ptrdiff_t>(skip));
    pending_.BeginUnit(std::move(start));
    pending_.PushAll(std::move(outputs));
    // The unit's outputs already emitted count toward its position.
    pending_.CountEmitted(skip);
  }

 private:
  DatasetPtr input_;
  std::function<std::vector<Example>(Example)> fn_;
  PendingExamples pending_;
  bool saveable_ = true;  // InputStateOrNull
};

class MapIndexedDataset : public Dataset {
 public:
  using Fn = std::function<std::optional<Example>(Example, uint64_t)>;
  MapIndexedDataset(DatasetPtr input, Fn fn)
      : input_(std::move(input)), fn_(std::move(fn)) {}
  std::optional<Example> Next() override {
    while (auto ex = input_->Next()) {
      auto out = fn_(std::move(*ex), index_++);
      if (out) return out;
    }
    return std::nullopt;
  }
  json SaveState() const override {
    return {{"index", index_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const json& state) override {
    index_ = StateCount(state, "index", "indexed map");
    input_->RestoreState(StateField(state, "input", "indexed map"));
  }

 private:
  DatasetPtr input_;
  Fn fn_;
  uint64_t index_ = 0;
};

class TakeDataset : public Dataset {
 public:
  TakeDataset(DatasetPtr input, int64_t n) : input_(std::move(input)), n_(n) {}
  std::optional<Example> Next() override {
    if (n_ >= 0 && taken_ >= n_) return std::nullopt;
    auto ex = input_->Next();
    if (ex) ++taken_;
    return ex;
  }
  json SaveState() const override {
    return {{"taken", taken_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const json& state) override {
    taken_ = StateField(state, "taken", "Take").get<int64_t>();
    T5XX_CHECK(taken_ >= 0 && (n_ < 0 || taken_ <= n_),
          "Take: saved count " + std::to_string(taken_) + " is outside [0, " +
              std::to_string(n_) + "]");
    input_->RestoreState(StateField(state, "input", "Take"));
  }

 private:
  DatasetPtr input_;
  int64_t n_;
  int64_t taken_ = 0;
};

class SkipDataset : public Dataset {
 public:
  SkipDataset(DatasetPtr input, int64_t n) : input_(std::move(input)), n_(n) {}
  std::optional<Example> Next() override {
    if (!skipped_) {
      skipped_ = true;
      for (int64_t i = 0; n_ < 0 || i < n_; ++i)
        if (!input_->Next()) return std::nullopt;
      if (n_ < 0) return std::nullopt;
    }
    if (n_ < 0) return std::nullopt;
    return input_->Next();
  }
  json SaveState() const override {
    return {{"skipped", skipped_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const json& state) override {
    skipped_ = StateField(state, "skipped", "Skip").get<bool>();
    input_->RestoreState(StateField(state, "input", "Skip"));
  }

 private:
  DatasetPtr input_;
  int64_t n_;
  bool skipped_ = false;
};

class ShardDataset : public Dataset {
 public:
  ShardDataset(DatasetPtr input, int num_shards, int index)
      : input_(std::move(input)), num_shards_(num_shards), index_(index) {}
  std::optional<Example> Next() override {
    // Skips to the next position p with p % num_shards == index.
    while (auto ex = input_->Next()) {
      if (position_++ % num_shards_ == index_) return ex;
    }
    return std::nullopt;
  }
  json SaveState() const override {
    return {{"position", position_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const json& state) override {
    position_ = StateField(state, "position", "Shard").get<int64_t>();
    T5XX_CHECK(position_ >= 0, "Shard: saved position " + std::to_string(position_) +
                                   " is negative");
    input_->RestoreState(StateField(state, "input", "Shard"));
  }

 private:
  DatasetPtr input_;
  int num_shards_;
  int index_;
  int64_t position_ = 0;  // examples pulled from the input so far
};

}  // namespace

DatasetPtr Map(DatasetPtr input, std::function<Example(Example)> fn) {
  T5XX_CHECK(input != nullptr, "Map: input dataset is null");
  return std::make_unique<MapDataset>(std::move(input), std::move(fn));
}

DatasetPtr Filter(DatasetPtr input, std::function<bool(const Example&)> pred) {
  T5XX_CHECK(input != nullptr, "Filter: input dataset is null");
  return std::make_unique<FilterDataset>(std::move(input), std::move(pred));
}

DatasetPtr FlatMap(DatasetPtr input,
                   std::function<std::vector<Example>(Example)> fn) {
  T5XX_CHECK(input != nullptr, "FlatMap: input dataset is null");
  return std::make_unique<FlatMapDataset>(std::move(input), std::move(fn));
}

DatasetPtr MapIndexed(DatasetPtr input,
                      std::function<std::optional<Example>(Example, uint64_t)> fn) {
  T5XX_CHECK(input != nullptr, "MapIndexed: input dataset is null");
  return std::make_unique<MapIndexedDataset>(std::move(input), std::move(fn));
}

DatasetPtr Take(DatasetPtr input, int64_t n) {
  T5XX_CHECK(input != nullptr, "Take: input dataset is null");
  T5XX_CHECK(n >= -1, "Take: n must be -1 (all) or >= 0, got " + std::to_string(n));
  return std::make_unique<TakeDataset>(std::move(input), n);
}

DatasetPtr Skip(DatasetPtr input, int64_t n) {
  T5XX_CHECK(input != nullptr, "Skip: input dataset is null");
  T5XX_CHECK(n >= -1, "Skip: n must be -1 (all) or >= 0, got " + std::to_string(n));
  return std::make_unique<SkipDataset>(std::move(input), n);
}

DatasetPtr Shard(DatasetPtr input, int num_shards, int index) {
  T5XX_CHECK(input != nullptr, "Shard: input dataset is null");
  T5XX_CHECK(num_shards >= 1 && index >= 0 && index < num_shards,
             "Shard: need num_shards >= 1 and 0 <= index < num_shards, got index " +
                 std::to_string(index) + " of " + std::to_string(num_shards));
  if (num_shards == 1) return input;
  return std::make_unique<ShardDataset>(std::move(input), num_shards, index);
}

}  // namespace t5xx::seqio
