// See infer.h.
#include "t5xx/run/infer.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "t5xx/data/file_utils.h"
#include "t5xx/data/mixture.h"
#include "t5xx/partitioning/process_environment.h"
#include "t5xx/run/datasets.h"
#include "t5xx/run/device_setup.h"
#include "t5xx/run/inference.h"
#include "t5xx/run/model.h"
#include "t5xx/util/error.h"
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

// Writes `text` to `path` (atomically), then the empty marker
// path.COMPLETED (t5x's order: a chunk without its marker is recomputed).
void WriteCompleted(const std::string& path, const std::string& text) {
  seqio::WriteStringToFileAtomic(path, text);
  seqio::WriteStringToFileAtomic(path + ".COMPLETED", "");
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

}  // namespace

InferResult RunInfer(const LoadedTrainConfig& loaded, std::ostream& log) {
  const InferSetup& s = loaded.infer;
  const std::optional<partitioning::ProcessEnvironment> env =
      partitioning::DetectProcessEnvironment();
  T5XX_CHECK(!env || env->world_size == 1,
             "t5xx infer runs in one process (launched with " + std::to_string(env ? env->world_size : 1) +
                 "); split the work across independent jobs with infer.shard_id and "
                 "infer.num_shards instead");
  T5XX_CHECK(s.num_partitions == 1,
             "t5xx infer runs in one process: set partitioning.PjitPartitioner.num_partitions "
             "= 1 (got " + std::to_string(s.num_partitions) + ")");
  GetOutputFeatures(s.dataset.mixture_or_task_name, loaded.demo_problem);  // known task?
  const InferMode mode = ParseInferMode(s.mode);
  // What can be checked before the checkpoint is read: the dataset (task,
  // split, files, lengths) and the output directory.
  CheckDataset(s.dataset, "infer", *CreateModel(s.model));
  CreateOutputDir(s.output_dir, "infer.output_dir (INFER_OUTPUT_DIR)");
  const std::vector<std::string> dirs = CheckpointsToRestore(s.restore);
  const seqio::VocabularyPtr vocab = TargetsVocabulary(s.dataset.mixture_or_task_name);
  const at::Device device = SetUpDevice(loaded.options, log);
  InferenceModel m =
      LoadInferenceModel(s.model, vocab->eos_id(), dirs.back(), s.restore.options, log, device);
  InferResult result;
  const std::string shard = Fmt5(s.shard_id) + "-of-" + Fmt5(s.num_shards);
  const size_t chunk_size = static_cast<size_t>(s.checkpoint_period * s.dataset.batch_size);
  for (const seqio::TaskPtr& task :
       seqio::GetMixtureOrTask(s.dataset.mixture_or_task_name)->tasks()) {
    const std::string fname = task->name() + "-" + s.mode + "." + s.file_extension + "-" + shard;
    const std::string out_path = s.output_dir + "/" + fname;
    if (fs::exists(out_path + ".COMPLETED")) {
      log << "[infer] " << out_path << " is complete; skipping task " << task->name() << std::endl;
      result.files.push_back(out_path);
      continue;
    }
    const std::string tmp_dir = s.output_dir + "/tmp-" + task->name() + "-" + shard;
    fs::create_directories(tmp_dir);
    seqio::DatasetPtr ds = task->GetDataset(
        s.dataset.task_feature_lengths, s.dataset.split, s.dataset.shuffle,
        static_cast<uint64_t>(s.dataset.seed.value_or(0)),
        seqio::ShardInfo{static_cast<int>(s.shard_id), static_cast<int>(s.num_shards)},
        /*num_epochs=*/1, s.dataset.trim_output_features, s.dataset.use_cached);
    std::vector<std::string> chunk_paths;
    for (int64_t chunk = 0;; ++chunk) {
      std::vector<seqio::Example> examples = seqio::Collect(*ds, chunk_size);
      if (examples.empty()) break;
      const std::string chunk_path = tmp_dir + "/" + fname + "-chunk" + Fmt5(chunk);
      chunk_paths.push_back(chunk_path);
      if (fs::exists(chunk_path + ".COMPLETED") && fs::exists(chunk_path)) {
        ++result.chunks_skipped;
        log << "[infer] chunk " << chunk << " of task " << task->name()
            << " is complete; skipping it" << std::endl;
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      // t5x: chunk_rng = fold_in(PRNGKey(0), chunk).
      const std::vector<ExampleInference> outs =
          InferExamples(*m.model, m.params, s.model, examples, s.dataset.task_feature_lengths,
                        s.dataset.batch_size, mode, HashSeed(0, static_cast<uint64_t>(chunk)));
      std::string text;
      for (size_t i = 0; i < examples.size(); ++i) {
        text += InferenceLine(examples[i], outs[i], mode, *vocab, s.output_ids,
                              s.model.return_all_decodes);
      }
      WriteCompleted(chunk_path, text);
      result.examples += static_cast<int64_t>(examples.size());
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      log << "[infer] task " << task->name() << " chunk " << chunk << ": " << examples.size()
          << " examples in " << seconds << " s (" << examples.size() / std::max(seconds, 1e-9)
          << " examples/s) -> " << chunk_path << std::endl;
    }
    T5XX_CHECK(!chunk_paths.empty(),
               "no examples to infer in task '" + task->name() + "', split '" + s.dataset.split +
                   "' (shard " + std::to_string(s.shard_id) + " of " +
                   std::to_string(s.num_shards) + "); check utils.DatasetConfig.split and "
                   "infer.num_shards");
    if (!s.merge_chunked_results) continue;
    std::string merged;
    // The chunks are this run's own output, each already held whole once when
    // written: no whole-file limit (kMaxWholeFileBytes is for foreign files).
    for (const std::string& p : chunk_paths) {
      merged += seqio::ReadFileToString(p, std::numeric_limits<size_t>::max());
    }
    WriteCompleted(out_path, merged);
    fs::remove_all(tmp_dir);
    log << "[infer] wrote " << out_path << std::endl;
    result.files.push_back(out_path);
  }
  return result;
}

}  // namespace t5xx::run
