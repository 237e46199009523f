// Data parallelism across real processes (Gloo): the tiny T5 trained 10
// steps on 2 and on 4 processes (each taking its rows of every global batch,
// gradients and metrics summed across them) gives the one-process run's
// loss at every step and its final parameters, within 1e-5 relative (the
// sums run in another order). The one-process reference runs in this test.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "partitioning/multiprocess.h"
#include "partitioning/tiny_training.h"

namespace t5xx::partitioning {
namespace {

void ExpectClose(double got, double want, const std::string& what) {
  EXPECT_LE(std::abs(got - want), 1e-5 * std::abs(want)) << what << ": " << got << " vs " << want;
}

TEST(DataParallelTest, TwoAndFourProcessesTrainAsOne) {
  const testing::TinyTrainingResult one =
      testing::TrainTiny(std::make_shared<LocalCommunicator>(), 10);
  for (int world : {2, 4}) {
    std::vector<int> ranks;
    for (int r = 0; r < world; ++r) ranks.push_back(r);
    const testing::Outcome run = testing::Launch(T5XX_DATA_PARALLEL_WORKER, world, ranks, {});
    for (int r = 0; r < world; ++r) {
      const size_t ri = static_cast<size_t>(r);
      ASSERT_EQ(run.exit_codes[ri], 0) << "world " << world << " rank " << r << ": "
                                       << run.errors[ri];
      std::istringstream in(run.outputs[ri]);
      std::string kind;
      double v;
      size_t step = 0, param = 0;
      while (in >> kind >> v) {
        const std::string at = "world " + std::to_string(world) + " rank " + std::to_string(r);
        if (kind == "loss") {
          ASSERT_LT(step, one.losses.size());
          ExpectClose(v, one.losses[step], at + " loss of step " + std::to_string(step + 1));
          ++step;
        } else {
          ASSERT_LT(param, one.param_checksums.size());
          ExpectClose(v, one.param_checksums[param], at + " parameter " + std::to_string(param));
          ++param;
        }
      }
      EXPECT_EQ(step, one.losses.size());
      EXPECT_EQ(param, one.param_checksums.size());
    }
  }
}

}  // namespace
}  // namespace t5xx::partitioning
