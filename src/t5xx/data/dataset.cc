// Basic Dataset combinators (see dataset.h).
#include "t5xx/data/dataset.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <exception>
#include <thread>
#include <typeinfo>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/utf8.h"

namespace t5xx::seqio {

using json = nlohmann::json;

namespace {
std::string StageName(const Dataset& ds) {
  const char* mangled = typeid(ds).name();
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : mangled;
  std::free(d);
  return out;
}
}  // namespace

json Dataset::SaveState() const {
  throw Error("dataset stage " + StageName(*this) +
              " cannot save its position (no SaveState)");
}

void Dataset::RestoreState(const json&) {
  throw Error("dataset stage " + StageName(*this) +
              " cannot save its position (no RestoreState)");
}

json ExampleToJson(const Example& ex) {
  json j = json::object();
  for (const auto& [k, v] : ex) {
    if (const auto* s = std::get_if<std::string>(&v))
      j[k] = *s;
    else
      j[k] = std::get<Tokens>(v);
  }
  return j;
}

Example ExampleFromJson(const json& j) {
  T5XX_CHECK(j.is_object(), "pipeline state: an example must be a JSON object, got " +
                           std::string(TruncateUtf8(DumpJson(j), 80)));
  Example ex;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_string())
      ex[it.key()] = it->get<std::string>();
    else if (it->is_array())
      ex[it.key()] = it->get<Tokens>();
    else
      throw Error("pipeline state: feature '" + it.key() +
                  "' must be a string or an array of ints");
  }
  return ex;
}

const json& StateField(const json& state, const char* field, const char* who) {
  T5XX_CHECK(state.is_object() && state.contains(field),
        std::string(who) + ": saved state lacks field '" + field +
            "' (state from a different pipeline?)");
  return state.at(field);
}

json WrapRootState(json state) {
  return json{{"version", kPipelineStateVersion}, {"state", std::move(state)}};
}

json UnwrapRootState(const json& root) {
  T5XX_CHECK(root.is_object() && root.contains("version") &&
            root["version"].is_number_integer(),
        "pipeline state: missing integer \"version\" field");
  const int v = root["version"].get<int>();
  T5XX_CHECK(v <= kPipelineStateVersion,
        "pipeline state has version " + std::to_string(v) +
            ", newer than this build supports (" +
            std::to_string(kPipelineStateVersion) +
            "); restore it with a newer t5xx");
  T5XX_CHECK(v >= 1, "pipeline state: invalid version " + std::to_string(v));
  return StateField(root, "state", "pipeline state");
}

json SavePipelineState(const Dataset& ds) { return WrapRootState(ds.SaveState()); }

void RestorePipelineState(Dataset& ds, const json& root) {
  ds.RestoreState(UnwrapRootState(root));
}

namespace {

class VectorDataset : public Dataset {
 public:
  explicit VectorDataset(std::vector<Example> examples)
      : examples_(std::move(examples)) {}
  std::optional<Example> Next() override {
    if (pos_ >= examples_.size()) return std::nullopt;
    return std::move(examples_[pos_++]);
  }
  json SaveState() const override { return {{"pos", pos_}}; }
  void RestoreState(const json& state) override {
    const size_t pos = StateField(state, "pos", "FromVector").get<size_t>();
    T5XX_CHECK(pos <= examples_.size(),
          "FromVector: saved position " + std::to_string(pos) +
              " is past the end (" + std::to_string(examples_.size()) + ")");
    pos_ = pos;
  }

 private:
  std::vector<Example> examples_;
  size_t pos_ = 0;
};

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
      auto ex = input_->Next();
      if (!ex) return std::nullopt;
      for (auto& out : fn_(std::move(*ex))) pending_.push_back(std::move(out));
    }
    Example out = std::move(pending_.front());
    pending_.pop_front();
    return out;
  }
  json SaveState() const override {
    json pending = json::array();
    for (const auto& ex : pending_) pending.push_back(ExampleToJson(ex));
    return {{"pending", std::move(pending)}, {"input", input_->SaveState()}};
  }
  void RestoreState(const json& state) override {
    pending_.clear();
    for (const auto& j : StateField(state, "pending", "FlatMap"))
      pending_.push_back(ExampleFromJson(j));
    input_->RestoreState(StateField(state, "input", "FlatMap"));
  }

 private:
  DatasetPtr input_;
  std::function<std::vector<Example>(Example)> fn_;
  std::deque<Example> pending_;
};

class RepeatDataset : public Dataset {
 public:
  RepeatDataset(std::function<DatasetPtr()> factory, int num_epochs)
      : factory_(std::move(factory)), num_epochs_(num_epochs) {}
  RepeatDataset(std::function<DatasetPtr(int64_t)> factory, int num_epochs)
      : indexed_factory_(std::move(factory)), num_epochs_(num_epochs) {}
  std::optional<Example> Next() override {
    while (true) {
      if (!current_) {
        if (num_epochs_ >= 0 && epoch_ >= num_epochs_) return std::nullopt;
        current_ = Make(epoch_);
        ++epoch_;
        yielded_this_epoch_ = false;
      }
      auto ex = current_->Next();
      if (ex) {
        yielded_this_epoch_ = true;
        return ex;
      }
      current_.reset();
      // An empty dataset repeated forever would spin: stop instead.
      if (!yielded_this_epoch_) return std::nullopt;
    }
  }
  json SaveState() const override {
    return {{"epoch", epoch_},
            {"yielded_this_epoch", yielded_this_epoch_},
            {"input", current_ ? current_->SaveState() : json(nullptr)}};
  }
  void RestoreState(const json& state) override {
    const int epoch = StateField(state, "epoch", "Repeat").get<int>();
    T5XX_CHECK(epoch >= 0 && (num_epochs_ < 0 || epoch <= num_epochs_),
          "Repeat: saved epoch " + std::to_string(epoch) +
              " is outside [0, " + std::to_string(num_epochs_) + "]");
    T5XX_CHECK(epoch_ == 0 && !current_,
          "Repeat: RestoreState needs a freshly constructed pipeline");
    const json& input = StateField(state, "input", "Repeat");
    yielded_this_epoch_ =
        StateField(state, "yielded_this_epoch", "Repeat").get<bool>();
    if (!indexed_factory_) {
      // A stateful factory counts epochs itself: replay the calls.
      const int calls = input.is_null() ? epoch : epoch - 1;
      for (int e = 0; e < calls; ++e) (void)factory_();
    }
    epoch_ = epoch;
    if (!input.is_null()) {
      T5XX_CHECK(epoch >= 1, "Repeat: saved state has an input but epoch 0");
      current_ = Make(epoch - 1);
      current_->RestoreState(input);
    }
  }

 private:
  DatasetPtr Make(int64_t e) {
    DatasetPtr ds = indexed_factory_ ? indexed_factory_(e) : factory_();
    T5XX_CHECK(ds != nullptr, "Repeat: factory returned a null dataset for epoch " +
                             std::to_string(e));
    return ds;
  }

  std::function<DatasetPtr()> factory_;
  std::function<DatasetPtr(int64_t)> indexed_factory_;
  int num_epochs_;
  int epoch_ = 0;
  bool yielded_this_epoch_ = false;
  DatasetPtr current_;
};

// Chunked, order-preserving parallel map (see ParallelMap in dataset.h).
class ParallelMapDataset : public Dataset {
 public:
  using Fn = std::function<Example(Example, uint64_t)>;
  ParallelMapDataset(DatasetPtr input, Fn fn, int num_threads)
      : input_(std::move(input)), fn_(std::move(fn)),
        num_threads_(num_threads),
        chunk_size_(static_cast<size_t>(64) * static_cast<size_t>(num_threads)) {}

  std::optional<Example> Next() override {
    if (pending_.empty() && !input_done_) FillChunk();
    if (pending_.empty()) return std::nullopt;
    Example out = std::move(pending_.front());
    pending_.pop_front();
    return out;
  }

  json SaveState() const override {
    json pending = json::array();
    for (const auto& ex : pending_) pending.push_back(ExampleToJson(ex));
    return {{"index", index_},
            {"input_done", input_done_},
            {"pending", std::move(pending)},
            {"input", input_->SaveState()}};
  }
  void RestoreState(const json& state) override {
    index_ = StateField(state, "index", "ParallelMap").get<uint64_t>();
    input_done_ = StateField(state, "input_done", "ParallelMap").get<bool>();
    pending_.clear();
    for (const auto& j : StateField(state, "pending", "ParallelMap"))
      pending_.push_back(ExampleFromJson(j));
    input_->RestoreState(StateField(state, "input", "ParallelMap"));
  }

 private:
  void FillChunk() {
    std::vector<Example> chunk;
    chunk.reserve(chunk_size_);
    while (chunk.size() < chunk_size_) {
      auto ex = input_->Next();
      if (!ex) {
        input_done_ = true;
        break;
      }
      chunk.push_back(std::move(*ex));
    }
    if (chunk.empty()) return;
    const uint64_t base = index_;
    index_ += chunk.size();
    const size_t n = chunk.size();
    const size_t workers =
        std::min(n, static_cast<size_t>(num_threads_));
    std::vector<std::exception_ptr> errors(workers);
    auto work = [&](size_t w) {
      // Contiguous slice [begin, end) for worker w.
      const size_t begin = n * w / workers, end = n * (w + 1) / workers;
      try {
        for (size_t i = begin; i < end; ++i)
          chunk[i] = fn_(std::move(chunk[i]), base + i);
      } catch (...) {
        errors[w] = std::current_exception();
      }
    };
    std::vector<std::thread> threads;
    threads.reserve(workers - 1);
    for (size_t w = 1; w < workers; ++w) threads.emplace_back(work, w);
    work(0);  // the calling thread takes the first slice
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    for (auto& ex : chunk) pending_.push_back(std::move(ex));
  }

  DatasetPtr input_;
  Fn fn_;
  int num_threads_;
  size_t chunk_size_;
  uint64_t index_ = 0;  // input examples pulled so far
  bool input_done_ = false;
  std::deque<Example> pending_;  // processed, not yet emitted
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

class InterleaveDataset : public Dataset {
 public:
  InterleaveDataset(std::vector<std::function<DatasetPtr()>> factories,
                    int cycle_length, int block_length)
      : factories_(std::move(factories)),
        block_length_(block_length),
        slots_(static_cast<size_t>(cycle_length)),
        slot_factory_(static_cast<size_t>(cycle_length), -1) {}

  std::optional<Example> Next() override {
    while (next_factory_ < factories_.size() || num_open_ > 0) {
      auto& slot = slots_[cycle_index_];
      if (slot) {
        auto ex = slot->Next();
        if (ex) {
          if (++block_index_ == block_length_) AdvanceCycle();
          return ex;
        }
        slot.reset();
        slot_factory_[cycle_index_] = -1;
        --num_open_;
        AdvanceCycle();
      } else if (next_factory_ < factories_.size()) {
        slot = Open(next_factory_);
        slot_factory_[cycle_index_] = static_cast<int64_t>(next_factory_);
        ++next_factory_;
        ++num_open_;
      } else {
        AdvanceCycle();
      }
    }
    return std::nullopt;
  }

  json SaveState() const override {
    json slots = json::array();
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i]) {
        slots.push_back({{"factory", slot_factory_[i]},
                         {"input", slots_[i]->SaveState()}});
      } else {
        slots.push_back(nullptr);
      }
    }
    return {{"cycle_index", cycle_index_},
            {"block_index", block_index_},
            {"next_factory", next_factory_},
            {"slots", std::move(slots)}};
  }
  void RestoreState(const json& state) override {
    T5XX_CHECK(num_open_ == 0 && next_factory_ == 0,
          "Interleave: RestoreState needs a freshly constructed pipeline");
    const json& slots = StateField(state, "slots", "Interleave");
    T5XX_CHECK(slots.is_array() && slots.size() == slots_.size(),
          "Interleave: saved state has " + std::to_string(slots.size()) +
              " slots, expected cycle_length " + std::to_string(slots_.size()));
    cycle_index_ = StateField(state, "cycle_index", "Interleave").get<size_t>();
    block_index_ = StateField(state, "block_index", "Interleave").get<int>();
    next_factory_ = StateField(state, "next_factory", "Interleave").get<size_t>();
    T5XX_CHECK(cycle_index_ < slots_.size() && next_factory_ <= factories_.size() &&
              block_index_ >= 0 && block_index_ < block_length_,
          "Interleave: saved position is out of range");
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots[i].is_null()) continue;
      const int64_t f = StateField(slots[i], "factory", "Interleave").get<int64_t>();
      T5XX_CHECK(f >= 0 && static_cast<size_t>(f) < next_factory_,
            "Interleave: saved slot factory " + std::to_string(f) +
                " is out of range");
      slots_[i] = Open(static_cast<size_t>(f));
      slots_[i]->RestoreState(StateField(slots[i], "input", "Interleave"));
      slot_factory_[i] = f;
      ++num_open_;
    }
  }

 private:
  DatasetPtr Open(size_t f) {
    DatasetPtr ds = factories_[f]();
    T5XX_CHECK(ds != nullptr, "Interleave: factory " + std::to_string(f) +
                             " returned a null dataset");
    return ds;
  }
  void AdvanceCycle() {
    block_index_ = 0;
    cycle_index_ = (cycle_index_ + 1) % slots_.size();
  }

  std::vector<std::function<DatasetPtr()>> factories_;
  int block_length_;
  std::vector<DatasetPtr> slots_;
  std::vector<int64_t> slot_factory_;  // factory index per open slot, else -1
  size_t cycle_index_ = 0;
  int block_index_ = 0;
  size_t next_factory_ = 0;
  size_t num_open_ = 0;
};

}  // namespace

DatasetPtr FromVector(std::vector<Example> examples) {
  return std::make_unique<VectorDataset>(std::move(examples));
}

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

DatasetPtr Repeat(std::function<DatasetPtr()> factory, int num_epochs) {
  T5XX_CHECK(num_epochs >= -1,
        "Repeat: num_epochs must be -1 (forever) or >= 0, got " +
            std::to_string(num_epochs));
  return std::make_unique<RepeatDataset>(std::move(factory), num_epochs);
}

DatasetPtr RepeatIndexed(std::function<DatasetPtr(int64_t epoch)> factory,
                         int num_epochs) {
  T5XX_CHECK(num_epochs >= -1,
        "Repeat: num_epochs must be -1 (forever) or >= 0, got " +
            std::to_string(num_epochs));
  return std::make_unique<RepeatDataset>(std::move(factory), num_epochs);
}

namespace {

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
  nlohmann::json SaveState() const override {
    return {{"index", index_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const nlohmann::json& state) override {
    index_ = StateField(state, "index", "indexed map").get<uint64_t>();
    input_->RestoreState(StateField(state, "input", "indexed map"));
  }

 private:
  DatasetPtr input_;
  Fn fn_;
  uint64_t index_ = 0;
};

}  // namespace

DatasetPtr MapIndexed(DatasetPtr input,
                      std::function<std::optional<Example>(Example, uint64_t)> fn) {
  T5XX_CHECK(input != nullptr, "MapIndexed: input dataset is null");
  return std::make_unique<MapIndexedDataset>(std::move(input), std::move(fn));
}

DatasetPtr ParallelMapIndexed(DatasetPtr input,
                              std::function<Example(Example, uint64_t)> fn,
                              int num_threads) {
  T5XX_CHECK(input != nullptr, "ParallelMap: input dataset is null");
  T5XX_CHECK(num_threads >= 0, "ParallelMap: num_threads must be >= 0, got " +
                              std::to_string(num_threads));
  return std::make_unique<ParallelMapDataset>(std::move(input), std::move(fn),
                                              std::max(num_threads, 1));
}

DatasetPtr ParallelMap(DatasetPtr input, std::function<Example(Example)> fn,
                       int num_threads) {
  T5XX_CHECK(input != nullptr, "ParallelMap: input dataset is null");
  T5XX_CHECK(num_threads >= 0, "ParallelMap: num_threads must be >= 0, got " +
                              std::to_string(num_threads));
  if (num_threads <= 1) return Map(std::move(input), std::move(fn));
  return ParallelMapIndexed(
      std::move(input),
      [fn = std::move(fn)](Example ex, uint64_t) { return fn(std::move(ex)); },
      num_threads);
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

DatasetPtr Interleave(std::vector<std::function<DatasetPtr()>> factories,
                      int cycle_length, int block_length) {
  T5XX_CHECK(cycle_length >= 1, "Interleave: cycle_length must be >= 1, got " +
                               std::to_string(cycle_length));
  T5XX_CHECK(block_length >= 1, "Interleave: block_length must be >= 1, got " +
                               std::to_string(block_length));
  return std::make_unique<InterleaveDataset>(std::move(factories), cycle_length,
                                             block_length);
}

std::vector<Example> Collect(Dataset& ds, size_t max_examples) {
  std::vector<Example> out;
  while (out.size() < max_examples) {
    auto ex = ds.Next();
    if (!ex) break;
    out.push_back(std::move(*ex));
  }
  return out;
}

}  // namespace t5xx::seqio
