// See infer.h.
#include "t5xx/run/inference/infer.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/run/datasets.h"
#include "t5xx/run/device_setup.h"
#include "t5xx/run/inference/inference.h"
#include "t5xx/run/model.h"
#include "t5xx/run/inference/output_records.h"
#include "t5xx/run/validation.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/hash.h"
#include "t5xx/util/json_text.h"

namespace t5xx::run {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string Fmt5(int64_t v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%05lld", static_cast<long long>(v));
  return b;
}

// Writes `text` to `path` (atomically), then the marker path.COMPLETED
// holding `record` (t5x's order: a chunk without its marker is recomputed;
// t5x's marker is empty, t5xx's says what the chunk covers).
void WriteCompleted(const std::string& path, const std::string& text, const std::string& record) {
  seqio::WriteStringToFileAtomic(path, text);
  seqio::WriteStringToFileAtomic(path + ".COMPLETED", record);
}

// One example's line, as t5x's write_inferences_to_file writes it.
std::string InferenceLine(const seqio::Example& ex, const ExampleInference& out,
                          InferMode mode, const seqio::Vocabulary& vocab, bool output_ids,
                          bool all_decodes) {
  json j = json::object();
  json inputs = json::object();
  const std::string suffix = "_pretokenized";
  for (const auto& [k, v] : ex) {
    if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0) {
      if (const auto* s = std::get_if<std::string>(&v)) inputs[k] = *s;
    }
  }
  j["inputs"] = inputs;
  if (mode == InferMode::kScore) {
    j["score"] = out.scores.at(0);
  } else {
    j["prediction"] = vocab.Decode(out.tokens);
    if (output_ids) {
      std::vector<int32_t> ids;
      for (int32_t t : out.tokens) {
        if (t == 0) break;
        ids.push_back(t);
      }
      j["prediction_tokens"] = ids;
    }
    if (mode == InferMode::kPredictWithAux) {
      j["aux"] = {{"scores", all_decodes ? json(out.scores) : json(out.scores.at(0))}};
    }
  }
  return DumpJson(j) + "\n";
}

// What decides each line infer writes (output_records.h): the operative gin
// values without those that only cut the output into chunks or name where
// it goes, the restored checkpoint and the data directory.
std::map<std::string, std::string> InferSettings(const LoadedTrainConfig& loaded,
                                                 const std::string& checkpoint) {
  const InferSetup& s = loaded.infer;
  const bool samples = ParseInferMode(s.mode) != InferMode::kScore &&
                       s.model.decode_fn.kind == decoding::DecodeFnConfig::Kind::kTemperatureSample &&
                       s.model.decode_fn.temperature_sample.temperature > 1e-4 &&
                       s.model.decode_fn.temperature_sample.topk != 1;
  std::vector<std::string> skip = {"__main__.infer.checkpoint_period", "__main__.infer.output_dir",
                                   "__main__.infer.merge_chunked_results"};
  // One generator per chunk draws batch after batch: the batch size decides
  // samples, not greedy or beam outputs.
  if (!samples) skip.push_back("t5x.utils.DatasetConfig.batch_size");
  std::map<std::string, std::string> out = OutputSettings(loaded, skip);
  out["checkpoint (restored)"] = "'" + WithUrls(checkpoint) + "'";
  return out;
}

// Removes chunk files of `fname` in `tmp_dir` numbered `count` or more
// (cut by an earlier run into more chunks), saying so.
void RemoveStaleChunks(const std::string& tmp_dir, const std::string& fname, int64_t count,
                       std::ostream& log) {
  const std::string prefix = fname + "-chunk";
  for (const auto& e : fs::directory_iterator(tmp_dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) != 0 || n.size() < prefix.size() + 5) continue;
    const std::string digits = n.substr(prefix.size(), 5);
    if (digits.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoll(digits) < count) continue;
    fs::remove(e.path());
    log << "[infer] removed " << e.path().string() << " (an earlier run cut the examples into "
        << "more chunks; this run has " << count << ")" << std::endl;
  }
}

// The merged output of one task's shard: its file name, path, chunk folder
// and the record every file of it must hold.
struct TaskOutput {
  std::string fname, path, tmp_dir;
  OutputRecord want;
};

TaskOutput OutputOf(const LoadedTrainConfig& loaded, const seqio::Task& task,
                    const std::string& checkpoint) {
  const InferSetup& s = loaded.infer;
  TaskOutput o;
  const std::string shard = Fmt5(s.shard_id) + "-of-" + Fmt5(s.num_shards);
  o.fname = task.name() + "-" + s.mode + "." + s.file_extension + "-" + shard;
  o.path = s.output_dir + "/" + o.fname;
  o.tmp_dir = s.output_dir + "/tmp-" + task.name() + "-" + shard;
  o.want.batch_size = s.dataset.batch_size;
  o.want.checkpoint_period = s.checkpoint_period;
  o.want.settings = InferSettings(loaded, checkpoint);
  o.want.settings["task"] = "'" + task.name() + "'";
  return o;
}

}  // namespace

void PreflightInferRun(const LoadedTrainConfig& loaded, const std::string& checkpoint) {
  const InferSetup& s = loaded.infer;
  CheckOutputDirUsable(s.output_dir, "infer.output_dir (INFER_OUTPUT_DIR)");
  for (const seqio::TaskPtr& task :
       seqio::GetMixtureOrTask(s.dataset.mixture_or_task_name)->tasks()) {
    const TaskOutput o = OutputOf(loaded, *task, checkpoint);
    if (!fs::exists(o.path + ".COMPLETED")) continue;
    const std::optional<OutputRecord> done = ReadOutputRecord(o.path + ".COMPLETED");
    if (!done) continue;
    const std::string why = OutputRecordMismatch(o.path, *done, o.want, /*compare_range=*/false);
    T5XX_CHECK(why.empty(), why + "; this run would write other results there: use another "
                                  "infer.output_dir (INFER_OUTPUT_DIR), or delete " + o.path +
                                  " and its .COMPLETED marker to write it again");
  }
}

namespace {

// What every task of one infer run shares.
struct InferContext {
  const LoadedTrainConfig& loaded;
  InferMode mode;
  seqio::VocabularyPtr vocab;
  InferenceModel& model;
  std::string checkpoint;
  std::ostream& log;
  // The run's processes: the chief (rank 0) alone reads and writes the
  // output files and decides what to reuse; `replicas` split the batches.
  const partitioning::Communicator& comm;
  InferenceReplicas replicas;
  bool chief() const { return comm.rank() == 0; }
};

// Whether chunk `chunk` at `chunk_path` (if written) holds exactly what this
// run would write there (`want`); a mismatch is logged and its marker
// removed, so that the chunk is recomputed.
bool ChunkIsReusable(const std::string& chunk_path, int64_t chunk, const OutputRecord& want,
                     const std::string& task, std::ostream& log) {
  if (!fs::exists(chunk_path + ".COMPLETED") || !fs::exists(chunk_path)) return false;
  const std::optional<OutputRecord> done = ReadOutputRecord(chunk_path + ".COMPLETED");
  const std::string why =
      done ? OutputRecordMismatch("chunk " + Fmt5(chunk), *done, want)
           : "chunk " + Fmt5(chunk) + "'s marker records neither its examples nor its settings";
  if (why.empty()) {
    log << "[infer] chunk " << chunk << " of task " << task << " is complete; skipping it"
        << std::endl;
    return true;
  }
  log << "[infer] " << why << ": recomputing it (" << chunk_path << ")" << std::endl;
  fs::remove(chunk_path + ".COMPLETED");
  return false;
}

// Decodes one chunk's examples and writes its lines with its marker.
void InferChunk(const InferContext& c, const std::vector<seqio::Example>& examples, int64_t chunk,
                const std::string& chunk_path, const OutputRecord& want,
                const std::string& task) {
  const InferSetup& s = c.loaded.infer;
  const auto t0 = std::chrono::steady_clock::now();
  // t5x: chunk_rng = fold_in(PRNGKey(0), chunk).
  const std::vector<ExampleInference> outs =
      InferExamples(*c.model.model, c.model.params, s.model, examples,
                    s.dataset.task_feature_lengths, s.dataset.batch_size, c.mode,
                    HashSeed(0, static_cast<uint64_t>(chunk)), c.replicas);
  if (!c.chief()) return;
  std::string text;
  for (size_t i = 0; i < examples.size(); ++i) {
    text += InferenceLine(examples[i], outs[i], c.mode, *c.vocab, s.output_ids,
                          s.model.return_all_decodes);
  }
  WriteCompleted(chunk_path, text, OutputRecordJson(want));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.log << "[infer] task " << task << " chunk " << chunk << ": " << examples.size()
        << " examples in " << seconds << " s (" << examples.size() / std::max(seconds, 1e-9)
        << " examples/s) -> " << chunk_path << std::endl;
}

// Infers one task's examples of this shard, chunk by chunk (reusing the
// chunks that match), then merges the chunks into its output.
void InferTask(const InferContext& c, const seqio::Task& task, InferResult& result) {
  const InferSetup& s = c.loaded.infer;
  TaskOutput o = OutputOf(c.loaded, task, c.checkpoint);
  OutputRecord& want = o.want;
  if (ChiefDecides(c.comm, c.chief() && fs::exists(o.path + ".COMPLETED"))) {
    // Its record matches this run's (PreflightInferRun).
    const std::optional<OutputRecord> done = ReadOutputRecord(o.path + ".COMPLETED");
    c.log << "[infer] " << o.path << " is complete"
          << (done ? "" : " (its marker records no settings: not checked)") << "; skipping task "
          << task.name() << std::endl;
    result.files.push_back(o.path);
    return;
  }
  const std::string& tmp_dir = o.tmp_dir;
  if (c.chief()) fs::create_directories(tmp_dir);
  seqio::DatasetPtr ds = task.GetDataset(
      s.dataset.task_feature_lengths, s.dataset.split, s.dataset.shuffle,
      static_cast<uint64_t>(s.dataset.seed.value_or(0)),
      seqio::ShardInfo{static_cast<int>(s.shard_id), static_cast<int>(s.num_shards)},
      /*num_epochs=*/1, s.dataset.trim_output_features, s.dataset.use_cached);
  const size_t chunk_size = static_cast<size_t>(s.checkpoint_period * s.dataset.batch_size);
  std::vector<std::string> chunk_paths;
  int64_t first = 0;
  for (int64_t chunk = 0;; ++chunk) {
    std::vector<seqio::Example> examples = seqio::Collect(*ds, chunk_size);
    if (examples.empty()) break;
    const std::string chunk_path = tmp_dir + "/" + o.fname + "-chunk" + Fmt5(chunk);
    chunk_paths.push_back(chunk_path);
    want.first = first;
    want.end = first += static_cast<int64_t>(examples.size());
    want.examples_md5 = ExamplesMd5(examples);
    // Reused only when it holds exactly these examples, made the way this
    // run makes them.
    if (ChiefDecides(c.comm,
                     c.chief() && ChunkIsReusable(chunk_path, chunk, want, task.name(), c.log))) {
      ++result.chunks_skipped;
      continue;
    }
    InferChunk(c, examples, chunk, chunk_path, want, task.name());
    result.examples += static_cast<int64_t>(examples.size());
  }
  T5XX_CHECK(!chunk_paths.empty(),
             "no examples to infer in task '" + task.name() + "', split '" + s.dataset.split +
                 "' (shard " + std::to_string(s.shard_id) + " of " +
                 std::to_string(s.num_shards) + "); check utils.DatasetConfig.split and "
                 "infer.num_shards");
  if (!c.chief()) {
    if (s.merge_chunked_results) result.files.push_back(o.path);
    return;
  }
  RemoveStaleChunks(tmp_dir, o.fname, static_cast<int64_t>(chunk_paths.size()), c.log);
  if (!s.merge_chunked_results) return;
  std::string merged;
  // The chunks are this run's own output, each already held whole once when
  // written: no whole-file limit (kMaxWholeFileBytes is for foreign files).
  for (const std::string& p : chunk_paths) {
    merged += seqio::ReadFileToString(p, std::numeric_limits<size_t>::max());
  }
  want.first = 0;  // every example of this task's shard, in order
  want.end = first;
  want.examples_md5.clear();  // the chunks' records hold theirs
  WriteCompleted(o.path, merged, OutputRecordJson(want));
  fs::remove_all(tmp_dir);
  c.log << "[infer] wrote " << o.path << std::endl;
  result.files.push_back(o.path);
}

}  // namespace

InferResult RunInfer(const LoadedTrainConfig& loaded, std::ostream& log) {
  const InferSetup& s = loaded.infer;
  // What can be checked before the checkpoint is read (as `t5xx config`
  // checks it), then the output directory.
  const std::vector<std::string> dirs = ValidateInferRun(loaded);
  PreflightInferRun(loaded, dirs.back());
  const InferMode mode = ParseInferMode(s.mode);
  const seqio::VocabularyPtr vocab = TargetsVocabulary(s.dataset.mixture_or_task_name);
  const at::Device device = SetUpDevice(loaded.options, log);
  const std::unique_ptr<partitioning::PjitPartitioner> partitioner =
      MakeInferencePartitioner(s.num_partitions, s.logical_axis_rules, device, log);
  CheckInferenceLayout(*partitioner, *CreateModel(s.model));
  CreateOutputDir(s.output_dir, "infer.output_dir (INFER_OUTPUT_DIR)");
  InferenceModel m = LoadInferenceModel(s.model, vocab->eos_id(), dirs.back(), s.restore.options,
                                        log, device, partitioner.get(),
                                        static_cast<uint64_t>(s.fallback_init_rng.value_or(0)),
                                        mode == InferMode::kScore ? 0 : s.dataset.batch_size);
  const std::unique_ptr<models::Int8Weights> int8 =
      Int8WeightsFor(loaded.options, s.model, m, log);
  const models::Int8WeightsScope int8_scope(int8.get());
  const InferContext c{loaded,      mode, vocab, m, dirs.back(), log, partitioner->communicator(),
                       ReplicasOf(*partitioner)};
  InferResult result;
  result.rank = c.comm.rank();
  for (const seqio::TaskPtr& task :
       seqio::GetMixtureOrTask(s.dataset.mixture_or_task_name)->tasks()) {
    InferTask(c, *task, result);
  }
  LogInt8Weights(int8.get(), "infer", log);
  return result;
}

}  // namespace t5xx::run
