// `t5xx config`: validates a train configuration without running it and
// prints the operative config -- the same text `t5xx train` writes to
// MODEL_DIR/config.gin. Runs every check train runs that needs no model
// parameters and no data (run/validation.h); reads no data and writes
// nothing; accepts train's --data_dir so the same command line works for
// both.
#include <iostream>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_flags.h"
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
    std::cerr << "t5xx: note: an " << loaded.command << " configuration; `t5xx "
              << loaded.command << "` would restore " << dirs.size() << " checkpoint"
              << (dirs.size() == 1 ? "" : "s") << (dirs.empty() ? "" : " (" + dirs.front() +
                                                                         (dirs.size() > 1 ? ", ..." : "") + ")")
              << std::endl;
    std::cout << loaded.config->OperativeConfigString();
    return 0;
  }
  const run::ValidatedTrainRun run = run::ValidateTrainRun(loaded);
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
