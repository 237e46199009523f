// `t5xx train`: t5x's train.py. Everything that can be checked is checked
// before MODEL_DIR is created or written (run/validation.h, run/train.h);
// this command prints and runs t5x's training loop.
#include <iostream>

#include "t5xx/cli/commands.h"
#include "t5xx/cli/train_flags.h"
#include "t5xx/run/model_dir.h"
#include "t5xx/run/train.h"
#include "t5xx/run/validation.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/trainer/train_loop.h"
#include "t5xx/util/system/stop_signals.h"

namespace t5xx::cli {

int TrainCommand(const std::vector<std::string>& args) {
  run::LoadedTrainConfig loaded = LoadTrainConfigFromFlags(args, "train");
  // A bucket's MODEL_DIR: the run works in its staging directory and
  // publishes each checkpoint (checkpoints/bucket_model_dir.h).
  const std::unique_ptr<checkpoints::BucketModelDir> bucket =
      run::StageModelDir(loaded.setup.model_dir, std::cout);
  const run::ValidatedTrainRun validated = run::ValidateTrainRun(loaded);
  // Until the loop starts a stop signal ends the process at once (nothing
  // to save yet; a process still joining the others would otherwise wait
  // out the join timeout). Then SIGTERM (a scheduler's preemption) and
  // SIGINT end the loop after the current step, with a checkpoint of it.
  run::PreparedTrainRun run = run::PrepareTrainRun(loaded, validated, std::cout);
  InstallStopSignalHandlers();
  if (bucket && run.loop.chief) {
    bucket->SyncFiles();  // config.gin, as t5x writes it at start-up
    bucket->UploadWhileWriting();
    run.loop.after_commit = [&bucket](checkpoints::WriteResult& w) {
      w.note = bucket->Publish(w.step, w.deleted);
    };
  }
  trainer::TrainResult r;
  try {
    r = trainer::RunTrainLoop(*run.trainer, run.train_batches, run.eval_datasets, run.loop,
                              std::cout);
  } catch (...) {
    if (bucket && run.loop.chief) {
      try {
        bucket->SyncFiles();  // the summaries up to the error
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << std::endl;
      }
    }
    throw;
  }
  if (bucket && run.loop.chief) bucket->SyncFiles();
  r.checkpoint_dir = WithUrls(r.checkpoint_dir);
  std::cout << "[done] step " << r.steps << " reached";
  if (r.steps == r.start_step) {
    std::cout << " (nothing to train: the start step is already the last)";
  } else {
    std::cout << " (trained " << r.steps - r.start_step << " steps in " << r.train_seconds
              << " s); loss per target token: first " << r.first_loss_per_token << ", last "
              << r.last_loss_per_token;
  }
  for (const auto& [task, metrics] : r.eval) {
    std::cout << "; validation " << task << " " << metrics.at("loss_per_nonpadding_target_token")
              << " (accuracy " << metrics.at("accuracy") << ")";
  }
  if (r.stopped_early) std::cout << "; stopped early by an action";
  std::cout << "; checkpoint " << (r.checkpoint_dir.empty() ? "none" : r.checkpoint_dir)
            << std::endl;
  if (r.stop_signal) {
    std::cout << "[stopped] "
              << (r.stop_elsewhere ? std::string("a stop signal to another process of the run")
                                   : std::string(StopSignalName(r.stop_signal)))
              << " after step " << r.steps
              << (r.checkpoint_dir.empty() ? std::string("; saving is off, nothing was saved")
                                           : "; its state is in " + r.checkpoint_dir +
                                                 "; run the same command to resume")
              << std::endl;
    return 128 + r.stop_signal;
  }
  return 0;
}

}  // namespace t5xx::cli
