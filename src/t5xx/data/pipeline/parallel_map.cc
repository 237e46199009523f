// ParallelMap: the order-preserving, chunked multi-threaded map (tf.data's
// map with num_parallel_calls, deterministic=True), declared in dataset.h.
#include "t5xx/data/pipeline/dataset.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/data/pipeline/pending_examples.h"
#include "t5xx/data/pipeline/worker_group.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

using json = nlohmann::json;

namespace {

// The largest chunk a saved position can be in: 64 examples x the most
// data threads.
constexpr uint64_t kMaxSavedChunk = uint64_t{64} * kMaxDataThreads;

class ParallelMapDataset : public Dataset {
 public:
  using Fn = std::function<Example(Example, uint64_t)>;
  ParallelMapDataset(DatasetPtr input, Fn fn, int num_threads)
      : input_(std::move(input)), fn_(std::move(fn)),
        num_threads_(num_threads),
        chunk_size_(static_cast<size_t>(64) * static_cast<size_t>(num_threads)) {}

  // Emits the chunk's outputs in input order; an error (fn's on one
  // example, or the input's) is rethrown at its place in that order, after
  // the outputs before it, as Map would.
  std::optional<Example> Next() override {
    while (pending_.empty()) {
      if (input_done_) return std::nullopt;
      FillChunk();
    }
    return pending_.Pop();
  }

  // Compact (dataset.h, version 2): {"index", "input": the index and the
  // input's state where the chunk being emitted started, "skip": its outputs
  // emitted (errors included)}, the same for every thread count.
  json SaveState() const override {
    if (!saveable_) (void)input_->SaveState();  // throws the input's error
    return pending_.Position([&] {
      return json{{"index", index_}, {"input_done", input_done_}, {"input", input_->SaveState()}};
    });
  }
  // Also restores the layouts of Map ({"input"}) and MapIndexed ({"index",
  // "input"}), which tokenize and denoise saved before they became parallel
  // maps: nothing to skip, the input not done.
  void RestoreState(const json& state) override {
    const json& input = StateField(state, "input", "ParallelMap");
    index_ = state.contains("index") ? StateCount(state, "index", "ParallelMap") : 0;
    input_done_ = state.contains("input_done") && state.at("input_done").get<bool>();
    input_->RestoreState(input);
    // The saving run's chunk had 64 x its thread count examples (any count
    // restores: the chunk is replayed in this run's chunks).
    SkipOutputs(*this, state.contains("skip") ? StateCount(state, "skip", "ParallelMap") : 0,
                kMaxSavedChunk, "ParallelMap");
  }

 private:
  void FillChunk() {
    pending_.BeginUnit(
        {{"index", index_}, {"input", InputStateOrNull(*input_, &saveable_)}});
    std::vector<Example> chunk;
    chunk.reserve(chunk_size_);
    std::exception_ptr input_error;
    try {
      input_done_ = !ReadUpTo(*input_, chunk_size_, &chunk);
    } catch (...) {
      input_error = std::current_exception();  // after the examples read before it
    }
    const uint64_t base = index_;
    index_ += chunk.size();
    const size_t n = chunk.size();
    std::vector<std::exception_ptr> errors(n);
    // Each thread takes the next unprocessed example (documents of any
    // length keep every thread busy); outputs stay at their inputs' places.
    if (!workers_) workers_ = std::make_unique<WorkerGroup>(num_threads_ - 1);
    workers_->ParallelFor(n, [&](size_t i) {
      try {
        chunk[i] = fn_(std::move(chunk[i]), base + i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
    std::vector<Example> run;  // outputs since the last error
    run.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (errors[i]) {
        pending_.PushAll(std::move(run));
        run.clear();
        pending_.PushError(errors[i]);
      } else {
        run.push_back(std::move(chunk[i]));
      }
    }
    pending_.PushAll(std::move(run));
    if (input_error) pending_.PushError(input_error);
  }

  DatasetPtr input_;
  Fn fn_;
  int num_threads_;
  size_t chunk_size_;
  uint64_t index_ = 0;  // input examples pulled so far
  bool input_done_ = false;
  PendingExamples pending_;  // processed, not yet emitted (errors in place)
  bool saveable_ = true;     // InputStateOrNull
  std::unique_ptr<WorkerGroup> workers_;  // started with the first chunk
};

}  // namespace

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
  return ParallelMapIndexed(
      std::move(input),
      [fn = std::move(fn)](Example ex, uint64_t) { return fn(std::move(ex)); },
      num_threads);
}

}  // namespace t5xx::seqio
