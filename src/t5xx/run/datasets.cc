// See datasets.h.
#include "t5xx/run/datasets.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"
#include "t5xx/demo/demo_tasks.h"
#include "t5xx/trainer/batch_conversion.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"

namespace t5xx::run {
namespace {

// Prefixes errors raised while reading a dataset with which one it is.
template <typename F>
auto Reading(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw Error("while reading " + what + ": " + e.what());
  }
}

bool HasSplit(const seqio::Task& task, const std::string& split) {
  const std::vector<std::string> splits = task.splits();
  return std::find(splits.begin(), splits.end(), split) != splits.end();
}

}  // namespace

std::string Describe(const DatasetConfig& d, const std::string& scope) {
  return "the " + scope + " dataset (" + scope + "/utils.DatasetConfig: task '" +
         d.mixture_or_task_name + "', split '" + d.split + "')";
}

struct BatchStream::ReadAhead {
  seqio::Batch batch;            // as the iterator returned it (saved with the position)
  models::FeatureBatch tensors;  // trainer::ToFeatureBatch(batch)
};

BatchStream::BatchStream(std::shared_ptr<seqio::BatchIterator> it, std::string what,
                         std::shared_ptr<const void> keep_alive, size_t read_ahead)
    : it_(std::move(it)), what_(std::move(what)), keep_alive_(std::move(keep_alive)) {
  if (read_ahead > 0) {
    // The thread only reads and converts; errors get their "while reading"
    // prefix when the consumer meets them, as without the thread.
    producer_ = std::make_unique<seqio::BackgroundProducer<ReadAhead>>(
        [it = it_]() -> std::optional<ReadAhead> {
          std::optional<seqio::Batch> b = it->Next();
          if (!b) return std::nullopt;
          models::FeatureBatch tensors = trainer::ToFeatureBatch(*b);
          return ReadAhead{std::move(*b), std::move(tensors)};
        },
        read_ahead);
  }
}

BatchStream::~BatchStream() = default;

std::optional<models::FeatureBatch> BatchStream::Next() {
  if (producer_) {
    std::optional<ReadAhead> r = Reading(what_, [&] { return producer_->Next(); });
    if (!r) return std::nullopt;
    return std::move(r->tensors);
  }
  auto b = Reading(what_, [&] { return it_->Next(); });
  if (!b) return std::nullopt;
  return trainer::ToFeatureBatch(*b);
}

bool BatchStream::HasNext() {
  if (producer_) return Reading(what_, [&] { return producer_->HasNext(); });
  return Reading(what_, [&] { return it_->HasNext(); });
}

std::string BatchStream::SaveState() const {
  // Keeping bytes: t5xx's stages save integers only (version 2), but a
  // custom stage may save raw text that is not UTF-8, which dump() refuses.
  // Stored flat (seqio::FlattenState): a few levels deep for any task.
  if (!producer_) return DumpJsonKeepingBytes(seqio::FlattenState(it_->SaveState()));
  // The producer is held between two batches: the iterator's state is the
  // position after the queued batches, which go back in front of it.
  return producer_->WithProducerIdle([&](const std::deque<ReadAhead>& queued) {
    std::vector<const seqio::Batch*> returned;
    returned.reserve(queued.size());
    for (const ReadAhead& r : queued) returned.push_back(&r.batch);
    return DumpJsonKeepingBytes(seqio::FlattenState(it_->SaveStateBefore(returned)));
  });
}

void BatchStream::RestoreState(const std::string& state, const std::string& source) {
  T5XX_CHECK(!producer_ || !producer_->started(),
             "cannot restore the position of " + what_ + " from " + source +
                 ": the stream has been read already (restore before the first batch)");
  nlohmann::json j;
  std::string parse_error;
  if (!ParseJsonKeepingBytes(state, &j, &parse_error)) {  // with the depth limit
    throw Error(source + " is not valid JSON (" + parse_error +
                "): it is damaged; delete it to start the data from its beginning");
  }
  const std::string where = "cannot restore the position of " + what_ + " from " + source + ": ";
  const auto version = j.is_object() ? j.find("version") : j.end();
  if (j.is_object() && version != j.end() && *version == 1) {
    throw Error(where +
                "it holds a version 1 position, written by a t5xx before compact positions "
                "(version 2): its shuffle buffer and queued examples cannot be continued by "
                "this build; delete it to start the data from its beginning (restoring from "
                "utils.RestoreCheckpointConfig.path, restore_dataset = False does the same)");
  }
  try {
    it_->RestoreState(seqio::UnflattenState(j));
  } catch (const seqio::DataStepError& e) {
    throw Error(where + "the data failed while the position was replayed: " + e.what() +
                "; fix the data (did it change since the checkpoint?), or delete " + source +
                " to start the data from its beginning");
  } catch (const std::exception& e) {
    throw Error(where + e.what() +
                "; either the dataset configuration differs from the one the checkpoint was "
                "written with (restore that configuration) or the file is damaged or from a "
                "newer t5xx; deleting " + source + " starts the data from its beginning");
  }
}

void CheckBatchSplits(const DatasetConfig& d, const std::string& scope, int num_shards) {
  T5XX_CHECK(num_shards >= 1 && d.batch_size % num_shards == 0,
             scope + "/utils.DatasetConfig.batch_size = " + std::to_string(d.batch_size) +
                 " does not divide by the data axis size " + std::to_string(num_shards) +
                 " (each of the " + std::to_string(num_shards) +
                 " data-parallel replicas reads batch_size / " + std::to_string(num_shards) +
                 " examples, as in t5x); choose a multiple of " + std::to_string(num_shards));
}

std::shared_ptr<BatchStream> GetBatchStream(const DatasetConfig& d, const std::string& scope,
                                            const models::BaseTransformerModel& model,
                                            int num_epochs, uint64_t seed,
                                            const seqio::ShardInfo& shard, size_t read_ahead) {
  CheckBatchSplits(d, scope, shard.num_shards);
  const std::string what = Describe(d, scope);
  std::shared_ptr<seqio::FeatureConverter> converter =
      model.CreateFeatureConverter(d.pack, d.task_feature_lengths);
  seqio::FeatureLengths lengths(d.task_feature_lengths.begin(), d.task_feature_lengths.end());
  auto it = Reading(what, [&] {
    return std::make_shared<seqio::BatchIterator>(seqio::GetMixtureOrTaskDataset(
        d.mixture_or_task_name, lengths, *converter, d.split, d.shuffle, num_epochs, shard,
        d.seed ? static_cast<uint64_t>(*d.seed) : seed, d.batch_size / shard.num_shards,
        seqio::TaskRegistry::Global(), seqio::MixtureRegistry::Global(),
        d.trim_output_features, d.use_cached));
  });
  return std::make_shared<BatchStream>(std::move(it), what, converter, read_ahead);
}

trainer::BatchFn GetBatches(const DatasetConfig& d, const std::string& scope,
                            const models::BaseTransformerModel& model, int num_epochs,
                            uint64_t seed, const seqio::ShardInfo& shard) {
  std::shared_ptr<BatchStream> stream = GetBatchStream(d, scope, model, num_epochs, seed, shard);
  return [stream]() { return stream->Next(); };
}

trainer::BatchFn GetTrainingEvalBatches(const DatasetConfig& d,
                                        const models::BaseTransformerModel& model,
                                        int num_epochs, uint64_t seed,
                                        const seqio::ShardInfo& shard) {
  CheckBatchSplits(d, "train_eval", shard.num_shards);
  trainer::BatchFn global = GetBatches(d, "train_eval", model, num_epochs, seed, {});
  if (shard.num_shards == 1) return global;
  const at::Tensor rows = at::arange(shard.index, d.batch_size, shard.num_shards, at::kLong);
  return [global, rows]() -> std::optional<models::FeatureBatch> {
    std::optional<models::FeatureBatch> b = global();
    if (!b) return std::nullopt;
    for (auto& [name, t] : *b) t = t.index_select(0, rows);
    return b;
  };
}

seqio::OutputFeatures GetOutputFeatures(const std::string& name,
                                        const std::optional<std::string>& demo_problem) {
  if (seqio::IsDemoTaskName(name) && demo_problem) {
    throw Error(*demo_problem);
  }
  try {
    return seqio::GetMixtureOrTask(name)->output_features();
  } catch (const Error& e) {
    throw Error(std::string(e.what()) +
                "; define it in gin (seqio.Task / seqio.Mixture in t5xx.seqio.register) or "
                "use " + seqio::kDemoTaskName);
  }
}

void CheckDataset(const DatasetConfig& d, const std::string& scope,
                  const models::BaseTransformerModel& model) {
  const std::string what = Describe(d, scope);
  const std::vector<seqio::TaskPtr> tasks =
      seqio::GetMixtureOrTask(d.mixture_or_task_name)->tasks();
  std::vector<seqio::TaskPtr> with_split;
  for (const seqio::TaskPtr& task : tasks) {
    if (HasSplit(*task, d.split)) with_split.push_back(task);
  }
  // Some task must have the split (a mixture skips those that lack it, as
  // seqio does; a task is its own one task).
  if (with_split.empty()) {
    for (const seqio::TaskPtr& task : tasks) {
      if (HasSplit(*task, d.split)) continue;
      std::string known;
      for (const auto& s : task->splits()) known += (known.empty() ? "'" : ", '") + s + "'";
      throw Error(what + ": task '" + task->name() + "' has no split '" + d.split +
                  "' (its splits: " + known + "); set " + scope +
                  "/utils.DatasetConfig.split to one of them");
    }
  }
  // The caches that use_cached reads (or a cache a task requires): every
  // task's with its split, before any model is built.
  CheckCachedTasks(d, scope);
  // The split's files: a pattern that matches nothing, or matches a
  // directory, is found now (making a source's dataset only lists its files;
  // nothing is read). A task read from its cache needs no source files.
  for (const seqio::TaskPtr& task : with_split) {
    if (d.use_cached && task->supports_caching()) continue;
    try {
      task->source()->GetDataset(d.split, /*shuffle=*/false, /*seed=*/0, seqio::ShardInfo{});
    } catch (const Error& e) {
      throw Error(what + ": task '" + task->name() + "': " + e.what());
    }
  }
  for (const seqio::TaskPtr& task : tasks) {
    T5XX_CHECK(!d.shuffle || task->shuffle_buffer_size() > 0,
               what + ": task '" + task->name() +
                   "' forbids shuffling (seqio.Task.shuffle_buffer_size = None) but " + scope +
                   "/utils.DatasetConfig.shuffle = True; set shuffle = False or give the task a "
                   "shuffle_buffer_size");
  }
  for (const auto& [k, L] : d.task_feature_lengths) {
    // Positions and segment ids are int32, as in seqio's converters.
    T5XX_CHECK(L <= 2147483647, what + ": task feature length of '" + k + "' is " +
                                    std::to_string(L) + ", more than 2^31 - 1 (" + scope +
                                    "/utils.DatasetConfig.task_feature_lengths)");
  }
  seqio::FeatureLengths lengths(d.task_feature_lengths.begin(), d.task_feature_lengths.end());
  try {
    model.CreateFeatureConverter(d.pack, d.task_feature_lengths)->GetModelFeatureLengths(lengths);
  } catch (const Error& e) {
    throw Error(what + ": " + e.what() + " (" + scope +
                "/utils.DatasetConfig.task_feature_lengths, usually TASK_FEATURE_LENGTHS)");
  }
}

void CheckCachedTasks(const DatasetConfig& d, const std::string& scope) {
  for (const seqio::TaskPtr& task : seqio::GetMixtureOrTask(d.mixture_or_task_name)->tasks()) {
    if (!HasSplit(*task, d.split)) continue;
    try {
      task->CheckCacheUse(d.split, d.use_cached);
    } catch (const Error& e) {
      throw Error(Describe(d, scope) + ": " + e.what());
    }
  }
}

std::vector<DatasetConfig> TrainingEvalDatasetConfigs(const DatasetConfig& d) {
  std::vector<DatasetConfig> out;
  // A mixture's tasks that have the split, then the mixture; a task's one
  // task is itself, so it comes once.
  for (const auto& task : seqio::GetMixtureOrTask(d.mixture_or_task_name)->tasks()) {
    if (!HasSplit(*task, d.split) || task->name() == d.mixture_or_task_name) continue;
    DatasetConfig cfg = d;
    cfg.mixture_or_task_name = task->name();
    out.push_back(cfg);
  }
  out.push_back(d);
  return out;
}

namespace {

// 64-bit FNV-1a over the row's values, features in name order.
uint64_t RowDigest(const models::FeatureBatch& batch, int64_t row) {
  uint64_t h = 1469598103934665603ull;
  for (const auto& [name, t] : batch) {
    const at::Tensor r = t[row].to(at::kLong).contiguous();
    const auto* bytes = reinterpret_cast<const unsigned char*>(r.data_ptr<int64_t>());
    for (size_t i = 0; i < static_cast<size_t>(r.numel()) * sizeof(int64_t); ++i) {
      h = (h ^ bytes[i]) * 1099511628211ull;
    }
  }
  return h;
}

}  // namespace

trainer::BatchFn LocalTrainBatches(std::shared_ptr<BatchStream> stream, int64_t first_row,
                                   int64_t rows, int64_t start_batch, int rank) {
  std::shared_ptr<std::ofstream> data_log;
  if (const char* dir = std::getenv("T5XX_DATA_LOG"); dir && *dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    const std::string path = std::string(dir) + "/data_log." + std::to_string(rank) + ".txt";
    data_log = std::make_shared<std::ofstream>(path, std::ios::app);
    T5XX_CHECK(data_log->good(), "T5XX_DATA_LOG: cannot append to " + path + ": " +
                                     (ec ? ec.message() : std::strerror(errno)));
  }
  auto next_batch = std::make_shared<int64_t>(start_batch);
  return [stream, first_row, rows, data_log, next_batch]() -> std::optional<models::FeatureBatch> {
    std::optional<models::FeatureBatch> b = stream->Next();
    if (!b) return b;
    for (auto& [name, t] : *b) {
      if (t.size(0) != rows) t = t.narrow(0, first_row, rows).contiguous();
    }
    if (data_log) {
      for (int64_t r = 0; r < rows; ++r) {
        char digest[17];
        std::snprintf(digest, sizeof digest, "%016llx",
                      static_cast<unsigned long long>(RowDigest(*b, r)));
        *data_log << *next_batch << " " << first_row + r << " " << digest << "\n";
      }
      data_log->flush();
    }
    ++*next_batch;
    return b;
  };
}

}  // namespace t5xx::run
