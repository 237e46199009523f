// Tests for the translation demo's data build (freedict_builder.h) and the
// task freedict_en_de_translate (demo_tasks.h), on the hand-written sample
// database tests/demo/testdata/freedict-sample.dict (15 pairs selected with
// any spelling similarity) and
// a small demo corpus whose SentencePiece model saw English text only.
#include "t5xx/demo/freedict_builder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "small_corpus.h"
#include "t5xx/data/evaluation/evaluation.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/demo/demo_tasks.h"
#include "t5xx/util/files/file_utils.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using t5xx::testing::ErrorOf;
using t5xx::testing::TempDir;

const std::string kSample =
    std::string(T5XX_SOURCE_DIR) + "/tests/demo/testdata/freedict-sample.dict";
// SelectFreedictPairs on the sample with min_spelling_similarity 0
// (freedict_pairs_test).
constexpr int64_t kSelected = 15;

std::vector<TranslationPair> ReadJsonLines(const std::string& path) {
  std::vector<TranslationPair> out;
  LineReader reader(path);
  std::string line;
  while (reader.Next(&line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    EXPECT_EQ(j.size(), 2u) << line;
    out.push_back({j.at("en").get<std::string>(), j.at("de").get<std::string>()});
  }
  return out;
}

FreedictOptions Options(const std::string& out) {
  FreedictOptions o;
  o.output_dir = out;
  o.dictionary = kSample;
  o.selection.min_spelling_similarity = 0;
  o.validation_fraction = 0.5;
  o.max_validation_examples = 100;
  return o;
}

ino_t Inode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST(FreedictBuilderTest, WritesTheSelectedPairsSplitByPhraseHash) {
  TempDir tmp;
  const FreedictInfo info = BuildFreedictData(Options(tmp.path + "/out"));
  EXPECT_FALSE(info.reused);
  EXPECT_EQ(info.dictionary_pairs, 27);
  EXPECT_EQ(info.train_examples + info.validation_examples, kSelected);
  const std::vector<TranslationPair> train = ReadJsonLines(info.train_file);
  const std::vector<TranslationPair> validation = ReadJsonLines(info.validation_file);
  // u = splitmix64(fnv1a64(english) ^ splitmix64(0)) >> 11 over 2^53, worked
  // out separately (in Python) for the 15 phrases: data migration 0.00023,
  // piranhas 0.00026, semantic 0.0004, rhodium 0.0005, apple 0.013,
  // shipping note 0.046, tomato 0.194, tummy 0.343, street 0.394, twelve
  // 0.474 are below 0.5, in that order; get annoyed 0.767 ... mountain 0.997
  // are not, and train is in order of splitmix64(h ^ "train").
  EXPECT_EQ(validation, (std::vector<TranslationPair>{{"data migration", "Datenmigration"},
                                                      {"piranhas", "Piranhas"},
                                                      {"semantic", "semantisch"},
                                                      {"rhodium", "Rhodium"},
                                                      {"apple", "Apfel"},
                                                      {"shipping note", "Versandanzeige"},
                                                      {"tomato", "Tomate"},
                                                      {"tummy", "Bäuchlein"},
                                                      {"street", "Straße"},
                                                      {"twelve", "zwölf"}}));
  EXPECT_EQ(train, (std::vector<TranslationPair>{{"mountain", "Berg"},
                                                 {"apples", "Äpfel"},
                                                 {"get annoyed", "ärgern"},
                                                 {"every day", "jedem Tag"},
                                                 {"snow", "Schnee"}}));
  EXPECT_EQ(static_cast<int64_t>(train.size()), info.train_examples);
  EXPECT_EQ(static_cast<int64_t>(validation.size()), info.validation_examples);
  // Together exactly the selected pairs; no phrase in both splits.
  std::set<std::string> all, english;
  for (const auto* split : {&train, &validation}) {
    for (const TranslationPair& p : *split) {
      all.insert(p.english + "=" + p.german);
      EXPECT_TRUE(english.insert(p.english).second) << p.english;
    }
  }
  const std::set<std::string> expected = {
      "apple=Apfel",       "apples=Äpfel",        "street=Straße",
      "tomato=Tomate",     "tummy=Bäuchlein",     "get annoyed=ärgern",
      "every day=jedem Tag", "twelve=zwölf",      "shipping note=Versandanzeige",
      "mountain=Berg",     "snow=Schnee",         "semantic=semantisch",
      "data migration=Datenmigration", "piranhas=Piranhas", "rhodium=Rhodium"};
  EXPECT_EQ(all, expected);

  // The cap keeps the validation phrases of smallest hash (the file's
  // first lines) and sends the rest to train.
  FreedictOptions capped = Options(tmp.path + "/capped");
  capped.max_validation_examples = 2;
  const FreedictInfo c = BuildFreedictData(capped);
  EXPECT_EQ(c.validation_examples, 2);
  EXPECT_EQ(c.train_examples, kSelected - 2);
  const std::vector<TranslationPair> cv = ReadJsonLines(c.validation_file);
  EXPECT_EQ(cv, std::vector<TranslationPair>(validation.begin(), validation.begin() + 2));
  const std::vector<TranslationPair> ct = ReadJsonLines(c.train_file);
  for (size_t i = 2; i < validation.size(); ++i) {
    EXPECT_NE(std::find(ct.begin(), ct.end(), validation[i]), ct.end()) << validation[i].english;
  }

  // No validation at all.
  FreedictOptions none = Options(tmp.path + "/none");
  none.validation_fraction = 0;
  EXPECT_EQ(BuildFreedictData(none).validation_examples, 0);
  EXPECT_EQ(ReadFileToString(none.output_dir + "/validation.jsonl"), "");

  // The marker round-trips.
  const FreedictInfo again = ReadFreedictInfo(tmp.path + "/out");
  EXPECT_EQ(again.train_examples, info.train_examples);
  EXPECT_EQ(again.train_file, info.train_file);
  EXPECT_EQ(again.dictionary_pairs, 27);
}

TEST(FreedictBuilderTest, SameOptionsGiveIdenticalBytes) {
  TempDir tmp;
  const FreedictInfo a = BuildFreedictData(Options(tmp.path + "/a"));
  const FreedictInfo b = BuildFreedictData(Options(tmp.path + "/b"));
  EXPECT_EQ(ReadFileToString(a.train_file), ReadFileToString(b.train_file));
  EXPECT_EQ(ReadFileToString(a.validation_file), ReadFileToString(b.validation_file));
  // Another seed splits differently (the same 11 pairs).
  FreedictOptions other = Options(tmp.path + "/c");
  other.seed = 5;
  const FreedictInfo c = BuildFreedictData(other);
  EXPECT_EQ(c.train_examples + c.validation_examples, kSelected);
  EXPECT_NE(ReadFileToString(c.validation_file), ReadFileToString(a.validation_file));
}

TEST(FreedictBuilderTest, IsIdempotentRebuildsDamageAndReplacesOnlyWithOverwrite) {
  TempDir tmp;
  FreedictOptions o = Options(tmp.path + "/idem");
  const FreedictInfo first = BuildFreedictData(o);
  const ino_t inode = Inode(first.train_file);
  const std::string marker = ReadFileToString(o.output_dir + "/freedict_info.json");
  const std::string train_bytes = ReadFileToString(first.train_file);

  const FreedictInfo second = BuildFreedictData(o);
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(Inode(first.train_file), inode);  // not replaced by a rename
  EXPECT_EQ(ReadFileToString(o.output_dir + "/freedict_info.json"), marker);

  // A line lost: rebuilt, same bytes again.
  std::ofstream(first.train_file, std::ios::trunc)
      << train_bytes.substr(0, train_bytes.find('\n') + 1);
  const FreedictInfo third = BuildFreedictData(o);
  EXPECT_FALSE(third.reused);
  EXPECT_EQ(ReadFileToString(first.train_file), train_bytes);

  // Other options: refused, nothing touched, unless overwrite.
  o.selection.max_words = 1;
  const std::string msg = ErrorOf([&] { BuildFreedictData(o); });
  EXPECT_NE(msg.find(o.output_dir + " already holds a complete freedict translation data set "
                                    "built with other options (max_words: 3 -> 1)"),
            std::string::npos) << msg;
  EXPECT_EQ(ReadFileToString(first.train_file), train_bytes);
  o.overwrite = true;
  const FreedictInfo fourth = BuildFreedictData(o);
  EXPECT_FALSE(fourth.reused);
  // One word a side: apple, apples, street, tomato, tummy, twelve,
  // mountain, snow, semantic, piranhas, rhodium.
  EXPECT_EQ(fourth.train_examples + fourth.validation_examples, 11);
}

TEST(FreedictBuilderTest, RefusesBadInputBeforeWriting) {
  TempDir tmp;
  FreedictOptions o = Options(tmp.path + "/missing");
  o.dictionary = tmp.path + "/freedict-eng-deu.dict.dz";
  const std::string msg = ErrorOf([&] { BuildFreedictData(o); });
  EXPECT_NE(msg.find("dictd database not found: '" + o.dictionary + "'"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("dict-freedict-eng-deu"), std::string::npos) << msg;
  EXPECT_FALSE(FileExists(o.output_dir));

  o = Options(tmp.path + "/empty");
  o.selection.max_characters = 2;  // no pair is that short
  EXPECT_NE(ErrorOf([&] { BuildFreedictData(o); }).find("no pair of '" + kSample + "' (27 pairs)"),
            std::string::npos);
  EXPECT_FALSE(FileExists(o.output_dir));

  o = Options(tmp.path + "/bad");
  o.validation_fraction = 1;
  EXPECT_NE(ErrorOf([&] { BuildFreedictData(o); }).find("validation_fraction must be in [0, 1)"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { ReadFreedictInfo(tmp.path); })
                .find("freedict translation data not built: '" + tmp.path +
                      "/freedict_info.json' is missing"),
            std::string::npos);
}

// A data dir with a small demo corpus (its SentencePiece model trained on
// English fortunes only) and, in the tests that build it, the sample's
// translation data.
class FreedictTaskTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    std::vector<std::string> texts;
    for (int i = 0; i < 80; ++i) {
      texts.push_back("Proverb " + std::to_string(i) +
                      ": the early bird catches the worm, and a stitch in time saves nine; " +
                      (i % 2 ? "look before you leap." : "haste makes waste."));
    }
    demo_testing::BuildSmallCorpus(tmp_->path, tmp_->path + "/data", texts);
  }
  static void TearDownTestSuite() { delete tmp_; }

  static std::string DataDir() { return tmp_->path + "/data"; }

  static TempDir* tmp_;
};
TempDir* FreedictTaskTest::tmp_ = nullptr;

TEST_F(FreedictTaskTest, GermanRoundTripsThroughAnEnglishModelsByteFallback) {
  SentencePieceVocabulary vocab(ReadCorpusInfo(DemoCorpusDir(DataDir())).vocab_model_file,
                                kDemoExtraIds);
  const std::string german = "Äpfel schön groß Straße Übung Öl Bäuchlein";
  const std::vector<int32_t> ids = vocab.Encode(german);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), vocab.unk_id()), 0);
  // "Ä" is not a piece of an English model: its two UTF-8 bytes C3 84 are
  // the byte pieces <0xC3> <0x84>, ids 3 + 0xC3 and 3 + 0x84.
  EXPECT_NE(std::find(ids.begin(), ids.end(), 3 + 0xC3), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), 3 + 0x84), ids.end());
  EXPECT_EQ(vocab.Decode(ids), german);
}

TEST_F(FreedictTaskTest, TaskReadsTranslatePrefixedExamples) {
  FreedictOptions fo = Options(FreedictDataDir(DataDir()));
  const FreedictInfo info = BuildFreedictData(fo);
  TaskRegistry registry;
  ASSERT_EQ(RegisterDemoTasks(DataDir(), registry), std::nullopt);
  const TaskPtr task = registry.Get(kFreedictTaskName);
  EXPECT_EQ(task->splits(), (std::vector<std::string>{"train", "validation"}));
  const VocabularyPtr vocab = task->output_features().at("targets").vocabulary;

  const std::vector<TranslationPair> expected = ReadJsonLines(info.validation_file);
  DatasetPtr ds = task->GetDataset({{"inputs", 64}, {"targets", 32}}, "validation", false);
  std::vector<Example> examples;
  std::vector<std::string> targets;
  while (std::optional<Example> ex = ds->Next()) {
    const TranslationPair& p = expected.at(examples.size());
    EXPECT_EQ(std::get<std::string>(ex->at("inputs_pretokenized")),
              "translate English to German: " + p.english);
    EXPECT_EQ(std::get<std::string>(ex->at("targets_pretokenized")), p.german);
    const Tokens& inputs = std::get<Tokens>(ex->at("inputs"));
    const Tokens& tgt = std::get<Tokens>(ex->at("targets"));
    EXPECT_EQ(inputs.back(), vocab->eos_id());
    EXPECT_EQ(tgt.back(), vocab->eos_id());
    EXPECT_EQ(vocab->Decode(inputs), "translate English to German: " + p.english);
    EXPECT_EQ(vocab->Decode(tgt), p.german);
    EXPECT_EQ(ex->size(), 4u);  // inputs, targets and their _pretokenized
    targets.push_back(p.german);
    examples.push_back(std::move(*ex));
  }
  ASSERT_EQ(static_cast<int64_t>(examples.size()), info.validation_examples);
  ASSERT_GE(examples.size(), 2u);

  // Its metrics, bleu and sequence_accuracy. Exact predictions: sequence
  // accuracy 100, but BLEU 0, as sacrebleu's corpus BLEU with t5's arguments
  // (no effective order) gives when the references hold no 4-gram at all,
  // which these one- and two-word phrases do not.
  metrics::Metrics m = EvaluatePredictions(*task, examples, targets);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_DOUBLE_EQ(m.at("sequence_accuracy"), 100.0);
  EXPECT_DOUBLE_EQ(m.at("bleu"), 0.0);
  // One wrong of n: sequence accuracy 100 (n-1)/n.
  std::vector<std::string> wrong = targets;
  wrong[0] = "falsch";
  m = EvaluatePredictions(*task, examples, wrong);
  const double n = static_cast<double>(examples.size());
  EXPECT_DOUBLE_EQ(m.at("sequence_accuracy"), 100.0 * (n - 1) / n);
  // Targets of 4 tokens and more: BLEU 100 for exact predictions.
  const std::vector<Example> longer = {
      {{"targets_pretokenized", std::string("ein Spatz in der Hand")}},
      {{"targets_pretokenized", std::string("etw. in Brand setzen")}}};  // etw . in Brand setzen
  m = EvaluatePredictions(*task, longer, {"ein Spatz in der Hand", "etw. in Brand setzen"});
  EXPECT_NEAR(m.at("bleu"), 100.0, 1e-9);
  EXPECT_DOUBLE_EQ(m.at("sequence_accuracy"), 100.0);

  // Train holds the rest.
  int64_t train = 0;
  DatasetPtr tr = task->GetDataset({{"inputs", 64}, {"targets", 32}}, "train", true, 3);
  while (tr->Next()) ++train;
  EXPECT_EQ(train, info.train_examples);
}

TEST_F(FreedictTaskTest, UnbuiltTranslationDataIsNamedWhenRead) {
  TempDir other;
  // The same corpus, no translation data.
  const std::string data_dir = other.path + "/data";
  std::filesystem::create_directories(data_dir);
  std::filesystem::copy(DemoCorpusDir(DataDir()), DemoCorpusDir(data_dir));
  TaskRegistry registry;
  ASSERT_EQ(RegisterDemoTasks(data_dir, registry), std::nullopt);
  const TaskPtr task = registry.Get(kFreedictTaskName);
  EXPECT_EQ(task->splits(), (std::vector<std::string>{"train", "validation"}));
  const std::string msg = ErrorOf([&] { task->GetDataset({}, "validation", false)->Next(); });
  EXPECT_NE(msg.find("the data of the demo task 'freedict_en_de_translate' is not built"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("is not built: no " + FreedictDataDir(data_dir) + "/freedict_info.json;"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("`t5xx build_corpus --data_dir=" + data_dir + "`"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("needs the Debian package dict-freedict-eng-deu"), std::string::npos)
      << msg;
  // The pretraining tasks are unaffected.
  EXPECT_TRUE(registry.Get(kDemoTaskName)
                  ->GetDataset({{"inputs", 32}, {"targets", 8}}, "train", false)
                  ->Next()
                  .has_value());
}

TEST(FreedictTaskNoCorpusTest, MissingCorpusNamesAllDemoTasks) {
  TempDir tmp;
  TaskRegistry registry;
  const std::optional<std::string> problem = RegisterDemoTasks(tmp.path, registry);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("'c4_demo_span_corruption', 'c4_demo_span_corruption_cached', "
                          "'c4_demo_full_lm' and "
                          "'freedict_en_de_translate' is missing"),
            std::string::npos) << *problem;
  EXPECT_FALSE(registry.Has(kFreedictTaskName));
  EXPECT_TRUE(IsDemoTaskName(kFreedictTaskName));
}

}  // namespace
}  // namespace t5xx::seqio
