// The datasets of a run (t5x/utils.py get_dataset and
// get_training_eval_datasets): a DatasetConfig's task or mixture, read for
// this process's data shard, through the model's feature converter, batched
// and turned into model tensors; and the checks that a DatasetConfig can be
// read at all (task, split, files, lengths), which need no data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/pipeline/background_producer.h"
#include "t5xx/data/pipeline/batching.h"
#include "t5xx/data/sources/data_source.h"
#include "t5xx/models/base_model.h"
#include "t5xx/run/train_config.h"
#include "t5xx/trainer/train_loop.h"

namespace t5xx::run {

// "the train dataset (train/utils.DatasetConfig: task 'x', split 'y')";
// `scope` is the DatasetConfig's gin scope ("train", "train_eval").
std::string Describe(const DatasetConfig& d, const std::string& scope);

// t5x's utils.get_dataset: batches of d's task or mixture for `shard`
// (seqio ShardInfo: files or examples, task.h; shuffled with d.seed, else
// `seed`; num_epochs -1 = repeat forever), converted by
// model.CreateFeatureConverter, of d.batch_size / shard.num_shards examples
// each (this shard's part of the global batch, as t5x batches), as model
// tensors (int64 ids, float32 loss weights; trainer/batch_conversion.h). A
// stream's errors are prefixed with "while reading <what>: " (what =
// Describe(d, scope)). Throws t5xx::Error likewise for an unknown task, bad
// lengths or split, and when d.batch_size does not divide by
// shard.num_shards (CheckBatchSplits says it first).
trainer::BatchFn GetBatches(const DatasetConfig& d, const std::string& scope,
                            const models::BaseTransformerModel& model, int num_epochs,
                            uint64_t seed, const seqio::ShardInfo& shard);

// How many batches BatchStream's producer thread prepares ahead of the train
// step by default (tf.data's prefetch at the end of t5x's input pipeline).
inline constexpr size_t kDefaultReadAhead = 2;

// The same batches as a stream whose position can be saved and restored:
// t5x's checkpointable train iterator (t5x/utils.py, save_dataset /
// restore_dataset), with seqio's pipeline state as JSON.
//
// With read_ahead > 0, a producer thread (seqio::BackgroundProducer) reads
// and converts batches into a queue of at most read_ahead batches while the
// consumer works (batch N+1 is ready when step N ends). The stream is the
// same with or without it; the saved position is always the consumer's
// (what Next() returns next): the queued batches are saved as read-ahead
// batches of the iterator's state, which a restored stream returns first.
// The thread starts on the first Next()/HasNext() and is joined by the
// destructor, which waits at most for the batch being read.
class BatchStream {
 public:
  // `keep_alive` holds what the pipeline refers to (its feature converter).
  BatchStream(std::shared_ptr<seqio::BatchIterator> it, std::string what,
              std::shared_ptr<const void> keep_alive, size_t read_ahead = 0);
  ~BatchStream();
  // The next batch ([batch, length] tensors, trainer::ToFeatureBatch), or
  // nullopt at the end. Errors name the dataset: "while reading <what>: "
  // and the pipeline's message (a producer thread's error is rethrown here,
  // after the batches read before it).
  std::optional<models::FeatureBatch> Next();
  // Whether Next() will return a batch (reads it ahead; the read-ahead batch
  // is part of the saved state, so peeking does not move the position).
  bool HasNext();
  // The position as JSON text (a seqio::BatchIterator root state). With a
  // producer thread, first waits for it to fill its queue (the thread is
  // held while the state is written), so the text depends only on the
  // batches consumed, not on the threads' timing.
  std::string SaveState() const;
  // Restores a position saved by an identical pipeline (with or without
  // read-ahead); must be called before the first read. `source` names the
  // file in errors. Throws t5xx::Error naming `source` and the fix when the
  // state does not fit this pipeline (the dataset configuration changed),
  // or when called after the first read.
  void RestoreState(const std::string& state, const std::string& source);

 private:
  struct ReadAhead;  // a batch as read (for the state) and as tensors
  std::shared_ptr<seqio::BatchIterator> it_;
  std::string what_;
  std::shared_ptr<const void> keep_alive_;
  // Last: stopped and joined before the iterator it reads is destroyed.
  std::unique_ptr<seqio::BackgroundProducer<ReadAhead>> producer_;
};

// t5x's get_training_eval_datasets for one config: the whole data (one
// shard) batched by d.batch_size, the global batch, of which this process
// keeps rows r with r % shard.num_shards == shard.index: d.batch_size /
// shard.num_shards rows, and together the processes evaluate exactly the
// global batches one process does (t5x: .unbatch().repeat().shard(n, i)
// .batch(batch_size // n)). num_epochs as in GetBatches.
trainer::BatchFn GetTrainingEvalBatches(const DatasetConfig& d,
                                        const models::BaseTransformerModel& model,
                                        int num_epochs, uint64_t seed,
                                        const seqio::ShardInfo& shard);

// t5x's check that a global batch splits over the data shards: throws
// t5xx::Error naming <scope>/utils.DatasetConfig.batch_size and the data
// axis size when d.batch_size does not divide by num_shards.
void CheckBatchSplits(const DatasetConfig& d, const std::string& scope, int num_shards);

// GetBatches as a BatchStream, whose producer thread reads `read_ahead`
// batches ahead (0 = none: batches are read by Next()).
std::shared_ptr<BatchStream> GetBatchStream(const DatasetConfig& d, const std::string& scope,
                                            const models::BaseTransformerModel& model,
                                            int num_epochs, uint64_t seed,
                                            const seqio::ShardInfo& shard,
                                            size_t read_ahead = kDefaultReadAhead);

// What a train process trains on: each batch of `stream` cut to its rows
// [first_row, first_row + rows) of the global batch (kept whole when the
// stream's batches have `rows` rows: seqio's per-shard order, whose shard
// is those rows), [rows, length] tensors. With the
// environment variable T5XX_DATA_LOG naming a directory (created if
// missing; t5xx::Error naming it when it cannot be), appends one line
// per row to <dir>/data_log.<rank>.txt: the batch's index (start_batch for
// the first, the step a restored run starts at), the row's index in the
// global batch and a 64-bit FNV-1a digest of its values (features in name
// order) in hex -- which examples each step trains on, for tests and data
// debugging.
trainer::BatchFn LocalTrainBatches(std::shared_ptr<BatchStream> stream, int64_t first_row,
                                   int64_t rows, int64_t start_batch, int rank);

// The output features of the task or mixture `name`. Throws t5xx::Error for
// an unknown name ("did you mean" over tasks and mixtures) or a demo task
// whose corpus is missing (`demo_problem`).
seqio::OutputFeatures GetOutputFeatures(const std::string& name,
                                        const std::optional<std::string>& demo_problem);

// Every task of `d` has its split (a mixture needs one task that has it),
// the caches it reads exist (CheckCachedTasks), the split's file patterns
// of the tasks read on the fly match regular files (listed, not read), no task
// forbids the shuffle asked for, and the lengths suit the model's converter
// (keys it needs, each in [1, 2^31 - 1]). Throws t5xx::Error naming
// Describe(d, scope) and the gin binding to change.
void CheckDataset(const DatasetConfig& d, const std::string& scope,
                  const models::BaseTransformerModel& model);

// The caching checks of d's tasks that have its split (seqio.Task's
// use_cached rules, Task::CheckCacheUse): with d.use_cached, each task with
// a seqio.CacheDatasetPlaceholder has a completed cache in the global cache
// directories holding d.split; without it, no task requires its cache.
// Throws t5xx::Error naming Describe(d, scope), the task, the directories
// searched and the `t5xx cache_tasks` command. CheckDataset calls it.
void CheckCachedTasks(const DatasetConfig& d, const std::string& scope);

// t5x's get_training_eval_datasets: for a mixture, one config per task of
// it that has the split, then the mixture; for a task, the task.
std::vector<DatasetConfig> TrainingEvalDatasetConfigs(const DatasetConfig& d);

}  // namespace t5xx::run
