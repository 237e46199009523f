// Tests for t5xx/data/preprocessors/preprocessor_registry.h.
#include "t5xx/data/preprocessors/preprocessor_registry.h"

#include <algorithm>
#include <memory>

#include "test_util.h"

namespace t5xx::seqio {
namespace {

using nlohmann::json;

PreprocessorRegistry Filled() {
  PreprocessorRegistry r;
  RegisterSeqioPreprocessors(r);
  return r;
}

TEST(PreprocessorRegistry, NamesListsSeqioAndT5Entries) {
  PreprocessorRegistry r = Filled();
  std::vector<std::string> names = r.Names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* n : {"seqio.preprocessors.rekey", "seqio.preprocessors.tokenize",
                        "seqio.preprocessors.append_eos",
                        "seqio.preprocessors.append_eos_after_trim",
                        "seqio.preprocessors.truncate_inputs_left",
                        "t5.data.preprocessors.span_corruption",
                        "t5.data.preprocessors.prefix_lm", "t5.data.preprocessors.full_lm",
                        "t5.data.preprocessors.iid_denoising",
                        "t5.data.preprocessors.translate", "t5.data.preprocessors.summarize",
                        "t5.data.preprocessors.glue"})
    EXPECT_TRUE(r.Contains(n)) << n;
}

TEST(PreprocessorRegistry, RegisteringTwiceThrows) {
  PreprocessorRegistry r = Filled();
  EXPECT_ERROR_CONTAINS(RegisterSeqioPreprocessors(r), "already registered");
}

TEST(PreprocessorRegistry, CreatesWorkingPreprocessors) {
  PreprocessorRegistry r = Filled();
  // rekey {inputs: null, targets: "text"} -> inputs "" (seqio's None), targets text.
  Preprocessor rekey =
      r.Create("seqio.preprocessors.rekey", {{"key_map", {{"inputs", nullptr}, {"targets", "text"}}}});
  auto out = Collect(*rekey(FromVector({Example{{"text", std::string("hi")}}}), {}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (Example{{"inputs", std::string("")}, {"targets", std::string("hi")}}));
  // seqio's rekey(x, key_map=None): no key_map, None or {} keeps the example.
  for (const json& kw : {json::object(), json{{"key_map", nullptr}},
                         json{{"key_map", json::object()}}}) {
    Preprocessor same = r.Create("seqio.preprocessors.rekey", kw);
    out = Collect(*same(FromVector({Example{{"text", std::string("hi")}}}), {}));
    ASSERT_EQ(out.size(), 1u) << kw;
    EXPECT_EQ(out[0], (Example{{"text", std::string("hi")}})) << kw;
  }

  // truncate_inputs_left keeps the last sequence_length["inputs"] tokens.
  Preprocessor tl = r.Create("seqio.preprocessors.truncate_inputs_left", json::object());
  PreprocessContext tl_ctx;
  tl_ctx.sequence_length = {{"inputs", 2}};
  out = Collect(*tl(FromVector({Example{{"inputs", Tokens{4, 5, 6}}}}), tl_ctx));
  EXPECT_EQ(out[0], (Example{{"inputs", Tokens{5, 6}}}));

  Preprocessor glue = r.Create("t5.data.preprocessors.glue",
                               {{"benchmark_name", "sst2"},
                                {"label_names", {"negative", "positive"}},
                                {"feature_names", nullptr}});
  out = Collect(*glue(FromVector({Example{{"sentence", std::string("fun")},
                                          {"label", Tokens{1}}, {"idx", Tokens{0}}}}), {}));
  EXPECT_EQ(GetString(out[0], "inputs"), "sst2 sentence: fun");
  EXPECT_EQ(GetString(out[0], "targets"), "positive");

  Preprocessor tr = r.Create("t5.data.preprocessors.translate",
                             {{"source_language", "en"}, {"target_language", "ro"}});
  out = Collect(*tr(FromVector({Example{{"en", std::string("a")}, {"ro", std::string("b")}}}), {}));
  EXPECT_EQ(GetString(out[0], "inputs"), "translate English to Romanian: a");

  // split_tokens with an explicit length: [1..5] at 2 -> 3 pieces.
  Preprocessor split =
      r.Create("t5.data.preprocessors.split_tokens", {{"max_tokens_per_segment", 2}});
  EXPECT_EQ(Collect(*split(FromVector({Example{{"targets", Tokens{1, 2, 3, 4, 5}}}}), {})).size(), 3u);

  // Context-driven ones: full_lm with targets length 3 over [3,4,5,6] + EOS.
  PreprocessContext ctx;
  ctx.sequence_length = {{"inputs", 8}, {"targets", 3}};
  ctx.output_features = {{"targets", Feature{std::make_shared<t5xx::testing::FakeVocabulary>(100, 10)}}};
  out = Collect(*r.Create("t5.data.preprocessors.full_lm")(
      FromVector({Example{{"targets", Tokens{3, 4, 5, 6}}}}), ctx));
  ASSERT_EQ(out.size(), 2u);  // [3,4,5], [6,1]
  EXPECT_EQ(GetTokens(out[1], "targets"), (Tokens{6, 1}));
  // null kwargs == {}.
  EXPECT_NO_THROW(r.Create("t5.data.preprocessors.prefix_lm", json(nullptr)));
  EXPECT_NO_THROW(r.Create("t5.data.preprocessors.span_corruption",
                           {{"noise_density", 0.15}, {"mean_noise_span_length", 3}}));
}

// Issue 9: span corruption's num_threads existed in C++ but no gin task
// could set it. The output must not depend on it (ParallelMap's contract).
TEST(PreprocessorRegistry, SpanCorruptionNumThreadsIsBindable) {
  PreprocessorRegistry r = Filled();
  auto fake = std::make_shared<::t5xx::testing::FakeVocabulary>(100, 100);
  OutputFeatures of{{"inputs", {fake, true, true}}, {"targets", {fake, true, true}}};
  std::vector<Example> docs;
  for (int i = 0; i < 40; ++i) {
    Tokens t;
    for (int j = 0; j < 30 + i; ++j) t.push_back(3 + (i * 7 + j) % 90);
    docs.push_back(Example{{"targets", t}});
  }
  auto run = [&](int threads) {
    Preprocessor p = r.Create("t5.data.preprocessors.span_corruption", {{"num_threads", threads}});
    return Collect(*p(FromVector(docs), PreprocessContext{{{"inputs", 64}, {"targets", 16}}, of, 5}));
  };
  const auto one = run(1);
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(run(2), one);
  EXPECT_ERROR_CONTAINS(run(0), "num_threads must be in [1, 256], got 0");
}

TEST(PreprocessorRegistry, UnknownNamesSuggest) {
  PreprocessorRegistry r = Filled();
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.prefx_lm"),
                        "did you mean 't5.data.preprocessors.prefix_lm'");
  // Same short name under the other module.
  EXPECT_ERROR_CONTAINS(r.Create("seqio.preprocessors.span_corruption"),
                        "did you mean 't5.data.preprocessors.span_corruption'");
  EXPECT_ERROR_CONTAINS(r.Create("nothing.like.it"), "unknown preprocessor 'nothing.like.it'");
}

TEST(PreprocessorRegistry, BadArguments) {
  PreprocessorRegistry r = Filled();
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.iid_denoising", {{"noise_densty", 0.1}}),
                        "unknown argument 'noise_densty'; did you mean 'noise_density'");
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.full_lm", {{"x", 1}}),
                        "arguments: none");
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.span_corruption",
                                 {{"noise_density", "0.15"}}),
                        "'noise_density' must be a number");
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.split_tokens",
                                 {{"max_tokens_per_segment", 2.5}}),
                        "must be an integer");
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.translate", {{"source_language", "en"}}),
                        "missing required argument 'target_language'");
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.glue",
                                 {{"benchmark_name", "cola"}, {"label_names", {"a", 1}}}),
                        "'label_names' must be a list of strings");
  EXPECT_ERROR_CONTAINS(r.Create("seqio.preprocessors.rekey", json::array({1})),
                        "must be a JSON object");
  EXPECT_ERROR_CONTAINS(r.Create("seqio.preprocessors.rekey", {{"key_map", {{"a", 3}}}}),
                        "'key_map' must be an object");
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.prefix_lm", {{"noise_density", 0.7}}),
                        "[0, 0.5]");
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.translate",
                                 {{"source_language", "en"}, {"target_language", "qq"}}),
                        "unknown language code 'qq'");
  EXPECT_ERROR_CONTAINS(r.Args("t5.data.preprocessors.nope"), "unknown preprocessor");
}

}  // namespace
}  // namespace t5xx::seqio
