// `t5xx infer` and `t5xx eval`: t5x's infer.py and eval.py. Both read train's
// gin flags (train_flags.h) with the roots __main__.infer / __main__.evaluate
// and print what run/inference/infer.h and run/inference/eval.h do.
#include <iostream>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_flags.h"
#include "t5xx/run/inference/eval.h"
#include "t5xx/run/inference/infer.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/storage/staged_output.h"

namespace t5xx::cli {

int InferCommand(const std::vector<std::string>& args) {
  const run::LoadedTrainConfig loaded = LoadTrainConfigFromFlags(args, "infer");
  const run::InferResult r = run::RunInfer(loaded, std::cout);
  if (r.rank != 0) {
    std::cout << "[done] rank " << r.rank << ": its share decoded; rank 0 wrote the outputs"
              << std::endl;
    return 0;
  }
  // INFER_OUTPUT_DIR in a bucket: the outputs written, uploaded.
  for (const std::string& line : storage::UploadStagedOutputs()) std::cout << "[infer] " << line << std::endl;
  std::cout << "[done] " << r.examples << " examples inferred";
  if (r.chunks_skipped) std::cout << ", " << r.chunks_skipped << " completed chunks skipped";
  for (const std::string& f : r.files) std::cout << "; " << WithUrls(f);
  std::cout << std::endl;
  return 0;
}

int EvalCommand(const std::vector<std::string>& args) {
  const run::LoadedTrainConfig loaded = LoadTrainConfigFromFlags(args, "eval");
  const run::EvalResult r = run::RunEval(loaded, std::cout);
  if (r.rank != 0) {
    std::cout << "[done] rank " << r.rank << ": its share decoded; rank 0 wrote the metrics"
              << std::endl;
    return 0;
  }
  for (const std::string& line : storage::UploadStagedOutputs()) std::cout << "[eval] " << line << std::endl;
  std::cout << "[done] " << r.evaluated.size() << " checkpoint(s) evaluated";
  if (!r.skipped.empty()) std::cout << ", " << r.skipped.size() << " skipped (done before)";
  for (const auto& [step, tasks] : r.evaluated) {
    for (const auto& [task, metrics] : tasks) {
      std::cout << "; step " << step << " " << task;
      for (const auto& [k, v] : metrics) std::cout << " " << k << "=" << v;
    }
  }
  std::cout << std::endl;
  return 0;
}

}  // namespace t5xx::cli
