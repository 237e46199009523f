// Datasets built from dataset factories (declared in dataset.h): Repeat /
// RepeatIndexed (tf.data repeat, one fresh input per epoch) and Interleave
// (tf.data interleave over several inputs), each with its saved state.
#include "t5xx/data/pipeline/dataset.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"

namespace t5xx::seqio {

using json = nlohmann::json;

namespace {

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

DatasetPtr Interleave(std::vector<std::function<DatasetPtr()>> factories,
                      int cycle_length, int block_length) {
  T5XX_CHECK(cycle_length >= 1, "Interleave: cycle_length must be >= 1, got " +
                               std::to_string(cycle_length));
  T5XX_CHECK(block_length >= 1, "Interleave: block_length must be >= 1, got " +
                               std::to_string(block_length));
  return std::make_unique<InterleaveDataset>(std::move(factories), cycle_length,
                                             block_length);
}

}  // namespace t5xx::seqio
