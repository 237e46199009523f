// Every layout trains as one process (issue 12's bar): a tiny T5 (z-loss
// and label smoothing on) and a tiny decoder-only model (logits through the
// embedding) trained 20 steps on real processes joined over Gloo, under data
// (2x1, 4x1), data x model (2x2), model (1x2, 1x4), ZeRO-3
// (parameter_partitioning_dims = 2 on 2x1, 4x1 and 2x2), 2-D activation
// rules and 4x1 with 2 microbatches, give the one-process run's loss at every step and its final
// parameters within 1e-5 relative (sums run in other orders). The
// one-process reference runs in this test. The bytes of parameters and
// optimizer state each process holds shrink as each layout's specs say:
// under t5x's standard rules (1 activation dim) every variable with a
// 'vocab', 'mlp', 'heads' or 'joined_kv' axis is split over the 'model'
// axis, and with parameter_partitioning_dims = 2 every variable with an
// 'embed' axis also over 'data' (t5x/partitioning.py
// standard_logical_axis_rules), so each process holds its global bytes
// divided by those axes' sizes (ExpectedBytes, from the one-process run's
// variables: global shapes and logical axes).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "partitioning/multiprocess.h"
#include "partitioning/tiny_training.h"

namespace t5xx::partitioning {
namespace {

struct Case {
  int world;
  testing::TinyLayout layout;
};

std::string Name(const Case& c) {
  const int64_t model = c.layout.num_partitions;
  return c.layout.model + " " + std::to_string(c.world / model) + "x" + std::to_string(model) +
         " param_dims " + std::to_string(c.layout.parameter_partitioning_dims) + " act_dims " +
         std::to_string(c.layout.activation_partitioning_dims) +
         (c.layout.num_microbatches > 1
              ? " microbatches " + std::to_string(c.layout.num_microbatches)
              : std::string());
}

void ExpectClose(double got, double want, const std::string& what) {
  EXPECT_LE(std::abs(got - want), 1e-5 * std::abs(want)) << what << ": " << got << " vs " << want;
}

constexpr int kSteps = 20;

int64_t ExpectedBytes(const std::vector<VariableInfo>& variables, int64_t data, int64_t model,
                      int param_dims) {
  int64_t total = 0;
  for (const VariableInfo& v : variables) {
    int64_t bytes = v.itemsize;
    for (int64_t n : v.shape) bytes *= n;
    bool on_model = false, on_data = false;
    for (const std::string& a : v.logical_axes) {
      on_model |= a == "vocab" || a == "mlp" || a == "heads" || a == "joined_kv";
      on_data |= param_dims == 2 && a == "embed";
    }
    total += bytes / (on_model ? model : 1) / (on_data ? data : 1);
  }
  return total;
}

// Runs `c` on its processes; returns each rank's printed bytes.
std::vector<int64_t> RunAndCompare(const Case& c, const testing::TinyTrainingResult& one) {
  const testing::TempDir dir;
  const std::string file = dir.path + "/params.bin";
  std::vector<int> ranks;
  for (int r = 0; r < c.world; ++r) ranks.push_back(r);
  const testing::Outcome run = testing::Launch(
      T5XX_PARTITIONED_TRAINING_WORKER, c.world, ranks,
      {c.layout.model, std::to_string(c.layout.num_partitions),
       std::to_string(c.layout.parameter_partitioning_dims),
       std::to_string(c.layout.activation_partitioning_dims),
       std::to_string(c.layout.num_microbatches), std::to_string(kSteps), file});
  std::vector<int64_t> bytes;
  for (int r = 0; r < c.world; ++r) {
    const size_t ri = static_cast<size_t>(r);
    const std::string at = Name(c) + " rank " + std::to_string(r);
    EXPECT_EQ(run.exit_codes[ri], 0) << at << ": " << run.errors[ri];
    std::istringstream in(run.outputs[ri]);
    std::string kind;
    double v;
    size_t step = 0;
    while (in >> kind >> v) {
      if (kind == "loss") {
        if (step >= one.losses.size()) break;
        ExpectClose(v, one.losses[step], at + " loss of step " + std::to_string(step + 1));
        ++step;
      } else if (kind == "bytes") {
        bytes.push_back(static_cast<int64_t>(v));
      }
    }
    EXPECT_EQ(step, one.losses.size()) << at;
  }
  std::ifstream in(file, std::ios::binary);
  for (size_t i = 0; i < one.params.size(); ++i) {
    const at::Tensor want = one.params[i];
    at::Tensor got = at::empty_like(want);
    in.read(static_cast<char*>(got.data_ptr()), want.numel() * 4);
    EXPECT_TRUE(in.good()) << Name(c) << ": the parameters file is short";
    const double scale = want.abs().max().item<double>();
    const double diff = (got - want).abs().max().item<double>();
    EXPECT_LE(diff, 1e-5 * scale) << Name(c) << " parameter " << i << " differs by " << diff;
  }
  return bytes;
}

class PartitionedTrainingTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PartitionedTrainingTest, EveryLayoutTrainsAsOneProcess) {
  const std::string model = GetParam();
  const testing::TinyTrainingResult one =
      testing::TrainTiny(std::make_shared<LocalCommunicator>(), kSteps, {model});
  ASSERT_EQ(one.losses.size(), static_cast<size_t>(kSteps));
  EXPECT_LT(one.losses.back(), one.losses.front());  // it learns
  const std::vector<Case> cases = {
      {2, {model, 1, 1, 1}}, {4, {model, 1, 1, 1}},  // data
      {4, {model, 2, 1, 1}},                         // data x model
      {2, {model, 2, 1, 1}}, {4, {model, 4, 1, 1}},  // model
      {2, {model, 1, 2, 1}}, {4, {model, 1, 2, 1}},  // ZeRO-3
      {4, {model, 2, 2, 1}},                         // ZeRO-3 x model
      {2, {model, 2, 1, 2}}, {4, {model, 2, 2, 2}},  // 2-D activation rules
      {4, {model, 1, 1, 1, 2}},  // 4x1 with 2 microbatches: the bucketed all-reduce
                                 // started in the backward pass carries the step's totals
  };
  for (const Case& c : cases) {
    const std::vector<int64_t> bytes = RunAndCompare(c, one);
    ASSERT_EQ(bytes.size(), static_cast<size_t>(c.world)) << Name(c);
    std::printf("%s: %lld bytes of parameters and optimizer state per process (one process: "
                "%lld)\n",
                Name(c).c_str(), static_cast<long long>(bytes[0]),
                static_cast<long long>(one.bytes_per_process));
    if (c.layout.activation_partitioning_dims == 1) {
      const int64_t model_size = c.layout.num_partitions, data = c.world / model_size;
      const int64_t want =
          ExpectedBytes(one.variables, data, model_size, c.layout.parameter_partitioning_dims);
      for (int r = 0; r < c.world; ++r) {
        EXPECT_EQ(bytes[static_cast<size_t>(r)], want) << Name(c) << " rank " << r;
      }
      if (c.layout.num_partitions == 1 && c.layout.parameter_partitioning_dims == 1) {
        EXPECT_EQ(want, one.bytes_per_process) << Name(c);  // data parallelism replicates
      } else {
        EXPECT_LT(want, one.bytes_per_process) << Name(c);
      }
    } else {
      EXPECT_LT(bytes[0], one.bytes_per_process) << Name(c);  // 2-D activation rules
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, PartitionedTrainingTest,
                         ::testing::Values(std::string("t5"), std::string("decoder_only")));

}  // namespace
}  // namespace t5xx::partitioning
