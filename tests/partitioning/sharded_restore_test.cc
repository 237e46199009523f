// Sharded checkpoints restore onto other layouts with the same evaluation
// loss (issue 12's bar "a checkpoint saved under 2x2 restores on 1 process
// and on 4x1 with identical evaluation loss; one saved on 1 process
// restores under 2x2"). The tiny T5 of tiny_training.h (float32, no
// dropout, z-loss and label smoothing on) trains 5 steps with Adafactor
// (with momentum: sharded_restore.h) on real processes joined
// over Gloo and saves checkpoint_5, each process writing its boxes; the
// checkpoint is then restored on another layout, each process reading only
// its boxes (OwnedSlices of its layout), and the restored model evaluates
// one fixed batch it never trained on. Every process of every restore gets
// the saving run's own eval loss (computed before it saved) within 1e-6
// relative -- the parameters are bit-identical, only the order of the
// sharded sums differs -- and step 5. Each then trains step 6 and
// evaluates again: within 1e-5 of the saving run's step 6 (which needs the
// optimizer's slots and step restored too; 1e-5 as between layouts in
// partitioned_training_test). The one-process runs are in this test
// (LocalCommunicator); the others are sharded_restore_worker processes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "partitioning/multiprocess.h"
#include "partitioning/sharded_restore.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"

namespace t5xx::partitioning {
namespace {

using testing::TinyEvals;
constexpr int kSteps = 5;
// TinyAdafactorConfig's min_dim_size_to_factor: 128 factors none of the
// tiny model's parameters, 16 its kernels and embedding.
constexpr int64_t kNoFactoring = 128;
constexpr int64_t kFactorKernels = 16;

// Runs sharded_restore_worker `args` on `world` processes; every rank must
// exit 0; returns what each printed.
std::vector<TinyEvals> RunWorkers(int world, const std::vector<std::string>& args,
                                  const std::string& what) {
  std::vector<int> ranks;
  for (int r = 0; r < world; ++r) ranks.push_back(r);
  const testing::Outcome run = testing::Launch(T5XX_SHARDED_RESTORE_WORKER, world, ranks, args);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<TinyEvals> reports(static_cast<size_t>(world), TinyEvals{-1, -1, nan, nan});
  for (size_t r = 0; r < reports.size(); ++r) {
    EXPECT_EQ(run.exit_codes[r], 0) << what << " rank " << r << ": " << run.errors[r];
    std::istringstream in(run.outputs[r]);
    std::string kind;
    while (in >> kind) {
      if (kind == "step") in >> reports[r].checkpoint_step >> reports[r].trainer_step;
      if (kind == "eval") in >> reports[r].eval_loss;
      if (kind == "next") in >> reports[r].next_eval_loss;
    }
  }
  return reports;
}

void ExpectClose(double got, double want, double rtol, const std::string& what) {
  std::printf("%s: %.9g (saving run %.9g, relative difference %.2g)\n", what.c_str(), got, want,
              std::abs(got - want) / std::abs(want));
  EXPECT_LE(std::abs(got - want), rtol * std::abs(want)) << what << ": " << got << " vs " << want;
}

void ExpectSameAsSaved(const TinyEvals& got, const TinyEvals& saved, const std::string& what) {
  EXPECT_EQ(got.checkpoint_step, kSteps) << what;
  EXPECT_EQ(got.trainer_step, kSteps) << what;
  ExpectClose(got.eval_loss, saved.eval_loss, 1e-6, what + " eval loss");
  ExpectClose(got.next_eval_loss, saved.next_eval_loss, 1e-5, what + " eval loss after step 6");
}

// Restores `checkpoint_dir` on `world` processes with `layout`; each
// process must match `saved`.
void ExpectRestores(const std::string& checkpoint_dir, int world, const testing::TinyLayout& layout,
                    const TinyEvals& saved, const std::string& what,
                    int64_t min_dim_to_factor = kNoFactoring) {
  if (world == 1) {
    ExpectSameAsSaved(testing::RestoreAndEval(std::make_shared<LocalCommunicator>(), layout,
                                              testing::TinyAdafactorConfig(min_dim_to_factor),
                                              checkpoint_dir),
                      saved, what);
    return;
  }
  const std::vector<TinyEvals> reports = RunWorkers(
      world,
      {"restore", checkpoint_dir, layout.model, std::to_string(layout.num_partitions),
       std::to_string(layout.parameter_partitioning_dims), std::to_string(min_dim_to_factor)},
      what);
  for (size_t r = 0; r < reports.size(); ++r) {
    ExpectSameAsSaved(reports[r], saved, what + " rank " + std::to_string(r));
  }
}

// 4 processes on 2x2 (parameter_partitioning_dims `param_dims`) train and
// save checkpoint_5 into `model_dir`; returns their eval losses (the same
// on every rank).
TinyEvals SaveOn2x2(const std::string& model_dir, int param_dims,
                    int64_t min_dim_to_factor = kNoFactoring) {
  const std::vector<TinyEvals> saved =
      RunWorkers(4,
                 {"save", model_dir, "t5", "2", std::to_string(param_dims),
                  std::to_string(min_dim_to_factor), std::to_string(kSteps)},
                 "save");
  for (size_t r = 1; r < saved.size(); ++r) {
    EXPECT_EQ(saved[r].eval_loss, saved[0].eval_loss) << "rank " << r << " of the saving run";
    EXPECT_EQ(saved[r].next_eval_loss, saved[0].next_eval_loss) << "rank " << r;
  }
  EXPECT_EQ(checkpoints::ListCheckpointSteps(model_dir), std::vector<int64_t>{kSteps});
  std::printf("saved on 2x2 (parameter_partitioning_dims %d) after %d steps: eval loss %.9g, "
              "after step 6 %.9g\n",
              param_dims, kSteps, saved[0].eval_loss, saved[0].next_eval_loss);
  return saved[0];
}

TEST(ShardedRestore, ACheckpointSavedUnder2x2RestoresOnOneProcess4x1And2x2WithItsEvalLoss) {
  const testing::TempDir model_dir;
  const TinyEvals saved = SaveOn2x2(model_dir.path, 1);
  ASSERT_TRUE(std::isfinite(saved.eval_loss) && std::isfinite(saved.next_eval_loss));
  const std::string dir = checkpoints::CheckpointDir(model_dir.path, kSteps);
  ExpectRestores(dir, 1, {"t5", 1, 1, 1}, saved, "2x2 -> 1 process");
  ExpectRestores(dir, 4, {"t5", 1, 1, 1}, saved, "2x2 -> 4x1");
  ExpectRestores(dir, 4, {"t5", 2, 1, 1}, saved, "2x2 -> 2x2");
}

TEST(ShardedRestore, ACheckpointSavedOnOneProcessRestoresUnder2x2WithItsEvalLoss) {
  const testing::TempDir model_dir;
  const TinyEvals saved =
      testing::TrainAndSave(std::make_shared<LocalCommunicator>(), {"t5", 1, 1, 1},
                            testing::TinyAdafactorConfig(kNoFactoring), kSteps, model_dir.path);
  std::printf("saved on 1 process after %d steps: eval loss %.9g, after step 6 %.9g\n", kSteps,
              saved.eval_loss, saved.next_eval_loss);
  ASSERT_EQ(checkpoints::ListCheckpointSteps(model_dir.path), std::vector<int64_t>{kSteps});
  ExpectRestores(checkpoints::CheckpointDir(model_dir.path, kSteps), 4, {"t5", 2, 1, 1}, saved,
                 "1 process -> 2x2");
}

// ZeRO-3 on 2x2 ('embed' -> 'data' besides the model axis): the writers'
// boxes split the parameters over both axes.
TEST(ShardedRestore, AZeRO3CheckpointSavedUnder2x2RestoresOnOneProcessWithItsEvalLoss) {
  const testing::TempDir model_dir;
  const TinyEvals saved = SaveOn2x2(model_dir.path, 2);
  ASSERT_TRUE(std::isfinite(saved.eval_loss) && std::isfinite(saved.next_eval_loss));
  ExpectRestores(checkpoints::CheckpointDir(model_dir.path, kSteps), 1, {"t5", 1, 1, 1}, saved,
                 "2x2 ZeRO-3 -> 1 process");
}

// Adafactor's factored slots (v_row/v_col) across layouts, with
// min_dim_size_to_factor = 16 so that the tiny model's kernels factor. A
// slot takes its logical axes from the parameter dims the optimizer says
// it keeps (optim::StateArray::param_dims): matching local dims by size
// (as DescribeVariables once did) is ambiguous when a sharded parameter's
// local dims are equal (the embedding [vocab 64, embed 32] is [32, 32] on
// 2x2), and gave v_row/v_col the wrong boxes.
TEST(ShardedRestore, FactoredAdafactorSlotsRestoreAcross2x2AndOneProcess) {
  const testing::TempDir model_dir;
  const TinyEvals saved = SaveOn2x2(model_dir.path, 1, kFactorKernels);
  const std::string dir = checkpoints::CheckpointDir(model_dir.path, kSteps);
  ExpectRestores(dir, 1, {"t5", 1, 1, 1}, saved, "factored 2x2 -> 1 process", kFactorKernels);
  const testing::TempDir one_dir;
  const TinyEvals one =
      testing::TrainAndSave(std::make_shared<LocalCommunicator>(), {"t5", 1, 1, 1},
                            testing::TinyAdafactorConfig(kFactorKernels), kSteps, one_dir.path);
  ExpectRestores(checkpoints::CheckpointDir(one_dir.path, kSteps), 4, {"t5", 2, 1, 1}, one,
                 "factored 1 process -> 2x2", kFactorKernels);
}

}  // namespace
}  // namespace t5xx::partitioning
