// Tests for SentencePieceVocabulary. A tiny model is trained in the test from
// generated text, so no model file is checked in.
//
// Golden values follow from the id layout, not from the trained pieces:
// base = number of pieces of the trained model (read back with libsentencepiece),
// vocab_size = base + extra_ids, <extra_id_N> = vocab_size - 1 - N.
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/vocabularies/sentencepiece_module.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

constexpr int32_t kExtraIds = 10;

std::string MakeTempDir() {
  std::string tmpl = ::testing::TempDir() + "/t5xx_spm_XXXXXX";
  EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

// A few hundred lines of generated English-like text.
std::string WriteCorpus(const std::string& dir) {
  const std::vector<std::string> words = {
      "hello", "world", "the", "quick", "brown", "fox", "jumps", "over",
      "lazy", "dog", "model", "token", "text", "data", "train", "small"};
  const std::string path = dir + "/corpus.txt";
  std::ofstream f(path);
  for (int i = 0; i < 400; ++i) {
    for (int k = 0; k < 8; ++k) {
      if (k) f << ' ';
      f << words[(i * 7 + k * 3 + i / 5) % words.size()];
    }
    f << ".\n";
  }
  return path;
}

// Trains a unigram model; `t5_ids` selects the T5 convention or SPM defaults
// (unk=0, bos=1, eos=2, no pad).
std::string TrainModel(const std::string& dir, const std::string& name,
                       bool t5_ids) {
  std::vector<std::string> sentences;
  {
    std::ifstream in(WriteCorpus(dir));
    for (std::string line; std::getline(in, line);) sentences.push_back(line);
  }
  std::vector<std::pair<std::string, std::string>> args = {
      {"model_type", "unigram"},
      {"vocab_size", "100"},
      {"hard_vocab_limit", "false"},
      {"num_threads", "1"},
      {"minloglevel", "2"},
  };
  if (t5_ids) {
    args.insert(args.end(), {{"pad_id", "0"}, {"eos_id", "1"}, {"unk_id", "2"}, {"bos_id", "-1"}});
  }
  const std::string path = dir + "/" + name + ".model";
  std::ofstream(path, std::ios::binary) << spm::Train(args, sentences, 0, true);
  return path;
}

class SentencePieceVocabularyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(MakeTempDir());
    model_ = new std::string(TrainModel(*dir_, "t5", true));
  }
  static void TearDownTestSuite() {
    std::system(("rm -rf '" + *dir_ + "'").c_str());
    delete dir_;
    delete model_;
  }
  static std::string* dir_;
  static std::string* model_;
};
std::string* SentencePieceVocabularyTest::dir_ = nullptr;
std::string* SentencePieceVocabularyTest::model_ = nullptr;

TEST_F(SentencePieceVocabularyTest, SpecialIdsAndSizes) {
  SentencePieceVocabulary v(*model_, kExtraIds);
  spm::Model sp(*model_);
  EXPECT_EQ(v.pad_id(), 0);
  EXPECT_EQ(v.eos_id(), 1);
  EXPECT_EQ(v.unk_id(), 2);
  EXPECT_EQ(v.base_vocab_size(), sp.piece_size());
  EXPECT_EQ(v.extra_ids(), kExtraIds);
  EXPECT_EQ(v.vocab_size(), sp.piece_size() + kExtraIds);
  EXPECT_EQ(v.IdToPiece(1), "</s>");
  EXPECT_EQ(v.IdToPiece(2), "<unk>");
}

TEST_F(SentencePieceVocabularyTest, ExtraIdsAreReversedFromTheTop) {
  SentencePieceVocabulary v(*model_, kExtraIds);
  const int32_t top = v.vocab_size() - 1;
  EXPECT_EQ(v.ExtraId(0), top);                       // <extra_id_0> = size-1
  EXPECT_EQ(v.ExtraId(kExtraIds - 1), v.base_vocab_size());  // last = base
  EXPECT_EQ(v.IdToPiece(top), "<extra_id_0>");
  EXPECT_EQ(v.Decode({top}), "<extra_id_0>");
  EXPECT_EQ(v.Decode({v.base_vocab_size()}), "<extra_id_9>");
  EXPECT_THROW(v.ExtraId(kExtraIds), Error);
}

TEST_F(SentencePieceVocabularyTest, EncodeMapsMarkersToExtraIds) {
  SentencePieceVocabulary v(*model_, kExtraIds);
  const int32_t top = v.vocab_size() - 1;
  const auto x = v.Encode("x");
  const auto ids = v.Encode("<extra_id_0> x");
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], top);
  // The rest is "x" encoded alone (leading space is normalised away).
  EXPECT_EQ(std::vector<int32_t>(ids.begin() + 1, ids.end()), x);

  // Marker in the middle, <extra_id_3> = top - 3.
  const auto hw = v.Encode("hello<extra_id_3>world");
  std::vector<int32_t> expected = v.Encode("hello");
  expected.push_back(top - 3);
  for (int32_t id : v.Encode("world")) expected.push_back(id);
  EXPECT_EQ(hw, expected);

  // <extra_id_10> does not exist with 10 extras: plain text, no extra ids.
  for (int32_t id : v.Encode("<extra_id_10>")) EXPECT_LT(id, v.base_vocab_size());
  // Encode never appends EOS.
  const auto hello = v.Encode("hello world");
  ASSERT_FALSE(hello.empty());
  EXPECT_NE(hello.back(), 1);
}

// The "sentencepiece_vocabulary" case of the seqio test vectors
// (T5XX_TESTVECTORS, from seqio/vocabularies_test.py). Its ids belong to
// seqio's test model, which is not shipped; what carries over to any
// T5-convention model is the layout, checked here on the model trained above:
//  * vocab_size(with extra ids) = vocab_size + extra_ids (26 + 10 = 36 there);
//  * text between sentinel markers encodes as plain text, each marker
//    <extra_id_k> as vocab_size - 1 - k. In the case, [35, 34, 3, 25, 26]:
//    35, 34 and 26 are <extra_id_0>, <extra_id_1> and <extra_id_9> of 36, and
//    [3, 25] is " v " (ids below the base size 26);
//  * plain text round-trips and uses no special or extra id.
TEST_F(SentencePieceVocabularyTest, SeqioTestVectorLayoutHoldsForThisModel) {
  std::ifstream in(T5XX_TESTVECTORS);
  ASSERT_TRUE(in) << T5XX_TESTVECTORS;
  const nlohmann::json cases = nlohmann::json::parse(in).at("sentencepiece_vocabulary");
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) {
    const auto& wx = c.at("with_extra_ids");
    const int32_t extra = wx.at("extra_ids").get<int32_t>();
    const int32_t case_base = c.at("vocab_size").get<int32_t>();
    const int32_t case_size = wx.at("vocab_size").get<int32_t>();
    // The case itself obeys the layout.
    ASSERT_EQ(case_size, case_base + extra);

    SentencePieceVocabulary v(*model_, extra);
    EXPECT_EQ(v.vocab_size(), v.base_vocab_size() + extra);

    // Split the case text at the markers; build the expected ids for this
    // model and, in parallel, check the case's own ids have the same shape.
    const std::string text = wx.at("text").get<std::string>();
    const std::vector<int32_t> case_ids = wx.at("ids").get<std::vector<int32_t>>();
    std::vector<int32_t> expected;
    size_t case_pos = 0;
    auto plain = [&](const std::string& segment) {
      const std::vector<int32_t> ids = v.Encode(segment);
      for (int32_t id : ids) {
        EXPECT_GE(id, 3) << "special id in '" << segment << "'";
        EXPECT_LT(id, v.base_vocab_size()) << "extra id in '" << segment << "'";
      }
      expected.insert(expected.end(), ids.begin(), ids.end());
      // The case's ids for this segment are below its base size too.
      while (case_pos < case_ids.size() && case_ids[case_pos] < case_base) ++case_pos;
    };
    const std::regex marker(R"(<extra_id_(\d+)>)");
    size_t last = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), marker), end; it != end; ++it) {
      plain(text.substr(last, it->position() - last));
      const int32_t k = std::stoi((*it)[1].str());
      expected.push_back(v.vocab_size() - 1 - k);
      ASSERT_LT(case_pos, case_ids.size());
      EXPECT_EQ(case_ids[case_pos], case_size - 1 - k) << "case id for <extra_id_" << k << ">";
      ++case_pos;
      last = it->position() + it->length();
    }
    plain(text.substr(last));
    EXPECT_EQ(case_pos, case_ids.size());
    EXPECT_EQ(v.Encode(text), expected) << text;
    EXPECT_EQ(v.Decode(expected), v.Decode(v.Encode(text)));

    // Plain text: no special/extra ids, decodes back to itself.
    const std::string plain_text = c.at("text").get<std::string>();
    const std::vector<int32_t> ids = v.Encode(plain_text);
    ASSERT_FALSE(ids.empty());
    for (int32_t id : ids) {
      EXPECT_GE(id, 3);
      EXPECT_LT(id, v.base_vocab_size());
    }
    EXPECT_EQ(v.Decode(ids), plain_text);
    for (int32_t id : c.at("ids").get<std::vector<int32_t>>()) EXPECT_LT(id, case_base);
  }
}

TEST_F(SentencePieceVocabularyTest, DecodeRoundTripAndSentinelText) {
  SentencePieceVocabulary v(*model_, kExtraIds);
  EXPECT_EQ(v.Decode(v.Encode("hello world")), "hello world");
  // Pieces and sentinels are joined with one space.
  EXPECT_EQ(v.Decode(v.Encode("the dog <extra_id_1> jumps")),
            "the dog <extra_id_1> jumps");
}

TEST_F(SentencePieceVocabularyTest, DecodeStopsAfterFirstEos) {
  SentencePieceVocabulary v(*model_, kExtraIds);
  std::vector<int32_t> ids = v.Encode("hello");
  ids.push_back(1);  // EOS
  for (int32_t id : v.Encode("world")) ids.push_back(id);
  ids.push_back(v.ExtraId(0));
  EXPECT_EQ(v.Decode(ids), "hello");
  // Padding decodes to nothing.
  std::vector<int32_t> padded = v.Encode("dog");
  padded.push_back(0);
  padded.push_back(0);
  EXPECT_EQ(v.Decode(padded), "dog");
}

TEST_F(SentencePieceVocabularyTest, OutOfRangeIdsDecodeAsUnk) {
  SentencePieceVocabulary v(*model_, kExtraIds);
  const std::string unk = v.Decode({2});
  // SentencePiece renders <unk> as U+2047 "⁇".
  EXPECT_NE(unk.find("\xE2\x81\x87"), std::string::npos) << unk;
  EXPECT_EQ(v.Decode({v.vocab_size()}), unk);
  EXPECT_EQ(v.Decode({v.vocab_size() + 1000}), unk);
  EXPECT_EQ(v.Decode({-5}), unk);
}

TEST_F(SentencePieceVocabularyTest, ConcurrentEncodeIsConsistent) {
  SentencePieceVocabulary v(*model_, kExtraIds);
  const std::string text = "the quick brown fox <extra_id_2> jumps over";
  const auto expected = v.Encode(text);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        if (v.Encode(text) != expected) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST_F(SentencePieceVocabularyTest, MissingFileErrorNamesPath) {
  const std::string path = *dir_ + "/no-such.model";
  try {
    SentencePieceVocabulary v(path, 0);
    FAIL() << "expected t5xx::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(SentencePieceVocabularyTest, DefaultSpmIdsAreRefusedWithRetrainHint) {
  const std::string path = TrainModel(*dir_, "spm_default", false);
  try {
    SentencePieceVocabulary v(path, 0);
    FAIL() << "expected t5xx::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    // SentencePiece defaults: unk=0, bos=1, eos=2, pad=-1 (disabled).
    EXPECT_NE(msg.find("pad_id=-1 eos_id=2 unk_id=0 bos_id=1"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("--pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1"),
              std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace t5xx::seqio
