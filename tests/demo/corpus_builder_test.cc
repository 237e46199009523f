// Tests for the corpus builder on small synthetic sources written by the
// test: a fortune file ('%' separated) and a gzipped dictd-style database.
//
// Golden texts are derived by hand from the cleaning rules documented in
// corpus_builder.h (comments show each step).
#include "t5xx/demo/corpus_builder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "t5xx/data/sources/json_lines_source.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::seqio {
namespace {

constexpr int kNumFortunes = 60;
constexpr int kNumDictEntries = 41;  // "apple" + 40 generated

const char kDictHeader[] =
    "00-database-url\n"
    "   ftp://example.org/gcide\n"
    "\n"
    "00-database-info\n"
    "   This file was converted from the original database.\n"
    "\n"
    "The original data is distributed under the GPL.\n"
    "===============\n";

const char kAppleEntry[] =
    "apple \\ap\"ple\\ ([a^]p\"p'l), n. [AS. [ae]ppel.]\n"
    "   1. The fleshy fruit of a {rosaceous} tree.\n"
    "      [1913 Webster]\n"
    "\n"
    "   Syn: pome\n"
    "        [WordNet 1.5]\n"
    "\n";

// Hand-derived from kAppleEntry:
//  paragraph 1 = headword line + "1. The fleshy ..." + "[1913 Webster]"
//  joined by spaces; \ap"ple\ (pronunciation) removed; [a^] -> a;
//  "[AS. [ae]ppel.]": the outer bracket holds '[' so it stays, [ae] -> ae;
//  {rosaceous} -> rosaceous; [1913 Webster] (source tag) removed; double
//  spaces collapsed. Paragraph 2 = "Syn: pome" ([WordNet 1.5] removed).
const char kAppleText[] =
    "apple (ap\"p'l), n. [AS. aeppel.] 1. The fleshy fruit of a rosaceous "
    "tree.\nSyn: pome";

class CorpusBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/t5xx_corpus_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    // Fortune file: kNumFortunes entries; entry 0 uses overstriking.
    fortune_ = dir_ + "/src/fortunes/testing";
    MakeDirs(dir_ + "/src/fortunes");
    std::ofstream f(fortune_);
    f << "B\bBo\bol\bld and _\bu_\bn_\bd_\be_\br_\bl_\bi_\bn_\be_\bd.\n%\n";
    for (int i = 1; i < kNumFortunes; ++i) {
      f << "Fortune " << i << ": a wise person says the quick brown fox "
        << (i % 2 ? "jumps" : "sleeps") << ".\n\t\t-- Anonymous   \n%\n";
    }
    f << "%\n";  // an empty entry yields no document
    f.close();
    // dictd file, gzipped (like dictzip .dz).
    dict_ = dir_ + "/src/dictd/test.dict.dz";
    MakeDirs(dir_ + "/src/dictd");
    std::string body = kDictHeader;
    body += kAppleEntry;
    for (int i = 1; i < kNumDictEntries; ++i) {
      body += "word" + std::to_string(i) + " \\word" + std::to_string(i) +
              "\\ n.\n   Definition number " + std::to_string(i) +
              " of a made-up word.\n   [1913 Webster]\n\n";
    }
    gzFile g = gzopen(dict_.c_str(), "wb");
    ASSERT_NE(g, nullptr);
    gzwrite(g, body.data(), static_cast<unsigned>(body.size()));
    gzclose(g);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  CorpusOptions Options(const std::string& out) const {
    CorpusOptions o;
    o.output_dir = out;
    o.validation_fraction = 0.2;
    o.num_train_shards = 2;
    o.seed = 17;
    o.vocab_size = 400;  // 3 special + 256 byte pieces + ~50 chars + a few
    o.sources = {fortune_, dict_};
    o.spm_num_threads = 1;
    return o;
  }

  // url -> (split, text) for every document of a built corpus.
  static std::map<std::string, std::pair<std::string, std::string>> ReadAll(
      const CorpusInfo& info) {
    std::map<std::string, std::pair<std::string, std::string>> out;
    JsonLinesDataSource src({{"train", info.TrainFilePattern()},
                             {"validation", info.ValidationFilePattern()}},
                            {"text", "url", "timestamp"});
    for (const std::string split : {"train", "validation"}) {
      auto ds = src.GetDataset(split, false, 0, ShardInfo{});
      while (auto ex = ds->Next()) {
        EXPECT_EQ(ex->size(), 3u);
        EXPECT_EQ(std::get<std::string>(ex->at("timestamp")), kCorpusTimestamp);
        const std::string url = std::get<std::string>(ex->at("url"));
        EXPECT_EQ(out.count(url), 0u) << "duplicate url " << url;
        out[url] = {split, std::get<std::string>(ex->at("text"))};
      }
    }
    return out;
  }

  std::string dir_, fortune_, dict_;
};

TEST_F(CorpusBuilderTest, ParsesFortunesWithOverstrikeRemoved) {
  const auto docs = ReadFortuneFile(fortune_);
  ASSERT_EQ(docs.size(), static_cast<size_t>(kNumFortunes));
  // "B\bB" -> "B" (bold), "_\bu" -> "u" (underline).
  EXPECT_EQ(docs[0].text, "Bold and underlined.");
  EXPECT_EQ(docs[0].url, "file://" + fortune_ + "#0");
  // Trailing spaces are trimmed, the tab indentation kept.
  EXPECT_EQ(docs[3].text,
            "Fortune 3: a wise person says the quick brown fox jumps.\n"
            "\t\t-- Anonymous");
  EXPECT_EQ(ReadFortuneFile(fortune_, 5).size(), 5u);
}

TEST_F(CorpusBuilderTest, ParsesDictdEntriesWithoutHeaderOrMarkup) {
  const auto docs = ReadDictdFile(dict_);
  ASSERT_EQ(docs.size(), static_cast<size_t>(kNumDictEntries));
  EXPECT_EQ(docs[0].text, kAppleText);
  EXPECT_EQ(docs[0].url, "file://" + dict_ + "#0");
  // "word7 \word7\ n." -> "word7 n."; the definition line joins it.
  EXPECT_EQ(docs[7].text, "word7 n. Definition number 7 of a made-up word.");
  for (const auto& d : docs) {
    EXPECT_EQ(d.text.find("00-database"), std::string::npos);
    EXPECT_EQ(d.text.find("GPL"), std::string::npos);
    EXPECT_EQ(d.text.find("Webster"), std::string::npos);
  }
}

TEST_F(CorpusBuilderTest, CleansGcideMarkup) {
  // ['e] -> e, [=a] -> a, [oo^] -> oo; [L.] is an abbreviation and stays;
  // {Ef*fect"less*ly}: braces and syllable marks removed.
  EXPECT_EQ(CleanDictdParagraph(
                "caf['e] \\caf\\ [L.] g[=a]te b[oo^]k -- {Ef*fect\"less*ly}, adv."),
            "cafe [L.] gate book -- Effectlessly, adv.");
  // Only markup: nothing left.
  EXPECT_EQ(CleanDictdParagraph("[1913 Webster]"), "");
}

TEST_F(CorpusBuilderTest, BuildsC4FilesSplitByUrlHash) {
  const CorpusOptions o = Options(dir_ + "/out");
  const CorpusInfo info = BuildCorpus(o);
  EXPECT_FALSE(info.reused);
  for (const char* name :
       {"c4-train.json-00000-of-00002.gz", "c4-train.json-00001-of-00002.gz",
        "c4-validation.json-00000-of-00001.gz", "sentencepiece.model",
        "corpus_info.json"}) {
    EXPECT_TRUE(FileExists(o.output_dir + "/" + name)) << name;
  }
  // No temporaries left behind.
  EXPECT_TRUE(Glob(o.output_dir + "/*tmp*").empty());

  EXPECT_EQ(info.train.documents + info.validation.documents,
            kNumFortunes + kNumDictEntries);
  EXPECT_GT(info.validation.documents, 0);
  EXPECT_GT(info.train.documents, info.validation.documents);
  ASSERT_EQ(info.sources.size(), 2u);
  EXPECT_EQ(info.sources[0].kind, "fortune");
  EXPECT_EQ(info.sources[0].documents, kNumFortunes);
  EXPECT_EQ(info.sources[1].kind, "dictd");
  EXPECT_EQ(info.sources[1].documents, kNumDictEntries);

  const auto docs = ReadAll(info);
  ASSERT_EQ(docs.size(), static_cast<size_t>(kNumFortunes + kNumDictEntries));
  int64_t val = 0;
  for (const auto& [url, split_text] : docs) {
    const bool is_val = IsValidationDocument(url, o.seed, o.validation_fraction);
    EXPECT_EQ(split_text.first, is_val ? "validation" : "train") << url;
    val += is_val;
  }
  EXPECT_EQ(val, info.validation.documents);
  EXPECT_EQ(docs.at("file://" + dict_ + "#0").second, kAppleText);

  // The model follows the T5 convention and loads as a vocabulary.
  SentencePieceVocabulary vocab(info.vocab_model_file, 100);
  EXPECT_EQ(vocab.base_vocab_size(), info.base_vocab_size);
  EXPECT_EQ(vocab.Decode(vocab.Encode("the quick brown fox")),
            "the quick brown fox");

  // corpus_info.json round-trips.
  const CorpusInfo again = ReadCorpusInfo(o.output_dir);
  EXPECT_EQ(again.train.documents, info.train.documents);
  EXPECT_EQ(again.validation.characters, info.validation.characters);
}

TEST_F(CorpusBuilderTest, SplitDependsOnUrlNotOrder) {
  CorpusOptions a = Options(dir_ + "/a");
  CorpusOptions b = Options(dir_ + "/b");
  b.sources = {dict_, fortune_};  // other source order
  const auto da = ReadAll(BuildCorpus(a));
  const auto db = ReadAll(BuildCorpus(b));
  ASSERT_EQ(da.size(), db.size());
  for (const auto& [url, v] : da) EXPECT_EQ(db.at(url), v) << url;
}

TEST_F(CorpusBuilderTest, SameOptionsGiveIdenticalBytes) {
  // Determinism: two builds into different directories produce the same
  // files byte for byte (gzip headers carry no time stamp; the model does
  // not record the output path).
  const CorpusInfo a = BuildCorpus(Options(dir_ + "/det1"));
  const CorpusInfo b = BuildCorpus(Options(dir_ + "/det2"));
  for (const char* name :
       {"c4-train.json-00000-of-00002.gz", "c4-train.json-00001-of-00002.gz",
        "c4-validation.json-00000-of-00001.gz", "sentencepiece.model",
        "sentencepiece.vocab"}) {
    std::ifstream fa(a.output_dir + "/" + name, std::ios::binary);
    std::ifstream fb(b.output_dir + "/" + name, std::ios::binary);
    const std::string ba((std::istreambuf_iterator<char>(fa)), {});
    const std::string bb((std::istreambuf_iterator<char>(fb)), {});
    EXPECT_FALSE(ba.empty()) << name;
    EXPECT_TRUE(ba == bb) << name << " differs";
  }
}

TEST_F(CorpusBuilderTest, IsIdempotentAndReplacesOnlyWithOverwrite) {
  CorpusOptions o = Options(dir_ + "/idem");
  const CorpusInfo first = BuildCorpus(o);
  struct stat st1;
  ASSERT_EQ(::stat(first.vocab_model_file.c_str(), &st1), 0);
  const std::string info1 = ReadFileToString(o.output_dir + "/corpus_info.json");

  const CorpusInfo second = BuildCorpus(o);
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(second.train.documents, first.train.documents);
  struct stat st2;
  ASSERT_EQ(::stat(first.vocab_model_file.c_str(), &st2), 0);
  EXPECT_EQ(st1.st_ino, st2.st_ino);  // not replaced by a rename
  EXPECT_EQ(ReadFileToString(o.output_dir + "/corpus_info.json"), info1);

  // Other options: refused (nothing deleted) unless overwrite is set.
  o.max_documents = 5;
  try {
    BuildCorpus(o);
    FAIL() << "expected t5xx::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built with other options (max_documents: 0 -> 5)"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(ReadFileToString(o.output_dir + "/corpus_info.json"), info1);
  o.overwrite = true;
  const CorpusInfo third = BuildCorpus(o);
  EXPECT_FALSE(third.reused);
  // max_documents takes the first 5 in source order: fortunes 0..4.
  EXPECT_EQ(third.train.documents + third.validation.documents, 5);
  EXPECT_EQ(third.sources.size(), 1u);
}

TEST_F(CorpusBuilderTest, DamagedCorpusIsRebuilt) {
  CorpusOptions o = Options(dir_ + "/damaged");
  const CorpusInfo first = BuildCorpus(o);
  // Truncate a shard: the next build notices and rebuilds it.
  const std::string shard = first.train.files.at(0);
  const std::string bytes = ReadFileToString(shard);  // decompressed text
  ASSERT_FALSE(bytes.empty());
  {
    std::ifstream in(shard, std::ios::binary);
    std::string gz((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(shard, std::ios::binary | std::ios::trunc) << gz.substr(0, gz.size() / 2);
  }
  const CorpusInfo second = BuildCorpus(o);
  EXPECT_FALSE(second.reused);
  EXPECT_EQ(ReadFileToString(shard), bytes);
  // Garbage in the model: rebuilt too.
  std::ofstream(first.vocab_model_file, std::ios::trunc) << "not a model";
  EXPECT_FALSE(BuildCorpus(o).reused);
  EXPECT_TRUE(BuildCorpus(o).reused);
}

TEST_F(CorpusBuilderTest, GlobSourcesSkipIndexesAndDuplicateLinks) {
  // Like Debian's fortunes: testing.dat (strfile index), testing.u8 -> testing,
  // plus a second link to the same file and a subdirectory: only "testing"
  // is read.
  const std::string fdir = dir_ + "/src/fortunes";
  std::ofstream(fdir + "/testing.dat") << "binary";
  ASSERT_EQ(::symlink("testing", (fdir + "/testing.u8").c_str()), 0);
  ASSERT_EQ(::symlink("testing", (fdir + "/alias").c_str()), 0);
  MakeDirs(fdir + "/off");
  CorpusOptions o = Options(dir_ + "/globbed");
  o.sources = {fdir + "/*", dict_};
  const CorpusInfo info = BuildCorpus(o);
  ASSERT_EQ(info.sources.size(), 2u);
  EXPECT_EQ(info.sources[0].path, fortune_);
  EXPECT_EQ(info.sources[1].path, dict_);
}

TEST_F(CorpusBuilderTest, MissingSourcesNameThePackage) {
  CorpusOptions o = Options(dir_ + "/missing");
  o.sources = {dir_ + "/games/fortunes/nope"};
  try {
    BuildCorpus(o);
    FAIL() << "expected t5xx::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(dir_ + "/games/fortunes/nope"), std::string::npos) << msg;
    EXPECT_NE(msg.find("package fortunes"), std::string::npos) << msg;
  }
  o.sources = {dir_ + "/dictd/gcide.dict.dz"};
  try {
    BuildCorpus(o);
    FAIL() << "expected t5xx::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dict-gcide"), std::string::npos)
        << e.what();
  }
  o.sources = {dir_ + "/games/fortunes/*"};
  EXPECT_THROW(BuildCorpus(o), Error);
  EXPECT_FALSE(FileExists(o.output_dir));  // nothing written
}

TEST(DefaultDataDirTest, FollowsEnvironment) {
  const char* names[] = {"T5XX_DATA_DIR", "XDG_CACHE_HOME", "HOME"};
  std::map<std::string, std::string> saved;
  for (const char* n : names) {
    if (const char* v = std::getenv(n)) saved[n] = v;
  }
  ::setenv("T5XX_DATA_DIR", "/d", 1);
  ::setenv("XDG_CACHE_HOME", "/x", 1);
  ::setenv("HOME", "/h", 1);
  EXPECT_EQ(DefaultDataDir(), "/d");
  ::unsetenv("T5XX_DATA_DIR");
  EXPECT_EQ(DefaultDataDir(), "/x/t5xx");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultDataDir(), "/h/.cache/t5xx");
  for (const char* n : names) ::unsetenv(n);
  for (const auto& [k, v] : saved) ::setenv(k.c_str(), v.c_str(), 1);
}

}  // namespace
}  // namespace t5xx::seqio
