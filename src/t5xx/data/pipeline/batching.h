// Batching of converted examples: Batch (row-major [batch_size, length]
// int32 per feature) and BatchIterator, which stacks consecutive examples
// with drop_remainder semantics (seqio's get_dataset batches with
// drop_remainder=True) and saves its position with the input pipeline's.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/pipeline/utils.h"

namespace t5xx::seqio {

// A batch of converted examples.
struct Batch {
  int64_t batch_size = 0;
  // Feature -> row-major [batch_size, lengths[feature]] int32.
  std::map<std::string, std::vector<int32_t>> features;
  std::map<std::string, int64_t> lengths;

  // Copy of row `r` of `feature` ([lengths[feature]] int32). Throws
  // t5xx::Error for an unknown feature or r outside [0, batch_size).
  std::vector<int32_t> Row(const std::string& feature, int64_t r) const;
};

// Stacks `batch_size` consecutive examples per batch; a final partial batch
// is dropped (drop_remainder=True). Features in `lengths` are batched (others
// are ignored); with empty `lengths` every token feature of the first example
// is batched with its size as length. Throws t5xx::Error (naming the feature,
// the example's index and the lengths) when an example lacks a feature, or a
// feature is a string or not exactly its length; and if batch_size < 1.
class BatchIterator {
 public:
  BatchIterator(DatasetPtr input, int64_t batch_size,
                FeatureLengths lengths = {});
  BatchIterator(BatchIterator&&) = default;
  BatchIterator& operator=(BatchIterator&&) = default;

  // The next full batch, or std::nullopt once fewer than batch_size examples
  // remain.
  std::optional<Batch> Next();
  // True if NextBatch() will return a batch (reads ahead one batch).
  bool HasNext();
  // The next full batch; throws t5xx::Error when the dataset is exhausted.
  Batch NextBatch();

  int64_t batch_size() const { return batch_size_; }

  // Checkpointing: a root state ({"version": 2, "state": ...}, see
  // WrapRootState) holding the counters and the input pipeline's state
  // before the next batch to return -- batches read ahead are not saved:
  // the iterator records its input's state before forming each batch.
  // RestoreState must be called on a freshly built identical iterator (same
  // pipeline, seeds and batch size); it throws t5xx::Error for a state
  // version other than 2 or a mismatched pipeline.
  nlohmann::json SaveState() const;
  void RestoreState(const nlohmann::json& root);

  // The state of the position `returned.size()` batches earlier: before the
  // batches in `returned` (oldest first), which Next() returned last. A
  // consumer that reads this iterator ahead of its own consumer
  // (BatchStream's producer thread) saves its consumer's position this way;
  // restored, the iterator forms `returned` again. At most
  // kKeptBatchStarts batches back (t5xx::Error beyond). Must not be called
  // concurrently with Next().
  nlohmann::json SaveStateBefore(const std::vector<const Batch*>& returned) const;

 private:
  DatasetPtr input_;
  int64_t batch_size_;
  FeatureLengths lengths_;
  int64_t examples_read_ = 0;
  std::deque<Batch> lookahead_;  // read ahead (HasNext), not returned
  bool done_ = false;
  // The input's state before a batch was formed, and examples read then.
  struct BatchStart {
    nlohmann::json input;  // null: the input cannot save (InputStateOrNull)
    int64_t examples_read = 0;
  };
  static constexpr size_t kKeptBatchStarts = 16;
  std::deque<BatchStart> starts_;  // of the last batches formed, oldest first
  bool saveable_ = true;
};

}  // namespace t5xx::seqio
