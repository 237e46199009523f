// Tests for ParseTokenJsonLine (data/sources/token_json_lines_source.h): which JSON
// values are int32 token ids. The edges are int32's (hand arithmetic:
// 2^31 - 1 = 2147483647, -2^31 = -2147483648) and the JSON number kinds
// nlohmann stores: 18446744073709551615 (2^64 - 1) is number_unsigned, and
// get<int64_t>() wrapped it to -1, an id in int32 range, so it was read as
// token -1 until issue 17's JsonInteger.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "t5xx/data/sources/token_json_lines_source.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

std::vector<int32_t> Ids(const std::string& line) {
  const std::optional<Example> ex = ParseTokenJsonLine("f.jsonl", 7, line, {"ids"});
  EXPECT_TRUE(ex.has_value()) << line;
  return std::get<Tokens>(ex->at("ids"));
}

std::string ErrorOf(const std::string& line) {
  try {
    ParseTokenJsonLine("f.jsonl", 7, line, {"ids"});
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ParseTokenJsonLine, ReadsInt32IdsAtTheirEdges) {
  EXPECT_EQ(Ids(R"({"ids": [0, 1, 2147483647, -2147483648]})"),
            (std::vector<int32_t>{0, 1, 2147483647, -2147483647 - 1}));
  EXPECT_FALSE(ParseTokenJsonLine("f.jsonl", 7, "  ", {"ids"}).has_value());
}

TEST(ParseTokenJsonLine, RefusesIdsThatAreNotInt32) {
  for (const std::string ids :
       {"2147483648", "-2147483649", "18446744073709551615", "9223372036854775808",
        "1.5", "3.0", "1e+300", "\"3\"", "null"}) {
    EXPECT_EQ(ErrorOf(R"({"ids": [1, )" + ids + "]}"),
              "f.jsonl:7: field 'ids' is [1," + ids +
                  "], neither a string nor an array of int32 token ids")
        << ids;
  }
}

}  // namespace
}  // namespace t5xx::seqio
