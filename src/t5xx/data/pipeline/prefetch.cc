// Prefetch: the dataset stage that reads its input on its own thread, ahead
// of the consumer (tf.data's Dataset.prefetch), declared in dataset.h.
#include <algorithm>
#include <deque>
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

using Block = std::vector<Example>;

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
    while (current_.empty()) {
      if (!producer_) return input_->Next();
      std::optional<Block> block = producer_->Next();
      if (!block) return std::nullopt;
      current_.assign(std::make_move_iterator(block->begin()),
                      std::make_move_iterator(block->end()));
    }
    Example out = std::move(current_.front());
    current_.pop_front();
    return out;
  }

  json SaveState() const override {
    auto save = [&](const std::deque<Block>& queued) {
      json buffered = json::array();
      for (const Example& ex : current_) buffered.push_back(ExampleToJson(ex));
      for (const Block& b : queued)
        for (const Example& ex : b) buffered.push_back(ExampleToJson(ex));
      // A block whose read failed part-way is queued; its error stays with
      // the input, whose state is saved as it is.
      return json{{"buffered", std::move(buffered)}, {"input", input_->SaveState()}};
    };
    if (!producer_) return save({});
    return producer_->WithProducerIdle(save);
  }

  void RestoreState(const json& state) override {
    T5XX_CHECK(!producer_ || !producer_->started(),
               "Prefetch: RestoreState must be called before the first Next()");
    current_.clear();
    if (state.is_object() && !state.contains("buffered")) {
      // A position saved before this stage was added to the pipeline (a
      // feature converter's input): the state is the input's own.
      input_->RestoreState(state);
      return;
    }
    const json& buffered = StateField(state, "buffered", "Prefetch");
    T5XX_CHECK(buffered.is_array(), "Prefetch: saved field 'buffered' must be an array");
    input_->RestoreState(StateField(state, "input", "Prefetch"));
    std::vector<Example> examples;
    for (const json& j : buffered) examples.push_back(ExampleFromJson(j));
    // The input's position is at a block boundary (blocks are whole until
    // the input ends): the first examples % block_size_ finish the block the
    // consumer was in, the rest are whole blocks, queued as the thread had
    // them, so this run's blocks (and later saved states) line up with the
    // saved run's.
    const size_t head = producer_ ? examples.size() % block_size_ : examples.size();
    current_.assign(std::make_move_iterator(examples.begin()),
                    std::make_move_iterator(examples.begin() + static_cast<ptrdiff_t>(head)));
    std::vector<Block> blocks;
    for (size_t i = head; i < examples.size(); i += block_size_) {
      blocks.emplace_back(std::make_move_iterator(examples.begin() + static_cast<ptrdiff_t>(i)),
                          std::make_move_iterator(examples.begin() +
                                                  static_cast<ptrdiff_t>(i + block_size_)));
    }
    if (!blocks.empty()) producer_->Prepend(std::move(blocks));
  }

 private:
  // Runs on the producer thread: up to block_size_ examples; an error after
  // some examples is kept and rethrown by the next call, so the examples
  // read before it reach the consumer first.
  std::optional<Block> ReadBlock() {
    if (pending_error_) std::rethrow_exception(pending_error_);
    Block block;
    try {
      while (!input_ended_ && block.size() < block_size_) {
        std::optional<Example> ex = input_->Next();
        if (!ex) {
          input_ended_ = true;  // a dataset is not read past its end
          break;
        }
        block.push_back(std::move(*ex));
      }
    } catch (...) {
      if (block.empty()) throw;
      pending_error_ = std::current_exception();
    }
    if (block.empty()) return std::nullopt;
    return block;
  }

  DatasetPtr input_;
  const size_t block_size_;
  std::exception_ptr pending_error_;           // producer thread only
  bool input_ended_ = false;                   // producer thread only
  std::deque<Example> current_;                // consumer side: taken, not yet emitted
  std::unique_ptr<BackgroundProducer<Block>> producer_;  // last: joined first
};

}  // namespace

DatasetPtr Prefetch(DatasetPtr input, size_t buffer_size) {
  T5XX_CHECK(input != nullptr, "Prefetch: input dataset is null");
  return std::make_unique<PrefetchDataset>(std::move(input), buffer_size);
}

}  // namespace t5xx::seqio
