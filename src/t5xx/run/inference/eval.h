// t5x's evaluate() (t5x/eval.py): seqio's Evaluator (evaluator.h) over a
// DatasetConfig, run on one checkpoint ('specific', 'latest') or on every
// checkpoint_<N> of a directory in step order ('all'), logging under
// output_dir/inference_eval (as t5x's InferenceEvaluator: <task>/
// TensorBoard events, <task>-metrics.jsonl, <task>-<step>.jsonl). With 'all', each evaluated checkpoint's path is
// appended to <output_dir>/eval.<mixture_or_task_name>.ckpt, and those
// already listed there are skipped, so a restarted job goes on where it
// stopped (t5x's _load_evaluated_ckpt_paths).
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "t5xx/metrics/metrics.h"
#include "t5xx/run/train_setup.h"

namespace t5xx::run {

struct EvalResult {
  // (checkpoint step, task -> metrics) of each checkpoint evaluated now.
  std::vector<std::pair<int64_t, std::map<std::string, seqio::metrics::Metrics>>> evaluated;
  std::vector<std::string> skipped;  // checkpoints already evaluated ('all')
  int rank = 0;  // this process's rank of the run (only rank 0 writes)
};

// Runs `t5xx eval` for a loaded eval configuration, logging to `log`.
// Throws t5xx::Error for a multi-process launch or num_partitions > 1, a
// missing checkpoint, a dataset with no task to evaluate, or a metric
// failure.
EvalResult RunEval(const LoadedTrainConfig& loaded, std::ostream& log);

// What RunEval refuses before it reads a checkpoint, beyond ValidateEvalRun
// (t5xx config runs both): evaluate.output_dir cannot be created
// (CheckOutputDirUsable), or (mode 'all') its list of evaluated checkpoints
// was made with other settings than this run's, naming the setting. Throws
// t5xx::Error.
void PreflightEvalRun(const LoadedTrainConfig& loaded);

}  // namespace t5xx::run
