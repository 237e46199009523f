// `t5xx config`: validates a configuration without running it and prints
// the operative config -- the same text `t5xx train` writes to
// MODEL_DIR/config.gin. For a train configuration it runs every check train
// runs before its first step that needs no model parameters
// (run/validation.h, run/preflight.h: the same functions, so config refuses
// what train refuses), reading the first batches but writing nothing; the
// memory plan's verdict is a note. For an infer or eval configuration
// (t5x's runs/infer.gin, runs/eval.gin) it runs that command's checks
// before a checkpoint is read. Accepts train's --data_dir so the same
// command line works for both.
#include <iostream>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_flags.h"
#include "t5xx/run/inference/eval.h"
#include "t5xx/run/inference/infer.h"
#include "t5xx/run/preflight.h"
#include "t5xx/run/validation.h"

namespace t5xx::cli {

int ConfigCommand(const std::vector<std::string>& args) {
  const run::LoadedTrainConfig loaded = LoadTrainConfigFromFlags(args, "config");
  if (loaded.command != "train") {
    // An infer or eval run file (t5x's runs/infer.gin, runs/eval.gin):
    // the checks that command runs before it reads a checkpoint.
    const std::vector<std::string> dirs = loaded.command == "infer"
                                              ? run::ValidateInferRun(loaded)
                                              : run::ValidateEvalRun(loaded);
    if (loaded.command == "infer") {
      run::PreflightInferRun(loaded, dirs.back());
    } else {
      run::PreflightEvalRun(loaded);
    }
    std::cerr << "t5xx: note: an " << loaded.command << " configuration; `t5xx "
              << loaded.command << "` would restore " << dirs.size() << " checkpoint"
              << (dirs.size() == 1 ? "" : "s") << (dirs.empty() ? "" : " (" + dirs.front() +
                                                                         (dirs.size() > 1 ? ", ..." : "") + ")")
              << std::endl;
    std::cout << loaded.config->OperativeConfigString();
    return 0;
  }
  const run::ValidatedTrainRun run = run::ValidateTrainRun(loaded);
  // What train checks before its first step without the model's
  // parameters: the same function, so config refuses what train refuses.
  run::PreflightTrainRun(loaded, run);
  if (run.memory_problem) {
    std::cerr << "t5xx: note: on this machine `t5xx train` would refuse this run: "
              << *run.memory_problem << std::endl;
  }
  for (const std::string& note : run.restore_notes) {
    std::cerr << "t5xx: note: " << note << std::endl;
  }
  if (run.restore) {
    std::cerr << "t5xx: note: train would start by " << run.restore->description << " (step "
              << run.restore->step
              << "); whether its keys and shapes fit this model is checked when train builds "
                 "the model, before anything is written"
              << std::endl;
  }
  std::cout << loaded.config->OperativeConfigString();
  return 0;
}

}  // namespace t5xx::cli
