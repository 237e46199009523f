// See restore.h.
#include "t5xx/run/restore.h"

#include <filesystem>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/util/error.h"
#include "t5xx/storage/remote_copy.h"

namespace t5xx::run {
namespace fs = std::filesystem;

namespace {

int64_t StepOf(const std::string& dir) { return checkpoints::CheckpointReader(dir).step(); }

}  // namespace

std::optional<RestorePlan> PlanRestore(const TrainSetup& s, std::vector<std::string>* notes) {
  const std::vector<int64_t> own = checkpoints::ListCheckpointSteps(s.model_dir);
  if (!own.empty()) {
    RestorePlan p;
    p.checkpoint_dir = checkpoints::CheckpointDir(s.model_dir, own.back());
    const std::string before =
        own.size() > 1 ? " to resume from " + checkpoints::CheckpointDir(s.model_dir, own[own.size() - 2])
                       : " to start afresh";
    try {
      p.step = StepOf(p.checkpoint_dir);
    } catch (const Error& e) {
      throw Error("MODEL_DIR's latest checkpoint cannot be resumed from: " + std::string(e.what()) +
                  "; move " + p.checkpoint_dir + " out of MODEL_DIR" + before);
    }
    T5XX_CHECK(p.step == own.back(),
               p.checkpoint_dir + " holds step " + std::to_string(p.step) +
                   " (its optimizer.state.step), not " + std::to_string(own.back()) +
                   "; rename it checkpoint_" + std::to_string(p.step) +
                   " or move it out of MODEL_DIR" + before);
    p.resuming = true;
    p.restore_dataset = true;
    p.description = "resuming from MODEL_DIR's latest checkpoint " + p.checkpoint_dir;
    if (s.restore) {
      p.description += " (utils.CheckpointConfig.restore is not used when resuming, as in t5x)";
    }
    return p;
  }
  if (!s.restore) return std::nullopt;
  const RestoreCheckpointConfig& r = *s.restore;
  RestorePlan p;
  p.options = r.options;
  p.restore_dataset = p.require_dataset = r.restore_dataset;
  if (r.mode == "specific") {
    std::string dir = r.paths.front();
    std::error_code ec;
    if (fs::is_regular_file(dir, ec) && fs::path(dir).filename() == "checkpoint") {
      dir = fs::path(dir).parent_path().string();  // t5x accepts the index file too
    }
    T5XX_CHECK(!IsRemotePath(dir),
               MissingRemoteCopyMessage(dir, RemoteCopyDataDir(), r.where + ", a checkpoint,",
                                        /*directory=*/true));
    T5XX_CHECK(checkpoints::IsCheckpointDir(dir),
               r.where + " = '" + r.paths.front() + "' is not a t5x checkpoint directory (" +
                   (fs::exists(dir, ec) ? "it has neither a 'checkpoint' index file nor "
                                          "Orbax's state/manifest.ocdbt"
                                        : std::string("it does not exist")) +
                   "); give a checkpoint_<N> directory, or set mode = 'latest' and the "
                   "directory holding checkpoint_<N> directories");
    p.checkpoint_dir = dir;
    p.step = trainer::RestoresStep(r.options) ? StepOf(dir) : 0;
    p.description = "restoring " + dir + " (utils.RestoreCheckpointConfig, mode 'specific')";
    return p;
  }
  CheckRestoreDirectories(r);
  for (const std::string& path : r.paths) {  // mode 'latest'
    const std::vector<int64_t> steps = checkpoints::ListCheckpointSteps(path);
    if (steps.empty()) {
      notes->push_back("no checkpoints found in " + path + " (" + r.where + ", mode 'latest')");
      continue;
    }
    p.checkpoint_dir = checkpoints::CheckpointDir(path, steps.back());
    p.step = trainer::RestoresStep(r.options) ? StepOf(p.checkpoint_dir) : 0;
    p.description =
        "restoring " + p.checkpoint_dir + " (utils.RestoreCheckpointConfig, mode 'latest')";
    return p;
  }
  notes->push_back("starting from scratch: utils.RestoreCheckpointConfig found no checkpoint");
  return std::nullopt;
}

void CheckRestoreDirectories(const RestoreCheckpointConfig& r) {
  if (r.mode != "latest" && r.mode != "all") return;
  for (const std::string& path : r.paths) {
    std::error_code ec;
    T5XX_CHECK(fs::is_directory(path, ec),
               r.where + ": '" + path + "' " +
                   (fs::exists(path, ec) ? "is not a directory" : "does not exist") +
                   "; with utils.RestoreCheckpointConfig.mode = '" + r.mode +
                   "' each path must be a directory that holds checkpoint_<N> directories (t5x: "
                   "\"Checkpoint path(s) must be valid directories when using restore mode 'all' "
                   "or 'latest'\"); give a checkpoint_<N> directory with mode 'specific', or "
                   "path = [] to start from scratch");
  }
}

}  // namespace t5xx::run
