// Tests for t5xx/data/preprocessors/rank_classification.h, on the example of
// t5's rank_classification_formatter docstring (its documented output) and
// t5's argument errors. The interop test run_rank_classification_test.sh
// compares whole tasks with t5's own function.
#include "t5xx/data/preprocessors/rank_classification.h"

#include "test_util.h"

namespace t5xx::seqio {
namespace {

Example Farmland(int64_t label) {
  return {{"premise", std::string("The farmland needed irrigation.")},
          {"question", std::string("effect")},
          {"choice1", std::string("a canal was constructed")},
          {"choice2", std::string("the crops grew tall")},
          {"label", Array::Int64(label)},
          {"w", Array::Float32(0.5f)}};
}

Array Idx(int64_t i, int64_t c) {
  Array a;
  a.dtype = Array::DType::kInt32;
  a.shape = {2};
  a.ints = {i, c};
  return a;
}

RankClassificationFormat Copa() {
  RankClassificationFormat f;
  f.inputs_formats = {"{premise} What is the {question}? X"};
  f.targets_formats = {"I think {choice1}.", "I think {choice2}."};
  return f;
}

TEST(RankClassificationFormatter, EvalGivesEveryChoiceWithItsIndex) {
  auto out = Collect(*RankClassificationFormatterPreprocessor(Copa(), false, true)(
      FromVector({Farmland(0), Farmland(1)}), {}));
  ASSERT_EQ(out.size(), 4u);
  const std::string inputs = "The farmland needed irrigation. What is the effect? X";
  EXPECT_EQ(out[0], (Example{{"idx", Idx(0, 0)},
                             {"inputs", inputs},
                             {"targets", std::string("I think a canal was constructed.")},
                             {"is_correct", Array::Bool(true)}}));
  EXPECT_EQ(out[1], (Example{{"idx", Idx(0, 1)},
                             {"inputs", inputs},
                             {"targets", std::string("I think the crops grew tall.")},
                             {"is_correct", Array::Bool(false)}}));
  EXPECT_EQ(GetArray(out[3], "idx"), Idx(1, 1));
  EXPECT_EQ(GetArray(out[3], "is_correct"), Array::Bool(true));
}

TEST(RankClassificationFormatter, TrainKeepsTheCorrectChoicesAndWeights) {
  RankClassificationFormat f = Copa();
  f.mode = "train";
  f.weight_key = "w";
  auto out = Collect(*RankClassificationFormatterPreprocessor(f, false, true)(
      FromVector({Farmland(1), Farmland(-1)}), {}));
  // The second input's label -1 marks no choice correct (tf.one_hot).
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(GetArray(out[0], "idx"), Idx(0, 1));
  EXPECT_EQ(GetArray(out[0], "weight"), Array::Float32(0.5f));
  // A list of labels: any is correct.
  Example multi = Farmland(0);
  Array labels;
  labels.dtype = Array::DType::kInt64;
  labels.shape = {2};
  labels.ints = {0, 1};
  multi["label"] = labels;
  f.weight_key.reset();
  EXPECT_EQ(Collect(*RankClassificationFormatterPreprocessor(f, false, true)(
                        FromVector({multi}), {}))
                .size(),
            2u);
}

TEST(RankClassificationFormatter, Errors) {
  EXPECT_ERROR_CONTAINS(RankClassificationFormatterPreprocessor(Copa(), false, false),
                        "has to be a list");
  RankClassificationFormat f = Copa();
  f.inputs_formats = {"a", "b", "c"};
  EXPECT_ERROR_CONTAINS(RankClassificationFormatterPreprocessor(f, true, true),
                        "(3) and targets_formats (2)");
  f = Copa();
  f.mode = "fewshot_eval";
  EXPECT_ERROR_CONTAINS(RankClassificationFormatterPreprocessor(f, false, true), "use 'eval'");
  Example no_choice = Farmland(0);
  no_choice.erase("choice2");
  EXPECT_ERROR_CONTAINS(Collect(*RankClassificationFormatterPreprocessor(Copa(), false, true)(
                            FromVector({Farmland(0), no_choice}), {})),
                        "example 1 has no feature 'choice2'");
  Example not_text = Farmland(0);
  not_text["question"] = Array::Int64(3);
  EXPECT_ERROR_CONTAINS(Collect(*RankClassificationFormatterPreprocessor(Copa(), false, true)(
                            FromVector({not_text}), {})),
                        "key 'question' (in the format '{premise} What is the {question}? X') "
                        "must be a tf.string");
}

}  // namespace
}  // namespace t5xx::seqio
