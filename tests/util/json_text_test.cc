// Tests for util/json_text.h: JSON output of strings that are not UTF-8, and
// JSON lines whose strings carry such bytes. Expected texts are written out
// by hand (U+FFFD is EF BF BD; nlohmann writes non-ASCII as UTF-8).
#include "t5xx/util/json_text.h"

#include <gtest/gtest.h>

#include <string>

#include "t5xx/util/error.h"

namespace t5xx {
namespace {

using json = nlohmann::json;

TEST(JsonTextTest, DumpReplacesInvalidBytesInValuesAndKeys) {
  // The fault this guards: nlohmann's dump() throws type_error 316 here.
  const json j = {{"text", "bad \xFF\xFE byte line"}, {"k\xC0", json::array({"\xE4\xBD"})}};
  EXPECT_THROW((void)j.dump(), json::type_error);
  // "text": FF and FE -> two U+FFFD. Key "k\xC0": C0 -> one. "\xE4\xBD" is a
  // truncated 你 -> one. Keys sorted: "k\uFFFD" < "text".
  EXPECT_EQ(DumpJson(j),
            "{\"k\xEF\xBF\xBD\":[\"\xEF\xBF\xBD\"],"
            "\"text\":\"bad \xEF\xBF\xBD\xEF\xBF\xBD byte line\"}");
}

TEST(JsonTextTest, DumpOfValidJsonIsNlohmannsDump) {
  const json j = {{"step", 3}, {"name", "caf\xC3\xA9"}, {"ids", {1, 2}}};
  EXPECT_EQ(DumpJson(j), j.dump());
  EXPECT_EQ(DumpJson(j, 2), j.dump(2));
}

TEST(JsonTextTest, ParseKeepsInvalidBytesInStrings) {
  json j;
  std::string error;
  // A text line as a JSON line: FF FE inside the string come back as they
  // are, in the value and in a key; valid text around them is untouched.
  ASSERT_TRUE(ParseJsonKeepingBytes("{\"text\": \"bad \xFF\xFE byte \xC3\xA9\", \"\xE4\xBD\": 1}",
                                    &j, &error))
      << error;
  EXPECT_EQ(j.at("text").get<std::string>(), "bad \xFF\xFE byte \xC3\xA9");
  EXPECT_EQ(j.at("\xE4\xBD").get<int>(), 1);
  // Valid input parses as json::parse does, escapes included.
  ASSERT_TRUE(ParseJsonKeepingBytes("{\"a\": \"\\u00e9\"}", &j, &error)) << error;
  EXPECT_EQ(j.at("a").get<std::string>(), "\xC3\xA9");
}

TEST(JsonTextTest, ParseErrorsShowInvalidBytesAsHex) {
  json j;
  std::string error;
  // An invalid byte outside any string is not JSON.
  EXPECT_FALSE(ParseJsonKeepingBytes("{\"a\": 1}\xFF", &j, &error));
  EXPECT_NE(error.find("parse error"), std::string::npos) << error;
  EXPECT_NE(error.find("\\xff"), std::string::npos) << error;
  EXPECT_EQ(error.find("\xF4\x8F"), std::string::npos) << error;  // no placeholder leaks
  // Not JSON at all.
  EXPECT_FALSE(ParseJsonKeepingBytes("{\"a\": ", &j, &error));
  // Invalid bytes together with a code point of the carrier range (U+10FFFF
  // as the escape pair \udbff\udfff) cannot be told apart: refused.
  EXPECT_FALSE(ParseJsonKeepingBytes("{\"a\": \"\xFF \\udbff\\udfff\"}", &j, &error));
  EXPECT_NE(error.find("U+10FF80..U+10FFFF"), std::string::npos) << error;
  // Without invalid bytes that code point is plain text.
  ASSERT_TRUE(ParseJsonKeepingBytes("{\"a\": \"\\udbff\\udfff\"}", &j, &error)) << error;
  EXPECT_EQ(j.at("a").get<std::string>(), "\xF4\x8F\xBF\xBF");
}

}  // namespace
}  // namespace t5xx

namespace t5xx {
namespace {

// Nesting is bounded at parse time (issue 17): 100 levels parse, 101 are
// refused with a message, in both parsers, and 60,000 are refused rather
// than overflowing the stack of whoever walks or dumps the value.
TEST(JsonDepthLimit, BothParsersRefuseMoreThan100Levels) {
  const auto nested = [](int depth, const std::string& inner) {
    return std::string(depth, '[') + inner + std::string(depth, ']');
  };
  for (const std::string& inner : {std::string("1"), std::string("\"\xff\"")}) {
    nlohmann::json j;
    std::string error;
    EXPECT_TRUE(ParseJsonKeepingBytes(nested(100, inner), &j, &error)) << error;
    EXPECT_FALSE(ParseJsonKeepingBytes(nested(101, inner), &j, &error));
    EXPECT_EQ(error, "JSON nested more than 100 arrays/objects deep (the limit)");
    error.clear();
    EXPECT_FALSE(ParseJsonKeepingBytes(nested(60000, inner), &j, &error));
    EXPECT_EQ(error, "JSON nested more than 100 arrays/objects deep (the limit)");
  }
  nlohmann::json j;
  std::string error;
  EXPECT_TRUE(ParseJson(nested(100, "1"), &j, &error)) << error;
  EXPECT_FALSE(ParseJson(nested(101, "1"), &j, &error));
  EXPECT_EQ(error, "JSON nested more than 100 arrays/objects deep (the limit)");
  EXPECT_FALSE(ParseJson("{\"a\": 1", &j, &error));
  EXPECT_NE(error.find("parse error"), std::string::npos) << error;
  EXPECT_FALSE(ParseJson("\"\xff\"", &j, &error));  // strict: not UTF-8
}

}  // namespace
}  // namespace t5xx

namespace t5xx {
namespace {

// A number beyond double's range is nlohmann's out_of_range 406, not a
// parse_error: both parsers report it as not JSON (found by the zarr_array
// fuzz target, fuzz/regressions/zarr_array/).
TEST(JsonDepthLimit, NumberBeyondDoubleIsAnErrorNotAnException) {
  nlohmann::json j;
  std::string error;
  EXPECT_FALSE(ParseJson("{\"a\": 60.0e+1666666666}", &j, &error));
  EXPECT_NE(error.find("number overflow"), std::string::npos) << error;
  error.clear();
  EXPECT_FALSE(ParseJsonKeepingBytes("{\"\xff\": 1e999}", &j, &error));
  EXPECT_NE(error.find("number overflow"), std::string::npos) << error;
}

// JsonInteger reads integers only, in range. The cases are the three JSON
// number kinds nlohmann stores (int64, uint64, double) at their edges:
// 2^63 - 1 fits int64, 2^63 and 2^64 - 1 are number_unsigned beyond it, and
// 6.666e83 (the fuzz input of fuzz/regressions/zarr_array/) is a double that
// get<int64_t>() would convert with undefined behaviour.
TEST(JsonInteger, ReadsIntegersInRangeOnly) {
  using nlohmann::json;
  EXPECT_EQ(JsonInteger(json::parse("5")), 5);
  EXPECT_EQ(JsonInteger(json::parse("-3")), -3);
  EXPECT_EQ(JsonInteger(json::parse("9223372036854775807")), INT64_MAX);
  EXPECT_EQ(JsonInteger(json::parse("-9223372036854775808")), INT64_MIN);
  EXPECT_EQ(JsonInteger(json::parse("9223372036854775808")), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("18446744073709551615")), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("6.666e83")), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("3.0")), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("\"3\"")), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("true")), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("null")), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("-1"), 0), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("0"), 0), 0);
  EXPECT_EQ(JsonInteger(json::parse("2147483647"), INT32_MIN, INT32_MAX), INT32_MAX);
  EXPECT_EQ(JsonInteger(json::parse("2147483648"), INT32_MIN, INT32_MAX), std::nullopt);
  EXPECT_EQ(JsonInteger(json::parse("-2147483649"), INT32_MIN, INT32_MAX), std::nullopt);
}

// DumpJsonKeepingBytes writes bytes that are not UTF-8 as they are, where
// dump() throws; ParseJsonKeepingBytes reads them back, so the pair round-
// trips any byte strings (values and keys). Valid JSON is dump()'s output.
TEST(JsonTextTest, DumpKeepingBytesRoundTripsThroughParseKeepingBytes) {
  using nlohmann::json;
  const json valid = {{"a", "\xc3\xa9"}, {"n", 1}};
  EXPECT_EQ(DumpJsonKeepingBytes(valid), valid.dump());
  json bytes = {{"t", "a\xff" "b"}, {"\xfe", json::array({"ok", "\xc3"})}};
  EXPECT_THROW((void)bytes.dump(), json::type_error);
  const std::string text = DumpJsonKeepingBytes(bytes);
  EXPECT_EQ(text, "{\"t\":\"a\xff" "b\",\"\xfe\":[\"ok\",\"\xc3\"]}");
  json back;
  std::string error;
  ASSERT_TRUE(ParseJsonKeepingBytes(text, &back, &error)) << error;
  EXPECT_EQ(back, bytes);
  // U+10FFFF (F4 8F BF BF) beside an invalid byte cannot be carried.
  EXPECT_THROW(DumpJsonKeepingBytes(json{{"x", "\xf4\x8f\xbf\xbf\xff"}}), Error);
}

}  // namespace
}  // namespace t5xx
