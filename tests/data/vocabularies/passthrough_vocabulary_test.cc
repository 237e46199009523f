// PassThroughVocabulary against seqio's PassThroughVocabulary semantics and
// the 'passthrough_vocabulary' case of T5XX_TESTVECTORS.
#include "t5xx/data/vocabularies/passthrough_vocabulary.h"

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace t5xx::seqio {
namespace {

using Ids = std::vector<int32_t>;
using json = nlohmann::json;

const json& Vectors() {
  static const json j = [] {
    const std::string path = T5XX_TESTVECTORS;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return json::parse(in);
  }();
  return j;
}

TEST(PassThroughVocabularyTest, TestVectors) {
  const json& cases = Vectors().at("passthrough_vocabulary");
  ASSERT_FALSE(cases.empty());
  for (const json& c : cases) {
    const bool has_eos = c.contains("eos_id") && !c["eos_id"].is_null();
    const int32_t eos = has_eos ? c["eos_id"].get<int32_t>() : -1;
    PassThroughVocabulary v(c.at("size").get<int32_t>(), eos);
    const Ids ids = c.at("ids").get<Ids>();
    EXPECT_EQ(v.DecodeIds(ids), c.at("decode").get<Ids>());
    EXPECT_EQ(v.DecodeIdsPadded(ids), c.at("decode_padded").get<Ids>());
  }
}

TEST(PassThroughVocabularyTest, SeqioCase) {
  PassThroughVocabulary v(128, 1);
  const Ids ids = {2, 3, 4, 1, 5, 6, 7, 8, 9};
  EXPECT_EQ(v.DecodeIds(ids), (Ids{2, 3, 4, 1}));
  EXPECT_EQ(v.DecodeIdsPadded(ids), (Ids{2, 3, 4, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(v.Decode(ids), "2 3 4 1");
}

TEST(PassThroughVocabularyTest, Sizes) {
  PassThroughVocabulary v(128, 1);
  EXPECT_EQ(v.vocab_size(), 128);
  EXPECT_EQ(v.base_vocab_size(), 128);
  EXPECT_EQ(v.extra_ids(), 0);
  EXPECT_EQ(v.pad_id(), 0);
  EXPECT_EQ(v.eos_id(), 1);
  EXPECT_EQ(v.unk_id(), -1);
}

TEST(PassThroughVocabularyTest, NoEosKeepsEverything) {
  PassThroughVocabulary v(10);
  EXPECT_EQ(v.eos_id(), -1);
  const Ids ids = {2, 1, 3, 0, 9};
  EXPECT_EQ(v.DecodeIds(ids), ids);
  EXPECT_EQ(v.DecodeIdsPadded(ids), ids);
  EXPECT_EQ(v.Decode(ids), "2 1 3 0 9");
  EXPECT_EQ(v.Decode({}), "");
}

TEST(PassThroughVocabularyTest, NoUnkMapping) {
  // Ids beyond size are passed through untouched (seqio: unk_id is None).
  PassThroughVocabulary v(5, 1);
  EXPECT_EQ(v.DecodeIds({7, 100, 1, 8}), (Ids{7, 100, 1}));
  EXPECT_EQ(v.DecodeIdsPadded({7, 100, 1, 8}), (Ids{7, 100, 1, 0}));
}

TEST(PassThroughVocabularyTest, EncodeThrows) {
  PassThroughVocabulary v(128, 1);
  EXPECT_ERROR_CONTAINS(v.Encode("hello"), "takes token ids");
}

TEST(PassThroughVocabularyTest, ConstructorErrors) {
  EXPECT_ERROR_CONTAINS(PassThroughVocabulary(0), "size must be >= 1");
  EXPECT_ERROR_CONTAINS(PassThroughVocabulary(-3, 1), "size must be >= 1");
  EXPECT_ERROR_CONTAINS(PassThroughVocabulary(10, 10),
                        "eos_id must be in [0, size=10)");
  EXPECT_ERROR_CONTAINS(PassThroughVocabulary(10, -2), "eos_id must be in");
  EXPECT_EQ(::t5xx::testing::ErrorOf([] { PassThroughVocabulary(1, 0); }),
            "<no t5xx::Error>");
}

}  // namespace
}  // namespace t5xx::seqio
