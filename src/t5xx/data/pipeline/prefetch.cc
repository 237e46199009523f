// Prefetch: the dataset stage that reads its input on its own thread, ahead
// of the consumer (tf.data's Dataset.prefetch), declared in dataset.h.
#include <algorithm>
#include <deque>
#include <optional>
#include <exception>
#include <memory>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/background_producer.h"
#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

using json = nlohmann::json;

namespace {

// The largest block of another Prefetch stage whose position restores here
// (t5xx's feature converter uses blocks of 128).
constexpr uint64_t kMaxRestoredPrefetchBlock = 1024;

// The examples the thread read in one go, and the input's state before them.
struct Block {
  json start;
  std::vector<Example> examples;
};

class PrefetchDataset : public Dataset {
 public:
  PrefetchDataset(DatasetPtr input, size_t buffer_size)
      : input_(std::move(input)),
        block_size_(std::max<size_t>(1, buffer_size / 2)) {
    if (buffer_size > 0) {
      const size_t depth = (buffer_size + block_size_ - 1) / block_size_;
      producer_ = std::make_unique<BackgroundProducer<Block>>([this] { return ReadBlock(); },
                                                              depth);
    }
  }

  std::optional<Example> Next() override {
    if (!producer_) return input_->Next();
    while (!current_ || taken_ == current_->examples.size()) {
      std::optional<Block> block = producer_->Next();
      if (!block) return std::nullopt;
      current_ = std::move(block);
      taken_ = 0;
    }
    return std::move(current_->examples[taken_++]);
  }

  // Compact (dataset.h, version 2): {"input": the input's state before the
  // block the consumer is in, "skip": its examples taken}, so saving never
  // waits for the thread and holds no examples.
  json SaveState() const override {
    // (A null start: the input cannot save; its SaveState below says why.)
    if (current_ && !current_->start.is_null()) {
      return json{{"input", current_->start}, {"skip", taken_}};
    }
    if (!producer_ || !producer_->started()) {
      return json{{"input", input_->SaveState()}, {"skip", 0}};
    }
    // Started, but no block reached the consumer (the input had none), or
    // the input cannot save: asked while the thread is idle.
    return producer_->WithProducerIdle([&](const std::deque<Block>&) {
      return json{{"input", input_->SaveState()}, {"skip", 0}};
    });
  }

  void RestoreState(const json& state) override {
    T5XX_CHECK(!producer_ || !producer_->started(),
               "Prefetch: RestoreState must be called before the first Next()");
    if (state.is_object() && !state.contains("skip")) {
      // A position saved before this stage was added to the pipeline (a
      // feature converter's input): the state is the input's own.
      input_->RestoreState(state);
      return;
    }
    input_->RestoreState(StateField(state, "input", "Prefetch"));
    // The thread's blocks start at the restored position, as the saved
    // run's did, so later saved states line up with the saved run's.
    // The saving stage's blocks may have had another size (a position saved
    // with a thread restores into a stage without one): up to
    // kMaxRestoredPrefetchBlock examples, or this stage's block if larger.
    SkipOutputs(*this, StateCount(state, "skip", "Prefetch"),
                std::max<uint64_t>(block_size_, kMaxRestoredPrefetchBlock), "Prefetch");
  }

 private:
  // Runs on the producer thread: up to block_size_ examples; an error after
  // some examples is kept and rethrown by the next call, so the examples
  // read before it reach the consumer first.
  std::optional<Block> ReadBlock() {
    if (pending_error_) std::rethrow_exception(pending_error_);
    Block block;
    block.start = InputStateOrNull(*input_, &saveable_);
    try {
      while (!input_ended_ && block.examples.size() < block_size_) {
        std::optional<Example> ex = input_->Next();
        if (!ex) {
          input_ended_ = true;  // a dataset is not read past its end
          break;
        }
        block.examples.push_back(std::move(*ex));
      }
    } catch (...) {
      if (block.examples.empty()) throw;
      pending_error_ = std::current_exception();
    }
    if (block.examples.empty()) return std::nullopt;
    return block;
  }

  DatasetPtr input_;
  const size_t block_size_;
  std::exception_ptr pending_error_;  // producer thread only
  bool input_ended_ = false;          // producer thread only
  bool saveable_ = true;                  // producer thread only (InputStateOrNull)
  std::optional<Block> current_;  // consumer side: the block being taken from
  size_t taken_ = 0;              // its examples returned
  std::unique_ptr<BackgroundProducer<Block>> producer_;  // last: joined first
};

}  // namespace

DatasetPtr Prefetch(DatasetPtr input, size_t buffer_size) {
  T5XX_CHECK(input != nullptr, "Prefetch: input dataset is null");
  return std::make_unique<PrefetchDataset>(std::move(input), buffer_size);
}

}  // namespace t5xx::seqio
