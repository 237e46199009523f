// See eval.h.
#include "t5xx/run/inference/eval.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/run/datasets.h"
#include "t5xx/run/device_setup.h"
#include "t5xx/run/inference/evaluator.h"
#include "t5xx/run/inference/inference.h"
#include "t5xx/run/inference/output_records.h"
#include "t5xx/run/model.h"
#include "t5xx/run/validation.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::run {

namespace fs = std::filesystem;

namespace {

// t5x's list of evaluated checkpoints of mode 'all', and t5xx's record of
// the settings they were evaluated with beside it (output_records.h).
std::string EvaluatedListPath(const EvalSetup& s) {
  return s.output_dir + "/eval." + s.dataset.mixture_or_task_name + ".ckpt";
}
std::string EvaluatedSettingsPath(const EvalSetup& s) {
  return EvaluatedListPath(s) + ".settings.json";
}

OutputRecord EvalRecord(const LoadedTrainConfig& loaded) {
  OutputRecord want;
  want.settings = OutputSettings(loaded, {"__main__.evaluate.output_dir"});
  return want;
}

}  // namespace

void PreflightEvalRun(const LoadedTrainConfig& loaded) {
  const EvalSetup& s = loaded.eval;
  CheckOutputDirUsable(s.output_dir, "evaluate.output_dir (EVAL_OUTPUT_DIR)");
  if (s.restore.mode != "all") return;
  // A rerun with other settings must not skip the listed checkpoints as done.
  const std::string done_path = EvaluatedListPath(s);
  const std::string settings_path = EvaluatedSettingsPath(s);
  if (!fs::exists(done_path) || !fs::exists(settings_path)) return;
  const std::optional<OutputRecord> had = ReadOutputRecord(settings_path);
  const std::string why =
      had ? OutputRecordMismatch("the checkpoints listed in " + done_path, *had,
                                 EvalRecord(loaded), false)
          : "";
  T5XX_CHECK(why.empty(), why + "; this run would skip them as evaluated: use another "
                                "evaluate.output_dir (EVAL_OUTPUT_DIR), or delete " +
                                done_path + " to evaluate them again");
}

EvalResult RunEval(const LoadedTrainConfig& loaded, std::ostream& log) {
  const EvalSetup& s = loaded.eval;
  // What can be checked before a checkpoint is read (as `t5xx config`
  // checks it), then the output directory.
  std::vector<std::string> dirs = ValidateEvalRun(loaded);
  PreflightEvalRun(loaded);
  // Under a launcher the processes evaluate together (replicas.h); the
  // chief (rank 0) alone writes.
  const at::Device device = SetUpDevice(loaded.options, log);
  const std::unique_ptr<partitioning::PjitPartitioner> partitioner =
      MakeInferencePartitioner(s.num_partitions, s.logical_axis_rules, device, log);
  CheckInferenceLayout(*partitioner, *CreateModel(s.model));
  CreateOutputDir(s.output_dir, "evaluate.output_dir (EVAL_OUTPUT_DIR)");
  const bool chief = partitioner->communicator().rank() == 0;
  EvalResult result;
  result.rank = partitioner->communicator().rank();
  const std::string done_path = EvaluatedListPath(s);
  std::set<std::string> done;
  if (s.restore.mode == "all") {
    // The list's settings match this run's (PreflightEvalRun, above); a new
    // list gets this run's.
    if (chief && !fs::exists(done_path)) {
      seqio::WriteStringToFileAtomic(EvaluatedSettingsPath(s), OutputRecordJson(EvalRecord(loaded)));
    }
    std::ifstream f(done_path);
    for (std::string p; f >> p;) done.insert(p);
    std::vector<std::string> todo;
    for (const std::string& d : dirs) {
      if (done.count(d)) {
        result.skipped.push_back(d);
      } else {
        todo.push_back(d);
      }
    }
    for (const std::string& d : result.skipped) {
      log << "[eval] " << d << " was evaluated before (" << done_path << "); skipping it"
          << std::endl;
    }
    dirs = todo;
  }
  // t5x's InferenceEvaluator logs under <log_dir>/inference_eval.
  InferenceEvaluator evaluator(s.dataset, "eval", s.evaluator, s.output_dir + "/inference_eval",
                               /*write_logs=*/chief);
  // t5x's eval.py raises when the Evaluator has no task.
  T5XX_CHECK(!evaluator.empty(), evaluator.no_tasks_reason());
  for (const std::string& task : evaluator.task_names()) {
    log << "[eval] task " << task << ": " << evaluator.num_examples(task) << " examples of split '"
        << s.dataset.split << "'" << std::endl;
  }
  const seqio::VocabularyPtr vocab = TargetsVocabulary(s.dataset.mixture_or_task_name);
  for (const std::string& dir : dirs) {
    InferenceModel m = LoadInferenceModel(s.model, vocab->eos_id(), dir, s.restore.options, log,
                                          device, partitioner.get(),
                                          static_cast<uint64_t>(s.fallback_init_rng.value_or(0)),
                                          evaluator.scores() ? 0 : s.dataset.batch_size);
    const std::unique_ptr<models::Int8Weights> int8 =
        Int8WeightsFor(loaded.options, s.model, m, log);
    const models::Int8WeightsScope int8_scope(int8.get());
    result.evaluated.emplace_back(m.step, evaluator.Evaluate(m.step, *m.model, m.params, s.model,
                                                             log, ReplicasOf(*partitioner)));
    LogInt8Weights(int8.get(), "eval", log);
    if (chief && s.restore.mode == "all") {
      std::ofstream f(done_path, std::ios::app);
      f << dir << "\n";
      T5XX_CHECK(f.good(), "cannot append to " + done_path);
    }
  }
  return result;
}

}  // namespace t5xx::run
