// ParallelMap: the order-preserving, chunked multi-threaded map (tf.data's
// map with num_parallel_calls, deterministic=True), declared in dataset.h.
#include "t5xx/data/dataset.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pending_examples.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

using json = nlohmann::json;

namespace {

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
    return pending_.Pop();
  }

  json SaveState() const override {
    return {{"index", index_},
            {"input_done", input_done_},
            {"pending", pending_.ToJson()},
            {"input", input_->SaveState()}};
  }
  void RestoreState(const json& state) override {
    index_ = StateField(state, "index", "ParallelMap").get<uint64_t>();
    input_done_ = StateField(state, "input_done", "ParallelMap").get<bool>();
    pending_.FromJson(StateField(state, "pending", "ParallelMap"));
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
    pending_.PushAll(std::move(chunk));
  }

  DatasetPtr input_;
  Fn fn_;
  int num_threads_;
  size_t chunk_size_;
  uint64_t index_ = 0;  // input examples pulled so far
  bool input_done_ = false;
  PendingExamples pending_;  // processed, not yet emitted
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
  T5XX_CHECK(input != nullptr, "ParallelMap: input dataset is null");
  T5XX_CHECK(num_threads >= 0, "ParallelMap: num_threads must be >= 0, got " +
                              std::to_string(num_threads));
  if (num_threads <= 1) return Map(std::move(input), std::move(fn));
  return ParallelMapIndexed(
      std::move(input),
      [fn = std::move(fn)](Example ex, uint64_t) { return fn(std::move(ex)); },
      num_threads);
}

}  // namespace t5xx::seqio
