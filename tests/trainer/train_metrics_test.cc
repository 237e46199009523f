// The train loop's metric arithmetic against hand-computed values from t5x's
// definitions (t5x/models.py compute_base_metrics and count_packed_examples,
// t5x/metrics.py AveragePerStep/TimeRate/StepsPerTime, clu Average/Accuracy),
// and gin.markdown (gin/config.py) for the "config" text summary.
#include <gtest/gtest.h>

#include <cmath>

#include "t5xx/trainer/train_loop.h"

namespace t5xx::trainer {
namespace {

at::Tensor Ids(std::vector<std::vector<int64_t>> rows) {
  const int64_t b = static_cast<int64_t>(rows.size()), l = static_cast<int64_t>(rows[0].size());
  at::Tensor t = at::zeros({b, l}, at::kLong);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < l; ++j) t[i][j] = rows[i][j];
  }
  return t;
}

TEST(TrainMetricsTest, CountPackedExamplesMatchesT5xDocstring) {
  // t5x's count_packed_examples docstring: "[[1, 1, 3, 3, 0, 0], [2, 2, 2, 2,
  // 2, 2], [2, 7, 7, 7, 7, 0]] has 5 packed examples": 4 nonzero differences
  // + 3 rows - 2 rows ending in padding.
  EXPECT_EQ(CountPackedExamples(Ids({{1, 1, 3, 3, 0, 0}, {2, 2, 2, 2, 2, 2}, {2, 7, 7, 7, 7, 0}})),
            5);
  // An all-padding row counts 0: 0 differences + 1 row - 1 padded row.
  EXPECT_EQ(CountPackedExamples(Ids({{0, 0, 0}})), 0);
}

TEST(TrainMetricsTest, CountBatchUnpackedUsesTokenMasks) {
  // No *_segment_ids: t5x takes {encoder_input_tokens, decoder_target_tokens}
  // != 0 as the segments.
  models::FeatureBatch b;
  b["encoder_input_tokens"] = Ids({{5, 6, 0}, {7, 0, 0}});
  b["decoder_target_tokens"] = Ids({{3, 1, 0, 0}, {4, 5, 1, 0}});
  b["decoder_input_tokens"] = Ids({{0, 3, 1, 0}, {0, 4, 5, 1}});
  BatchCounts c = CountBatch(b);
  EXPECT_EQ(c.examples, 2);
  EXPECT_EQ(c.target_tokens, 8);
  ASSERT_EQ(c.features.size(), 2u);
  const auto& enc = c.features.at("encoder_input_tokens");
  EXPECT_EQ(enc.non_padding, 3);  // 5, 6, 7
  EXPECT_EQ(enc.size, 6);
  EXPECT_EQ(enc.packed_examples, 2);  // masks [1,1,0], [1,0,0]: 2 changes + 2 rows - 2 padded
  const auto& dec = c.features.at("decoder_target_tokens");
  EXPECT_EQ(dec.non_padding, 5);
  EXPECT_EQ(dec.size, 8);
  EXPECT_EQ(dec.packed_examples, 2);
}

TEST(TrainMetricsTest, CountBatchPackedUsesSegmentIds) {
  // Packed: "<name>_segment_ids" -> feature "<name>" (t5x strips the suffix).
  models::FeatureBatch b;
  b["encoder_input_tokens"] = Ids({{5, 6, 7, 8}, {9, 9, 9, 0}});
  b["encoder_segment_ids"] = Ids({{1, 1, 2, 2}, {1, 2, 3, 0}});
  b["decoder_target_tokens"] = Ids({{3, 1, 4, 1}, {2, 1, 0, 0}});
  b["decoder_segment_ids"] = Ids({{1, 1, 2, 2}, {1, 1, 0, 0}});
  BatchCounts c = CountBatch(b);
  ASSERT_EQ(c.features.size(), 2u);
  // encoder: row 1: 1 change, row 2: 3 changes (1->2->3->0); + 2 rows - 1 padded = 5.
  EXPECT_EQ(c.features.at("encoder").packed_examples, 5);
  EXPECT_EQ(c.features.at("encoder").non_padding, 7);
  // decoder: 1 + 1 changes + 2 rows - 1 padded = 3.
  EXPECT_EQ(c.features.at("decoder").packed_examples, 3);
  EXPECT_EQ(c.features.at("decoder").non_padding, 6);
}

TEST(TrainMetricsTest, AccumulatorComputesT5xDefinitions) {
  // Two steps, values chosen by hand.
  BatchCounts counts;
  counts.examples = 2;
  counts.target_tokens = 8;
  counts.features["decoder"] = {/*non_padding=*/6, /*size=*/8, /*packed_examples=*/3};
  counts.features["encoder"] = {/*non_padding=*/4, /*size=*/8, /*packed_examples=*/2};
  StepMetrics a, b;
  a.loss = 12, a.z_loss = 2, a.weight_sum = 6, a.correct = 3, a.learning_rate = 0.1;
  b.loss = 8, b.z_loss = 1, b.weight_sum = 4, b.correct = 4, b.learning_rate = 0.05;
  MetricsAccumulator acc(/*train=*/true);
  acc.Add(a, counts);
  acc.Add(b, counts);
  auto s = acc.Compute(/*seconds=*/4, /*num_devices=*/2, /*flops_per_step=*/100,
                       /*peak_flops_per_second=*/1000);
  EXPECT_DOUBLE_EQ(s.at("accuracy"), 7.0 / 10);          // (3 + 4) / (6 + 4)
  EXPECT_DOUBLE_EQ(s.at("loss"), 10);                    // (12 + 8) / 2 steps
  EXPECT_DOUBLE_EQ(s.at("z_loss"), 1.5);                 // (2 + 1) / 2
  EXPECT_DOUBLE_EQ(s.at("cross_ent_loss"), 8.5);         // (20 - 3) / 2
  EXPECT_DOUBLE_EQ(s.at("loss_per_nonpadding_target_token"), 2);  // 20 / 10
  EXPECT_DOUBLE_EQ(s.at("loss_per_all_target_tokens"), 1.25);     // 20 / 16
  EXPECT_DOUBLE_EQ(s.at("z_loss_per_all_target_tokens"), 3.0 / 16);
  EXPECT_DOUBLE_EQ(s.at("cross_ent_loss_per_all_target_tokens"), 17.0 / 16);
  EXPECT_DOUBLE_EQ(s.at("non_padding_fraction/loss_weights"), 10.0 / 16);
  EXPECT_DOUBLE_EQ(s.at("non_padding_fraction/decoder"), 12.0 / 16);
  EXPECT_DOUBLE_EQ(s.at("non_padding_fraction/encoder"), 8.0 / 16);
  EXPECT_DOUBLE_EQ(s.at("non_padding_fraction/overall"), 20.0 / 32);
  EXPECT_DOUBLE_EQ(s.at("effective_batch_size/decoder"), 3);  // (3 + 3) / 2 steps
  EXPECT_DOUBLE_EQ(s.at("effective_batch_size/encoder"), 2);
  EXPECT_DOUBLE_EQ(s.at("timing/seconds"), 4);
  EXPECT_DOUBLE_EQ(s.at("timing/seqs"), 4);
  EXPECT_DOUBLE_EQ(s.at("timing/steps_per_second"), 0.5);  // 2 steps / 4 s
  EXPECT_DOUBLE_EQ(s.at("timing/seqs_per_second"), 1);
  EXPECT_DOUBLE_EQ(s.at("timing/seqs_per_second_per_core"), 0.5);  // / 2 devices
  EXPECT_DOUBLE_EQ(s.at("timing/target_tokens_per_second"), 4);    // 16 / 4
  EXPECT_DOUBLE_EQ(s.at("timing/target_tokens_per_second_per_core"), 2);
  EXPECT_DOUBLE_EQ(s.at("learning_rate"), 0.075);  // mean of 0.1, 0.05
  EXPECT_DOUBLE_EQ(s.at("learning_rate/current"), 0.05);
  EXPECT_DOUBLE_EQ(s.at("timing/model_flops_per_second"), 50);  // 100 * 2 / 4
  EXPECT_DOUBLE_EQ(s.at("timing/mfu"), 0.05);                   // 50 / 1000
  EXPECT_EQ(s.size(), 25u);  // 9 model + 5 per-feature + 7 timing + 2 rate + 2 FLOP metrics

  // Eval summaries have the model's metrics and timing, no learning rate.
  MetricsAccumulator eval(/*train=*/false);
  eval.Add(a, counts);
  auto e = eval.Compute(2);
  EXPECT_DOUBLE_EQ(e.at("loss"), 12);
  EXPECT_DOUBLE_EQ(e.at("timing/steps_per_second"), 0.5);
  EXPECT_EQ(e.count("learning_rate"), 0u);
  EXPECT_EQ(e.count("timing/mfu"), 0u);
}

TEST(TrainMetricsTest, GinMarkdownFollowsGin) {
  // gin.markdown: code lines indented by 4; "# " comments unwrapped; "# ===="
  // rules emptied; "# None" -> "    # None."; "# X:" -> "#### X:".
  const std::string config =
      "from __gin__ import dynamic_registration\n"
      "\n"
      "# Parameters for train:\n"
      "# ==============================================================================\n"
      "train.total_steps = 10\n"
      "# None.\n"
      "# plain comment\n";
  EXPECT_EQ(GinMarkdown(config),
            "    from __gin__ import dynamic_registration\n"
            "    \n"
            "#### Parameters for train:\n"
            "\n"
            "    train.total_steps = 10\n"
            "    # None.\n"
            "plain comment");
  EXPECT_EQ(GinMarkdown(""), "");
}

}  // namespace
}  // namespace t5xx::trainer
