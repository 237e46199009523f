// t5's catalog preprocessors in t5xx against t5's own: every case of
// t5_preprocessor_goldens.json (written by make_t5_preprocessor_goldens.py,
// which runs t5's functions on TF) is fed to the preprocessor t5xx registers
// under the same name with the same kwargs, and the outputs must be equal.
// Randomized steps (trivia_qa_truncate_inputs' window, the prefix-LM
// packers' split point) are compared through their deterministic part: the
// split/window t5 drew is read off its output and given to t5xx's function.
// Cases where t5 fails must fail in t5xx. Also: missing features named,
// registry names, kwargs and signatures.
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/data/preprocessors/catalog_features.h"
#include "t5xx/data/preprocessors/glue_preprocessors.h"
#include "t5xx/data/preprocessors/prefix_lm_objective.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"
#include "t5xx/data/preprocessors/qa_preprocessors.h"
#include "t5xx/data/preprocessors/task_sentinels.h"
#include "t5xx/data/preprocessors/text_preprocessors.h"
#include "t5xx/data/preprocessors/wsc_preprocessors.h"
#include "t5xx/data/vocabularies/passthrough_vocabulary.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using nlohmann::json;

const json& Goldens() {
  static const json j = [] {
    std::ifstream f(std::string(T5XX_SOURCE_DIR) +
                    "/tests/data/preprocessors/t5_preprocessor_goldens.json");
    EXPECT_TRUE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    return json::parse(ss.str());
  }();
  return j;
}

Array::DType DTypeOf(const std::string& s) {
  if (s == "int32") return Array::DType::kInt32;
  if (s == "int64") return Array::DType::kInt64;
  if (s == "float32") return Array::DType::kFloat32;
  if (s == "bool") return Array::DType::kBool;
  return Array::DType::kString;
}

// The golden's flattened form -> t5xx: an int32 rank-1 array is a token
// list (what tokenize leaves); other arrays stay Arrays.
FeatureValue ValueFromJson(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  const std::string dtype = v.at("dtype");
  const auto shape = v.at("shape").get<std::vector<int64_t>>();
  if (dtype == "int32" && shape.size() == 1) return v.at("values").get<Tokens>();
  Array a;
  a.dtype = DTypeOf(dtype);
  a.shape = shape;
  for (const json& x : v.at("values")) {
    if (a.dtype == Array::DType::kString) a.strings.push_back(x.get<std::string>());
    else if (a.dtype == Array::DType::kFloat32) a.floats.push_back(x.get<float>());
    else a.ints.push_back(x.is_boolean() ? int64_t{x.get<bool>()} : x.get<int64_t>());
  }
  return a;
}

json ValueToJson(const FeatureValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* t = std::get_if<Tokens>(&v))
    return {{"dtype", "int32"}, {"shape", {t->size()}}, {"values", *t}};
  const Array& a = std::get<Array>(v);
  json values = json::array();
  if (a.dtype == Array::DType::kString) values = a.strings;
  else if (a.dtype == Array::DType::kFloat32) values = a.floats;
  else if (a.dtype == Array::DType::kBool)
    for (int64_t x : a.ints) values.push_back(x != 0);
  else values = a.ints;
  return {{"dtype", DTypeName(a.dtype)}, {"shape", a.shape}, {"values", values}};
}

std::vector<Example> Inputs(const json& c) {
  std::vector<Example> out;
  for (const json& e : c.at("inputs")) {
    Example ex;
    for (const auto& kv : e.items()) ex[kv.key()] = ValueFromJson(kv.value());
    out.push_back(std::move(ex));
  }
  return out;
}

json ToJson(const std::vector<Example>& exs) {
  json out = json::array();
  for (const Example& ex : exs) {
    json o = json::object();
    for (const auto& [k, v] : ex) o[k] = ValueToJson(v);
    out.push_back(o);
  }
  return out;
}

json Sorted(const json& outputs) {  // object keys: nlohmann sorts them
  json out = json::array();
  for (const json& o : outputs) out.push_back(json::parse(o.dump()));
  return out;
}

PreprocessContext Context(const json& c) {
  PreprocessContext ctx;
  if (c.contains("sequence_length"))
    for (const auto& kv : c["sequence_length"].items())
      ctx.sequence_length[kv.key()] = kv.value().get<int64_t>();
  auto vocab = std::make_shared<PassThroughVocabulary>(100, 1);
  ctx.output_features["inputs"] = Feature{vocab, true, true};
  ctx.output_features["targets"] = Feature{vocab, true, true};
  ctx.seed = 42;
  return ctx;
}

const PreprocessorRegistry& Registry() {
  static const PreprocessorRegistry* r = [] {
    auto* reg = new PreprocessorRegistry();
    RegisterSeqioPreprocessors(*reg);
    return reg;
  }();
  return *r;
}

std::vector<Example> RunCase(const json& c) {
  const PreprocessContext ctx = Context(c);
  Preprocessor p = Registry().Create(c.at("preprocessor"), c.at("kwargs"));
  return Collect(*p(FromVector(Inputs(c)), ctx));
}

std::string Label(const json& c) {
  return c.at("preprocessor").get<std::string>() + " " + c.at("kwargs").dump() + " (" +
         c.value("note", std::string()) + ")";
}

int64_t CountOnes(const json& v, int32_t value) {
  int64_t n = 0;
  for (const json& x : v.at("values")) n += x.get<int32_t>() == value;
  return n;
}

void CheckTruncate(const json& c, const std::vector<Example>& got) {
  const int64_t L = c["sequence_length"]["inputs"];
  const std::vector<Example> in = Inputs(c);
  const json& want = c.at("outputs");
  ASSERT_EQ(got.size(), want.size()) << Label(c);
  size_t k = 0;
  for (const Example& ex : in) {
    const Tokens& inputs = GetTokens(ex, "inputs");
    const Tokens& targets = GetTokens(ex, "targets");
    std::optional<TruncateRange> r;
    if (static_cast<int64_t>(inputs.size()) > L) {
      r = TriviaQaTruncateRange(inputs, targets, L);
      if (!r) continue;  // dropped by both
    } else if (inputs.empty()) {
      continue;
    }
    ASSERT_LT(k, got.size());
    const Tokens py = std::get<Tokens>(ValueFromJson(want[k]["inputs"]));
    const Tokens& cc = GetTokens(got[k], "inputs");
    EXPECT_EQ(GetTokens(got[k], "targets"), targets);
    EXPECT_EQ(got[k].size(), 2u);
    if (!r) {
      EXPECT_EQ(cc, inputs);
      EXPECT_EQ(py, inputs);
    } else {
      // Both windows are L tokens of the inputs starting in [lo, hi).
      for (const Tokens* w : {&py, &cc}) {
        ASSERT_EQ(static_cast<int64_t>(w->size()), L);
        bool ok = false;
        for (int64_t s = r->lo; s < r->hi; ++s)
          ok |= std::equal(w->begin(), w->end(), inputs.begin() + s);
        EXPECT_TRUE(ok) << Label(c) << " output " << k;
      }
    }
    ++k;
  }
  EXPECT_EQ(k, got.size());
}

TEST(T5CatalogGoldens, EveryCaseMatchesT5) {
  const json& cases = Goldens().at("cases");
  ASSERT_GE(cases.size(), 30u);
  int checked = 0;
  for (const json& c : cases) {
    const std::string name = c.at("preprocessor");
    SCOPED_TRACE(Label(c));
    if (name == "seqio.experimental.add_task_with_sentinels") continue;  // below
    if (c.contains("error")) {
      EXPECT_THROW(RunCase(c), Error) << "t5 fails: " << c["error"];
      ++checked;
      continue;
    }
    const std::vector<Example> got = RunCase(c);
    const json& want = c.at("outputs");
    const int64_t L = c.contains("sequence_length")
                          ? c["sequence_length"].begin()->get<int64_t>()
                          : 0;
    if (name == "t5.data.preprocessors.trivia_qa_truncate_inputs") {
      CheckTruncate(c, got);
    } else if (name == "t5.data.preprocessors.pack_prefix_lm_encoder_decoder") {
      const std::vector<Example> in = Inputs(c);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        const Tokens& t0 = GetTokens(in[2 * k], "targets");
        const Tokens& t1 = GetTokens(in[2 * k + 1], "targets");
        const int64_t py_split = CountOnes(want[k]["encoder_segment_ids"], 1);
        EXPECT_EQ(ToJson({PackPrefixLmEncoderDecoderPair(t0, t1, L, py_split)})[0], want[k]);
        const int64_t cc_split =
            std::count(GetTokens(got[k], "encoder_segment_ids").begin(),
                       GetTokens(got[k], "encoder_segment_ids").end(), 1);
        EXPECT_EQ(got[k], PackPrefixLmEncoderDecoderPair(t0, t1, L, cc_split));
      }
    } else if (name == "t5.data.preprocessors.pack_prefix_lm_decoder_only") {
      const std::vector<Example> in = Inputs(c);
      const bool loss_on_targets = c["kwargs"].value("loss_on_targets_only", true);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        const Tokens& t = GetTokens(in[k], "targets");
        const int64_t py_split = CountOnes(want[k]["decoder_causal_attention"], 1) - 1;
        EXPECT_EQ(ToJson({PackPrefixLmDecoderOnlyExample(t, L, py_split, loss_on_targets)})[0],
                  want[k]);
        const Tokens& causal = GetTokens(got[k], "decoder_causal_attention");
        const int64_t cc_split = std::count(causal.begin(), causal.end(), 1) - 1;
        EXPECT_EQ(got[k], PackPrefixLmDecoderOnlyExample(t, L, cc_split, loss_on_targets));
      }
    } else {
      EXPECT_EQ(Sorted(ToJson(got)), Sorted(want));
    }
    ++checked;
  }
  EXPECT_GE(checked, 30);
}

TEST(T5CatalogGoldens, SentinelVariantMatchesSeqio) {
  int checked = 0;
  for (const json& c : Goldens().at("cases")) {
    if (c.at("preprocessor") != "seqio.experimental.add_task_with_sentinels") continue;
    SCOPED_TRACE(c.dump().substr(0, 200));
    const int64_t n = c["kwargs"]["num_sentinels"];
    std::vector<NamedPreprocessor> steps;
    for (const json& s : c["kwargs"]["steps"]) {
      const std::string full = "seqio.preprocessors." + s.get<std::string>();
      steps.push_back({full, Registry().Create(full), Registry().Signature(full)});
    }
    const std::vector<NamedPreprocessor> got_steps = AddSentinelSteps(steps, n);
    std::vector<std::string> names;
    for (const auto& s : got_steps) names.push_back(s.name.substr(s.name.rfind('.') + 1));
    EXPECT_EQ(json(names), c["new_steps"]);
    const std::string task = c["new_task_name"];
    EXPECT_EQ(SentinelTaskName(task.substr(0, task.size() - std::string("_1_sentinel").size()), n),
              task);
    const PreprocessContext ctx = Context(c);
    DatasetPtr ds = FromVector(Inputs(c));
    for (const auto& s : got_steps) ds = s.preprocessor(std::move(ds), ctx);
    EXPECT_EQ(ToJson(Collect(*ds)), c.at("outputs"));
    ++checked;
  }
  EXPECT_EQ(checked, 4);
  EXPECT_EQ(SentinelTaskName("super_glue_wsc_v102_simple_train"),
            "super_glue_wsc_v102_simple_1_sentinel_train");
  EXPECT_EQ(SentinelTaskName("dpr_v001_simple", 2), "dpr_v001_simple_2_sentinel");
  EXPECT_ERROR_CONTAINS(AddSentinelSteps({}, 1), "no preprocessors");
}

// A missing feature is named with the preprocessor and the example.
TEST(T5CatalogErrors, MissingFeatureNamesPreprocessorFeatureAndExample) {
  struct Bad {
    const char* name;
    json kwargs;
    Example good;
    std::string missing;
    std::string who;
  };
  Array idx = Array::Int32(0);
  const std::vector<Bad> cases = {
      {"t5.data.preprocessors.squad", json::object(),
       {{"id", std::string("a")}, {"context", std::string("c")},
        {"question", std::string("q")}, {"answers/text", Array::Strings({"x"})}},
       "question", "squad"},
      {"t5.data.preprocessors.stsb", json::object(),
       {{"sentence1", std::string("a")}, {"sentence2", std::string("b")},
        {"label", Array::Float32(1.0f)}, {"idx", idx}},
       "label", "stsb"},
      {"t5.data.preprocessors.record", json::object(),
       {{"passage", std::string("p")}, {"query", std::string("q")},
        {"entities", Array::Strings({"e"})}, {"answers", Array::Strings({"e"})},
        {"idx/passage", idx}, {"idx/query", idx}},
       "idx/query", "record"},
      {"t5.data.preprocessors.glue",
       {{"benchmark_name", "multirc"}, {"label_names", {"False", "True"}},
        {"feature_names", {"question", "answer", "paragraph"}}},
       {{"question", std::string("q")}, {"answer", std::string("a")},
        {"paragraph", std::string("p")}, {"label", Array::Int64(1)},
        {"idx/paragraph", idx}, {"idx/question", idx}, {"idx/answer", idx}},
       "idx/answer", "glue"},
      {"t5.data.preprocessors.trivia_qa", json::object(),
       {{"question", std::string("q")}, {"answer/normalized_aliases", Array::Strings({"a"})},
        {"entity_pages/wiki_context", Array::Strings({"a"})}},
       "answer/normalized_aliases", "trivia_qa"},
      {"t5.data.preprocessors.wsc_simple", json::object(),
       {{"text", std::string("A saw him")}, {"span1_text", std::string("A")},
        {"span2_text", std::string("him")}, {"span2_index", Array::Int32(2)}, {"idx", idx}},
       "span1_text", "wsc_simple"},
      {"t5.data.preprocessors.wnli_simple", json::object(),
       {{"sentence1", std::string("A saw it.")}, {"sentence2", std::string("A saw B.")},
        {"idx", idx}},
       "sentence2", "wnli_simple"},
      {"t5.data.preprocessors.definite_pronoun_resolution_simple", json::object(),
       {{"sentence", std::string("A saw it.")}, {"pronoun", std::string("it")},
        {"candidates", Array::Strings({"A", "B"})}, {"label", Array::Int64(0)}},
       "candidates", "definite_pronoun_resolution_simple"},
  };
  for (const Bad& b : cases) {
    SCOPED_TRACE(b.name);
    Example bad = b.good;
    bad.erase(b.missing);
    Preprocessor p = Registry().Create(b.name, b.kwargs);
    EXPECT_NO_THROW(Collect(*p(FromVector({b.good}), {})));
    EXPECT_ERROR_CONTAINS(Collect(*p(FromVector({b.good, b.good, bad}), {})),
                          b.who + ": example 2 has no feature '" + b.missing + "'");
  }
  // Wrong types say what the feature holds.
  Example tokens{{"sentence1", Tokens{1}}, {"sentence2", std::string("b")},
                 {"label", Array::Float32(1.0f)}, {"idx", idx}};
  EXPECT_ERROR_CONTAINS(StsbExample(tokens, 3),
                        "stsb: example 3 feature 'sentence1' must be a string");
  EXPECT_ERROR_CONTAINS(
      Collect(*TriviaQaTruncateInputs(FromVector({{{"inputs", std::string("x")},
                                                   {"targets", Tokens{1}}}}),
                                      {{"inputs", 4}}, 0)),
      "trivia_qa_truncate_inputs: example 0 feature 'inputs' must be int32 tokens");
  EXPECT_ERROR_CONTAINS(TriviaQaTruncateInputs(FromVector({}), {}, 0), "no 'inputs'");
  EXPECT_ERROR_CONTAINS(PackPrefixLmDecoderOnly(FromVector({}), {{"targets", 7}}, 0),
                        "must be even");
  EXPECT_ERROR_CONTAINS(
      PackPrefixLmEncoderDecoder(FromVector({}), {{"inputs", 8}, {"targets", 6}}, 0),
      "the same packed length");
}

TEST(T5CatalogRegistry, NamesKwargsAndSignatures) {
  const PreprocessorRegistry& r = Registry();
  const std::string t5 = "t5.data.preprocessors.";
  for (const char* name : {"stsb", "record", "squad", "squad_span_space_tokenized", "trivia_qa",
                           "wsc_simple", "wnli_simple", "definite_pronoun_resolution_simple",
                           "rekey", "glue"}) {
    ASSERT_TRUE(r.Contains(t5 + name)) << name;
    EXPECT_FALSE(r.Signature(t5 + name).takes_sequence_length) << name;
    EXPECT_FALSE(r.Signature(t5 + name).takes_seed) << name;
  }
  for (const char* name : {"trivia_qa_truncate_inputs", "targets_for_prefix_lm_objective",
                           "pack_prefix_lm_encoder_decoder", "pack_prefix_lm_decoder_only",
                           "unsupervised"}) {
    ASSERT_TRUE(r.Contains(t5 + name)) << name;
    EXPECT_TRUE(r.Signature(t5 + name).takes_sequence_length) << name;
    EXPECT_FALSE(r.Signature(t5 + name).takes_seed) << name;
  }
  EXPECT_ERROR_CONTAINS(r.Create(t5 + "squad", {{"include_contex", true}}),
                        "did you mean 'include_context'");
  EXPECT_ERROR_CONTAINS(r.Create(t5 + "wsc_simple", {{"correct_referent_only", 1}}),
                        "must be a bool");
  EXPECT_NO_THROW(r.Create(t5 + "pack_prefix_lm_decoder_only",
                           {{"loss_on_targets_only", false}, {"pad_id", 0}}));
  // t5's rekey is seqio's.
  Example ex{{"text", std::string("t")}};
  auto out = Collect(*r.Create(t5 + "rekey", {{"key_map", {{"inputs", nullptr},
                                                           {"targets", "text"}}}})(
      FromVector({ex}), {}));
  EXPECT_EQ(out[0], (Example{{"inputs", std::string("")}, {"targets", std::string("t")}}));
}

TEST(T5CatalogUnsupervised, DefaultIsIdentityAndStepsRunInOrder) {
  const PreprocessorRegistry& r = Registry();
  std::vector<Example> docs = {{{"targets", Tokens{5, 6, 7}}}, {{"targets", Tokens{8, 9}}}};
  PreprocessContext ctx;
  ctx.sequence_length = {{"targets", 4}};
  auto vocab = std::make_shared<PassThroughVocabulary>(100, 1);
  ctx.output_features["targets"] = Feature{vocab, true, true};
  EXPECT_EQ(Collect(*r.Create("t5.data.preprocessors.unsupervised")(FromVector(docs), ctx)),
            docs);
  EXPECT_EQ(Collect(*r.Create("t5.data.preprocessors.unsupervised",
                              {{"preprocessors", nullptr}})(FromVector(docs), ctx)),
            docs);
  Preprocessor chain = r.Create(
      "t5.data.preprocessors.unsupervised",
      {{"preprocessors", {"t5.data.preprocessors.reduce_concat_tokens",
                          "t5.data.preprocessors.targets_for_prefix_lm_objective"}}});
  auto got = Collect(*chain(FromVector(docs), ctx));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(GetTokens(got[0], "targets"), (Tokens{5, 6, 7, 8}));
  EXPECT_EQ(GetTokens(got[1], "targets"), (Tokens{9, 1, 0, 0}));
  EXPECT_ERROR_CONTAINS(r.Create("t5.data.preprocessors.unsupervised",
                                 {{"preprocessors", {"t5.data.preprocessors.nope"}}}),
                        "step 't5.data.preprocessors.nope'");
}

// The seeded steps: deterministic for a seed, different across seeds, and
// always within t5's ranges.
TEST(T5CatalogSeeded, SplitPointsAndWindowsAreSeededAndInRange) {
  std::vector<Example> in;
  for (int i = 0; i < 40; ++i) {
    Tokens t(8);
    for (int j = 0; j < 8; ++j) t[j] = 10 + i * 8 + j;
    in.push_back({{"targets", t}});
  }
  auto run = [&](uint64_t seed) {
    return Collect(*PackPrefixLmDecoderOnly(FromVector(in), {{"targets", 8}}, seed));
  };
  const auto a = run(1), b = run(1), c = run(2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<int64_t> splits;
  for (const Example& ex : a) {
    const Tokens& causal = GetTokens(ex, "decoder_causal_attention");
    const int64_t s = std::count(causal.begin(), causal.end(), 1) - 1;
    EXPECT_GE(s, 1);
    EXPECT_LT(s, 8);
    splits.insert(s);
  }
  EXPECT_GE(splits.size(), 5u);
  const auto pairs = Collect(*PackPrefixLmEncoderDecoder(FromVector(in), {{"inputs", 8},
                                                                          {"targets", 8}}, 3));
  EXPECT_EQ(pairs.size(), 20u);
  // trivia_qa_truncate_inputs: every window holds the answer.
  std::vector<Example> qa;
  for (int i = 0; i < 30; ++i)
    qa.push_back({{"inputs", Tokens{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}, {"targets", Tokens{5, 6}}});
  std::set<int32_t> starts;
  for (const Example& ex :
       Collect(*TriviaQaTruncateInputs(FromVector(qa), {{"inputs", 4}}, 9))) {
    const Tokens& w = GetTokens(ex, "inputs");
    ASSERT_EQ(w.size(), 4u);
    const Tokens answer{5, 6};
    EXPECT_NE(std::search(w.begin(), w.end(), answer.begin(), answer.end()), w.end());
    starts.insert(w[0]);
  }
  EXPECT_EQ(starts, (std::set<int32_t>{3, 4, 5}));  // starts 2..4: lo 2, hi 5
}

TEST(T5CatalogPieces, StringOpsAsTensorFlow) {
  using namespace catalog;
  EXPECT_EQ(PadPunctuation("a,b  c\v"), "a , b c\v");
  EXPECT_EQ(NonWordToSpace("é_1"), " _1");
  EXPECT_EQ(SplitOnSpace("a  b"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(SpanAnswer("a b c d", "d"), "");  // t5's range misses the last start
  EXPECT_EQ(SpanAnswer("a b c d", "c"), "start: 2 end: 2");
  EXPECT_EQ(StsbLabelString(1.7f), "1.6");
  EXPECT_EQ(AppendEosAfterTrimAndPreserve(Tokens{5, 6, 7}, 1, 1, 1), (Tokens{5, 6, 7, 1}));
  EXPECT_EQ(AppendEosAfterTrimAndPreserve(Tokens{5, 6, 7, 8, 9}, 1, 4, 1), (Tokens{5, 6, 9, 1}));
}

}  // namespace
}  // namespace t5xx::seqio
