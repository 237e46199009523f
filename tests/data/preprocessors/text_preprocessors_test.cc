// Tests for t5xx/data/preprocessors/text_preprocessors.h (t5 translate/summarize/glue).
#include "t5xx/data/preprocessors/text_preprocessors.h"

#include "test_util.h"

namespace t5xx::seqio {
namespace {

TEST(Translate, WmtStyleExample) {
  Example ex{{"en", std::string("That is good.")}, {"de", std::string("Das ist gut.")}};
  Example out = TranslateExample(ex, "en", "de");
  EXPECT_EQ(out, (Example{{"inputs", std::string("translate English to German: That is good.")},
                          {"targets", std::string("Das ist gut.")}}));
  // Reverse direction. The feature key is the full code; the language name
  // comes from its first two characters ("zh-cn" -> Chinese).
  Example zh{{"en", std::string("Hi")}, {"zh-cn", std::string("Ni hao")}};
  auto got = Collect(*Translate(FromVector({zh}), "zh-cn", "en"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(GetString(got[0], "inputs"), "translate Chinese to English: Ni hao");
  EXPECT_EQ(GetString(got[0], "targets"), "Hi");
}

TEST(Translate, Errors) {
  EXPECT_ERROR_CONTAINS(Translate(FromVector({}), "en", "xx"), "'xx'");
  Example ok{{"en", std::string("a")}, {"fr", std::string("b")}};
  Example bad{{"en", std::string("a")}};
  EXPECT_ERROR_CONTAINS(Collect(*Translate(FromVector({ok, bad}), "en", "fr")),
                        "example 1 has no feature 'fr'");
  Example tokens{{"en", Tokens{1}}, {"fr", std::string("b")}};
  EXPECT_ERROR_CONTAINS(TranslateExample(tokens, "en", "fr"), "must be a string");
}

TEST(Summarize, AddsPrefix) {
  Example ex{{"article", std::string("Long text.")}, {"highlights", std::string("Short.")},
             {"id", std::string("7")}};
  auto out = Collect(*SummarizePreprocessor("article", "highlights")(FromVector({ex}), {}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], (Example{{"inputs", std::string("summarize: Long text.")},
                             {"targets", std::string("Short.")}}));
  EXPECT_ERROR_CONTAINS(SummarizeExample(ex, "document", "highlights", 4),
                        "example 4 has no feature 'document'");
}

TEST(Glue, SortedFeaturesLabelNameAndIdx) {
  // MRPC-like: features sorted (sentence1 < sentence2), label 1 -> "equivalent".
  Example ex{{"sentence2", std::string("B.")}, {"sentence1", std::string("A.")},
             {"label", Tokens{1}}, {"idx", Tokens{42}}};
  Example out = GlueExample(ex, "mrpc", {"not_equivalent", "equivalent"}, std::nullopt);
  EXPECT_EQ(out, (Example{{"inputs", std::string("mrpc sentence1: A. sentence2: B.")},
                          {"targets", std::string("equivalent")},
                          {"idx", Tokens{42}}}));
}

TEST(Glue, UnlabeledStringLabelsAndExplicitFeatures) {
  // label -1 (test split) -> "<unk>"; labels may be strings holding integers.
  Example ex{{"question", std::string("Q?")}, {"sentence", std::string("S.")},
             {"label", std::string("-1")}, {"idx", std::string("3")}};
  auto out = Collect(*Glue(FromVector({ex}), "qnli", {"entailment", "not_entailment"},
                           std::vector<std::string>{"sentence", "question"}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(GetString(out[0], "inputs"), "qnli sentence: S. question: Q?");
  EXPECT_EQ(GetString(out[0], "targets"), "<unk>");
  EXPECT_EQ(GetString(out[0], "idx"), "3");
  ex["label"] = std::string("0");
  EXPECT_EQ(GetString(GlueExample(ex, "qnli", {"entailment", "not_entailment"},
                                  std::nullopt), "targets"), "entailment");
  // id_key "" drops idx.
  EXPECT_EQ(GlueExample(ex, "qnli", {"e", "n"}, std::nullopt, "").count("idx"), 0u);
}

TEST(Glue, Errors) {
  Example ok{{"sentence", std::string("x")}, {"label", Tokens{0}}, {"idx", Tokens{0}}};
  Example no_label{{"sentence", std::string("x")}, {"idx", Tokens{1}}};
  EXPECT_ERROR_CONTAINS(Collect(*Glue(FromVector({ok, no_label}), "cola",
                                      {"unacceptable", "acceptable"})),
                        "example 1 has no feature 'label'");
  Example big = ok;
  big["label"] = Tokens{2};
  EXPECT_ERROR_CONTAINS(GlueExample(big, "cola", {"u", "a"}, std::nullopt, "idx", 5),
                        "example 5 has label 2");
  Example text_label = ok;
  text_label["label"] = std::string("yes");
  EXPECT_ERROR_CONTAINS(GlueExample(text_label, "cola", {"u", "a"}, std::nullopt),
                        "must hold an integer");
  EXPECT_ERROR_CONTAINS(GlueExample(ok, "cola", {"u", "a"},
                                    std::vector<std::string>{"sentence1"}),
                        "no feature 'sentence1'");
  Example no_idx{{"sentence", std::string("x")}, {"label", Tokens{0}}};
  EXPECT_ERROR_CONTAINS(GlueExample(no_idx, "cola", {"u", "a"}, std::nullopt),
                        "no feature 'idx'");
  EXPECT_ERROR_CONTAINS(Glue(FromVector({}), "stsb", {}), "label_names");
}

}  // namespace
}  // namespace t5xx::seqio
