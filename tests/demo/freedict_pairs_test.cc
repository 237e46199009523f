// Tests for the FreeDict eng-deu parser and selection on a hand-written dictd
// database in FreeDict's format (tests/demo/testdata/freedict-sample.dict and
// its .index: five dictfmt header entries, 24 entries, an alphabet entry at
// the end as the real database has), plus a check on the installed Debian
// database when it is there.
#include "t5xx/demo/freedict_pairs.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "t5xx/util/files/file_utils.h"
#include "test_util.h"

namespace t5xx::seqio {
namespace {

using t5xx::testing::ErrorOf;
using t5xx::testing::TempDir;

const std::string kSample =
    std::string(T5XX_SOURCE_DIR) + "/tests/demo/testdata/freedict-sample.dict";

// Every pair of the sample, in database order, derived by hand from the
// rules in freedict_pairs.h (the entry each comes from in the comment).
const std::vector<TranslationPair> kSamplePairs = {
    {"apple", "Apfel"},                 // <masc> [cook.] removed
    {"apples", "Äpfel"},
    {"bench", "Bank"},                  // two translations on one line ...
    {"bench", "Sitzbank"},
    {"bench", "Werkbank"},              // ... and a second entry (sense)
    {"street", "Straße"},               // "Strasse [Schw.]" dropped; the
                                        // second entry's Straße is a duplicate
    {"tomato", "Tomate"},               // "Paradeiser [Ös.]" dropped
    {"open sth.", "etw. öffnen"},       // "<v, trans>": its comma splits nothing
    {"open sth.", "etw. aufmachen"},
    {"tummy", "Bäuchlein"},             // line opens with " [children's speech]"
    {"get annoyed", "ärgern"},          // "(sich)" removed
    {"every day", "jedem Tag"},         // optional "[an]" removed
    {"ellipsis", "Auslassungszeichen …"},
    {"twelve", "zwölf"},
    {"a bird in the hand", "ein Spatz in der Hand"},
    {"department", "Abteilung"},        // glued "Abt." and " /ˈapt/ " dropped
    {"department", "Sektion"},
    {"shipping note", "Versandanzeige"},
    {"weather forecast", "Wettervorhersage"},
    {"weather forecast", "Wetterbericht"},
    {"earnings compensation", "Verdienstausfallentschädigungsanspruch"},
    {"mountain", "Berg"},
    {"snow", "Schnee"},
    {"semantic", "semantisch"},
    {"data migration", "Datenmigration"},
    {"piranhas", "Piranhas"},
    {"rhodium", "Rhodium"},             // abbreviation "Rh" with its " /../"
};

void WriteGzip(const std::string& path, const std::string& bytes) {
  gzFile g = gzopen(path.c_str(), "wb");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(gzwrite(g, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(g);
}

TEST(FreedictPairsTest, IndexPathFollowsDictdNaming) {
  EXPECT_EQ(DictdIndexPath("/a/freedict-eng-deu.dict.dz"), "/a/freedict-eng-deu.index");
  EXPECT_EQ(DictdIndexPath("x.dict.gz"), "x.index");
  EXPECT_EQ(DictdIndexPath("x.dict"), "x.index");
  EXPECT_NE(ErrorOf([] { DictdIndexPath("/a/words.txt"); }).find("not a dictd database name"),
            std::string::npos);
}

TEST(FreedictPairsTest, ReadsBase64IndexNumbers) {
  const std::vector<DictdIndexEntry> index = ReadDictdIndex(DictdIndexPath(kSample));
  ASSERT_EQ(index.size(), 32u);
  // "apple\tDY\tBJ": D=3, Y=24 -> 3*64+24 = 216; B=1, J=9 -> 73.
  EXPECT_EQ(index[7].headword, "apple");
  EXPECT_EQ(index[7].offset, 216u);
  EXPECT_EQ(index[7].length, 73u);
  const std::string db = ReadFileToString(kSample);
  EXPECT_EQ(db.substr(216, 73),
            "apple /ˈapəl/\nApfel <masc> [cook.]\n   Synonym: {pome}\n\n see: {apples}\n\n");
  // "pome" names the same entry.
  EXPECT_EQ(index[21].headword, "pome");
  EXPECT_EQ(index[21].offset, 216u);
}

TEST(FreedictPairsTest, MalformedIndexLinesAreNamed) {
  TempDir tmp;
  const std::string path = tmp.path + "/bad.index";
  std::ofstream(path) << "apple\tDY\tBJ\nbench\tF7\n";
  std::string msg = ErrorOf([&] { ReadDictdIndex(path); });
  EXPECT_NE(msg.find(path + ":2: not a dictd index line"), std::string::npos) << msg;
  std::ofstream(path, std::ios::trunc) << "apple\tD!\tBJ\n";
  msg = ErrorOf([&] { ReadDictdIndex(path); });
  EXPECT_NE(msg.find(path + ":1:"), std::string::npos) << msg;
  // More than 10 base64 digits would overflow 64 bits.
  std::ofstream(path, std::ios::trunc) << "apple\tAAAAAAAAAAA\tBJ\n";
  EXPECT_NE(ErrorOf([&] { ReadDictdIndex(path); }).find(":1:"), std::string::npos);
}

TEST(FreedictPairsTest, EnglishIsTheHeadwordBeforeItsPronunciation) {
  EXPECT_EQ(FreedictEnglish("set sth. on fire /sˈɛt ˌɛstˌiːˈeɪtʃ ˌɒn fˈaɪə/"),
            "set sth. on fire");
  EXPECT_EQ(FreedictEnglish("scavenge /skˈavɪndʒ/ <v>"), "scavenge");
  EXPECT_EQ(FreedictEnglish("departure /dɪpˈɑːtʃə/ (dep. /dˈɛp/)"), "departure");
  EXPECT_EQ(FreedictEnglish("and/or /ˈand ˈɔː/"), "and/or");  // no space before its '/'
  EXPECT_EQ(FreedictEnglish("no  pronunciation "), "no pronunciation");
}

TEST(FreedictPairsTest, GermanTranslationsLoseAnnotations) {
  using V = std::vector<std::string>;
  EXPECT_EQ(FreedictGermanTranslations(
                "etw. in Brand stecken, etw. anzünden [ugs.] , etw. anstecken <v, trans> [ugs.]"),
            (V{"etw. in Brand stecken", "etw. anzünden", "etw. anstecken"}));
  // Regional and dated variants are dropped, whatever the label's position.
  EXPECT_EQ(FreedictGermanTranslations("Tomate <fem>, Paradeiser <masc> [Ös.]"), V{"Tomate"});
  EXPECT_EQ(FreedictGermanTranslations("Kutsche <fem> [veraltet] [transp.], Wagen <masc>"),
            V{"Wagen"});
  // Glued abbreviations and pronunciation-only pieces.
  EXPECT_EQ(FreedictGermanTranslations("Abfahrt <fem>Abf.,  /ˈabf/ , Abflug <masc> [transp.]"),
            (V{"Abfahrt", "Abflug"}));
  EXPECT_EQ(FreedictGermanTranslations("Rhodium <neut> [chem.] Rh,  /ˌɑːɹˈeɪtʃ/"),
            V{"Rhodium"});
  EXPECT_EQ(FreedictGermanTranslations("Bundesrepublik BRD,  /bˈeː/ , BRD,  /bˈeː/ , Staat"),
            (V{"Bundesrepublik", "Staat"}));
  // Optional words in () and [] and a leading label.
  EXPECT_EQ(FreedictGermanTranslations(" [Kindersprache] (sich) [ganz] klein machen <v>"),
            V{"klein machen"});
  // A comma inside parentheses splits nothing; nothing left is no translation.
  EXPECT_EQ(FreedictGermanTranslations("Wort (a, b), <pl>, [Br.]"), V{"Wort"});
  EXPECT_EQ(FreedictGermanTranslations(""), V{});
}

TEST(FreedictPairsTest, ReadsTheSampleDatabase) {
  EXPECT_EQ(ReadFreedictPairs(kSample), kSamplePairs);
}

TEST(FreedictPairsTest, ReadsADictzipCompressedDatabase) {
  // dictzip output is gzip with an extra header field; zlib reads both.
  TempDir tmp;
  const std::string dz = tmp.path + "/sample.dict.dz";
  WriteGzip(dz, ReadFileToString(kSample));
  std::filesystem::copy_file(DictdIndexPath(kSample), tmp.path + "/sample.index");
  EXPECT_EQ(ReadFreedictPairs(dz), kSamplePairs);
}

TEST(FreedictPairsTest, MissingFilesNameThePackage) {
  TempDir tmp;
  const std::string dict = tmp.path + "/freedict-eng-deu.dict.dz";
  std::string msg = ErrorOf([&] { ReadFreedictPairs(dict); });
  EXPECT_NE(msg.find("'" + dict + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("apt-get install dict-freedict-eng-deu"), std::string::npos) << msg;
  WriteGzip(dict, ReadFileToString(kSample));
  msg = ErrorOf([&] { ReadFreedictPairs(dict); });
  EXPECT_NE(msg.find("dictd index not found: '" + tmp.path + "/freedict-eng-deu.index'"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("dict-freedict-eng-deu"), std::string::npos) << msg;
}

TEST(FreedictPairsTest, IndexBeyondTheDatabaseIsRefused) {
  TempDir tmp;
  const std::string dict = tmp.path + "/short.dict";
  std::ofstream(dict) << "apple /a/\nApfel\n";                              // 16 bytes
  std::ofstream(tmp.path + "/short.index") << "apple\tA\tQ\nbench\tQ\tC\n";  // [16, 18)
  const std::string msg = ErrorOf([&] { ReadFreedictPairs(dict); });
  EXPECT_NE(msg.find(tmp.path + "/short.index:2: entry 'bench' spans bytes [16, 18)"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("has 16 bytes"), std::string::npos) << msg;
}

TEST(FreedictPairsTest, PlainPhrases) {
  EXPECT_TRUE(IsPlainPhrase("etw. öffnen"));
  EXPECT_TRUE(IsPlainPhrase("Straße"));
  EXPECT_TRUE(IsPlainPhrase("A4-Papier"));
  EXPECT_TRUE(IsPlainPhrase("children's"));
  EXPECT_TRUE(IsPlainPhrase("café"));
  EXPECT_FALSE(IsPlainPhrase("Auslassungszeichen …"));
  EXPECT_FALSE(IsPlainPhrase("and/or"));
  EXPECT_FALSE(IsPlainPhrase("3 × 4"));
  EXPECT_FALSE(IsPlainPhrase("Stop!"));
  EXPECT_FALSE(IsPlainPhrase("1984"));  // no letter
  EXPECT_FALSE(IsPlainPhrase(""));
  EXPECT_FALSE(IsPlainPhrase("\xC3"));  // a cut UTF-8 sequence
}

TEST(FreedictPairsTest, SpellingSimilarity) {
  EXPECT_DOUBLE_EQ(SpellingSimilarity("piranhas", "Piranhas"), 1.0);
  EXPECT_DOUBLE_EQ(SpellingSimilarity("ÄPFEL", "äpfel"), 1.0);  // Latin-1 lowercased
  // semantic -> semantisch: insert s and h, 2 edits of 10 code points.
  EXPECT_DOUBLE_EQ(SpellingSimilarity("semantic", "semantisch"), 0.8);
  // street -> straße: e->a, e->ß, t->e; code points, not bytes.
  EXPECT_DOUBLE_EQ(SpellingSimilarity("street", "Straße"), 0.5);
  EXPECT_DOUBLE_EQ(SpellingSimilarity("mountain", "Berg"), 0.0);
  EXPECT_DOUBLE_EQ(SpellingSimilarity("", ""), 1.0);
  EXPECT_DOUBLE_EQ(SpellingSimilarity("a", ""), 0.0);
}

TEST(FreedictPairsTest, SelectsUnambiguousShortPlainPairs) {
  FreedictSelection any_spelling;
  any_spelling.min_spelling_similarity = 0;
  const std::vector<TranslationPair> kept = SelectFreedictPairs(kSamplePairs, any_spelling);
  // Out: bench, open sth., department, weather forecast (several
  // translations); ellipsis ('…'); a bird in the hand (5 words); earnings
  // compensation (38 code points in German).
  const std::vector<TranslationPair> expected = {
      {"apple", "Apfel"},   {"apples", "Äpfel"},        {"street", "Straße"},
      {"tomato", "Tomate"}, {"tummy", "Bäuchlein"},      {"get annoyed", "ärgern"},
      {"every day", "jedem Tag"}, {"twelve", "zwölf"},  {"shipping note", "Versandanzeige"},
      {"mountain", "Berg"}, {"snow", "Schnee"},        {"semantic", "semantisch"},
      {"data migration", "Datenmigration"},           {"piranhas", "Piranhas"},
      {"rhodium", "Rhodium"}};
  EXPECT_EQ(kept, expected);
  // The default keeps the pairs spelled alike (similarity >= 0.5): street
  // 0.5, tomato 0.83, semantic 0.8, data migration 0.86, piranhas and
  // rhodium 1; apple -> Apfel is 0.4.
  EXPECT_EQ(SelectFreedictPairs(kSamplePairs, {}),
            (std::vector<TranslationPair>{{"street", "Straße"},
                                          {"tomato", "Tomate"},
                                          {"semantic", "semantisch"},
                                          {"data migration", "Datenmigration"},
                                          {"piranhas", "Piranhas"},
                                          {"rhodium", "Rhodium"}}));
  FreedictSelection one_word = any_spelling;
  one_word.max_words = 1;
  one_word.max_characters = 6;  // code points: "Straße" is 6 (7 bytes)
  EXPECT_EQ(SelectFreedictPairs(kSamplePairs, one_word),
            (std::vector<TranslationPair>{{"apple", "Apfel"},
                                          {"apples", "Äpfel"},
                                          {"street", "Straße"},
                                          {"tomato", "Tomate"},
                                          {"twelve", "zwölf"},
                                          {"snow", "Schnee"}}));
  one_word.max_words = 0;
  EXPECT_NE(ErrorOf([&] { SelectFreedictPairs(kSamplePairs, one_word); })
                .find("max_words and max_characters must be >= 1"),
            std::string::npos);
  one_word.max_words = 1;
  one_word.min_spelling_similarity = 1.5;
  EXPECT_NE(ErrorOf([&] { SelectFreedictPairs(kSamplePairs, one_word); })
                .find("min_spelling_similarity must be in [0, 1], got 1.5"),
            std::string::npos);
}

// The installed Debian database (dict-freedict-eng-deu 2022.04.15 holds
// 460,315 headword entries); skipped where the package is not installed.
TEST(FreedictPairsTest, InstalledDatabase) {
  if (!FileExists(kDefaultFreedictDictionary)) {
    GTEST_SKIP() << kDefaultFreedictDictionary << " not installed (" << kFreedictPackage << ")";
  }
  const std::vector<TranslationPair> all = ReadFreedictPairs(kDefaultFreedictDictionary);
  EXPECT_GT(all.size(), 600000u);
  FreedictSelection any_spelling;
  any_spelling.min_spelling_similarity = 0;
  const std::vector<TranslationPair> unambiguous = SelectFreedictPairs(all, any_spelling);
  EXPECT_GT(unambiguous.size(), 150000u);
  EXPECT_LT(unambiguous.size(), 250000u);
  auto in = [](const std::vector<TranslationPair>& v, const TranslationPair& p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  EXPECT_TRUE(in(unambiguous, {"dune formation", "Dünenbildung"}));
  EXPECT_TRUE(in(unambiguous, {"bed of nails", "Nagelbrett"}));
  // Two entries, two translations (Bodenanalyse, Bodenuntersuchung): out.
  EXPECT_FALSE(in(unambiguous, {"soil analysis", "Bodenanalyse"}));
  // The default: spelled alike, about a fifth of them.
  const std::vector<TranslationPair> kept = SelectFreedictPairs(all, {});
  EXPECT_GT(kept.size(), unambiguous.size() / 6);
  EXPECT_LT(kept.size(), unambiguous.size() / 4);
  EXPECT_TRUE(in(kept, {"data migration", "Datenmigration"}));
  EXPECT_TRUE(in(kept, {"rhodium", "Rhodium"}));  // not "Rhodium Rh"
  EXPECT_FALSE(in(kept, {"bed of nails", "Nagelbrett"}));
  for (const TranslationPair& p : kept) {
    ASSERT_TRUE(IsPlainPhrase(p.english) && IsPlainPhrase(p.german))
        << p.english << " -> " << p.german;
  }
}

}  // namespace
}  // namespace t5xx::seqio
