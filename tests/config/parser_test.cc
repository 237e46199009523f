// Lexer/parser/Value tests: every gin syntax feature, round trips, and the
// text of syntax errors.
#include <gtest/gtest.h>

#include <string>

#include "t5xx/config/lexer.h"
#include "t5xx/config/parser.h"
#include "t5xx/config/value.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::gin {
namespace {

using ::t5xx::testing::ErrorOf;

Value V(const std::string& text) { return ParseGinValue(text, "v.gin"); }


TEST(GinValue, Ints) {
  EXPECT_EQ(V("42").AsInt(), 42);
  EXPECT_EQ(V("1_000_000").AsInt(), 1000000);
  EXPECT_EQ(V("-7").AsInt(), -7);
  EXPECT_EQ(V("+7").AsInt(), 7);
  EXPECT_EQ(V("0x10").AsInt(), 16);
  EXPECT_EQ(V("0").AsInt(), 0);
  EXPECT_EQ(V("42").kind(), Value::Kind::kInt);
}

TEST(GinValue, Floats) {
  EXPECT_DOUBLE_EQ(V("1e-4").AsFloat(), 1e-4);
  EXPECT_DOUBLE_EQ(V(".5").AsFloat(), 0.5);
  EXPECT_DOUBLE_EQ(V("-3.0").AsFloat(), -3.0);
  EXPECT_DOUBLE_EQ(V("2.").AsFloat(), 2.0);
  EXPECT_DOUBLE_EQ(V("1E+3").AsFloat(), 1000.0);
  EXPECT_DOUBLE_EQ(V("1_0.2_5").AsFloat(), 10.25);
  EXPECT_EQ(V("1e-30").kind(), Value::Kind::kFloat);
  // AsFloat accepts ints; AsInt does not accept floats.
  EXPECT_DOUBLE_EQ(V("3").AsFloat(), 3.0);
  EXPECT_THROW(V("3.0").AsInt(), Error);
}

TEST(GinValue, Constants) {
  EXPECT_TRUE(V("True").AsBool());
  EXPECT_FALSE(V("False").AsBool());
  EXPECT_TRUE(V("None").is_none());
}

TEST(GinValue, Strings) {
  EXPECT_EQ(V("'abc'").AsString(), "abc");
  EXPECT_EQ(V("\"abc\"").AsString(), "abc");
  EXPECT_EQ(V(R"('it\'s')").AsString(), "it's");
  EXPECT_EQ(V(R"("say \"hi\"")").AsString(), "say \"hi\"");
  EXPECT_EQ(V(R"('a\nb\tc\\d')").AsString(), "a\nb\tc\\d");
  EXPECT_EQ(V(R"('\x41\u00e9')").AsString(), "A\xc3\xa9");
  EXPECT_EQ(V(R"('keep \q')").AsString(), "keep \\q");  // unknown escape kept
  EXPECT_EQ(V("'a' \"b\"").AsString(), "ab");           // adjacent literals join
  EXPECT_EQ(V("'''x\ny'''").AsString(), "x\ny");
  EXPECT_EQ(V("''").AsString(), "");
  // Raw strings, as Python (and so gin) reads them: t5x's assignment_map
  // regexes, e.g. (r'target/(.*)', r'target/\1').
  EXPECT_EQ(V(R"(r'target/(.*)/\1')").AsString(), R"(target/(.*)/\1)");
  EXPECT_EQ(V(R"(R"a\nb")").AsString(), R"(a\nb)");
  EXPECT_EQ(V(R"(r'it\'s')").AsString(), R"(it\'s)");  // the quote stays escaped
  EXPECT_EQ(V("r'a' 'b'").AsString(), "ab");
}

TEST(GinValue, Containers) {
  Value t = V("('gelu', 'linear')");
  ASSERT_EQ(t.kind(), Value::Kind::kTuple);
  ASSERT_EQ(t.AsList().size(), 2u);
  EXPECT_EQ(t.AsList()[1].AsString(), "linear");

  Value one = V("('relu',)");
  EXPECT_EQ(one.kind(), Value::Kind::kTuple);
  EXPECT_EQ(one.AsList().size(), 1u);
  EXPECT_EQ(V("('relu')").kind(), Value::Kind::kString);  // parentheses only
  EXPECT_EQ(V("()").AsList().size(), 0u);

  Value l = V("[1, 2, 3,]");
  ASSERT_EQ(l.kind(), Value::Kind::kList);
  EXPECT_EQ(l.AsList()[2].AsInt(), 3);
  EXPECT_EQ(V("[]").AsList().size(), 0u);

  Value d = V("{'inputs': 512, 'targets': 114,}");
  ASSERT_EQ(d.AsDict().size(), 2u);
  EXPECT_EQ(d.AsDict()[0].first.AsString(), "inputs");
  EXPECT_EQ(d.AsDict()[1].second.AsInt(), 114);
  EXPECT_EQ(V("{}").AsDict().size(), 0u);

  Value nested = V("{'a': [1, (2, {'b': None})], 3: @f()}");
  const Value& inner = nested.AsDict()[0].second.AsList()[1];
  EXPECT_EQ(inner.AsList()[0].AsInt(), 2);
  EXPECT_TRUE(inner.AsList()[1].AsDict()[0].second.is_none());
  EXPECT_EQ(nested.AsDict()[1].first.AsInt(), 3);
  EXPECT_EQ(nested.AsDict()[1].second.reference_name(), "f");
}

TEST(GinValue, ReferencesAndMacros) {
  Value r = V("@models.EncoderDecoderModel()");
  ASSERT_EQ(r.kind(), Value::Kind::kReference);
  EXPECT_EQ(r.reference_name(), "models.EncoderDecoderModel");
  EXPECT_EQ(r.reference_scope(), "");
  EXPECT_TRUE(r.reference_evaluated());

  Value c = V("@trainer.Trainer");
  EXPECT_FALSE(c.reference_evaluated());

  Value s = V("@train/utils.DatasetConfig()");
  EXPECT_EQ(s.reference_scope(), "train");
  EXPECT_EQ(s.reference_name(), "utils.DatasetConfig");
  EXPECT_EQ(V("@a/b/fn").reference_scope(), "a/b");

  Value m = V("%MODEL_DIR");
  ASSERT_EQ(m.kind(), Value::Kind::kMacro);
  EXPECT_EQ(m.macro_name(), "MODEL_DIR");
  EXPECT_EQ(V("%gin.REQUIRED").kind(), Value::Kind::kRequired);
}

// gin builds a Python dict: a repeated key keeps its first place and takes
// the last value; True, 1 and 1.0 are one key (gin-config 0.5.0 gives
// {'a': 2} for {'a': 1, 'a': 2}).
// The parser keeps the text as written (each value is still checked);
// PythonDictItems gives the dict gin builds.
TEST(GinValue, RepeatedDictKeysAreOneKeyAsInPython) {
  const Value raw = V("{'a': 1, 'b': 2, 'a': 3, 1: 'x', True: 'y', 1.0: 'z', (1, 'c'): 4, (1.0, 'c'): 5}");
  ASSERT_EQ(raw.AsDict().size(), 8u);
  const Value d = Value::Dict(PythonDictItems(raw.AsDict()));
  ASSERT_EQ(d.AsDict().size(), 4u);
  EXPECT_EQ(d.AsDict()[0].first.AsString(), "a");
  EXPECT_EQ(d.AsDict()[0].second.AsInt(), 3);
  EXPECT_EQ(d.AsDict()[1].second.AsInt(), 2);
  EXPECT_EQ(d.AsDict()[2].first.AsInt(), 1);  // the first spelling of the key stays
  EXPECT_EQ(d.AsDict()[2].second.AsString(), "z");
  EXPECT_EQ(d.AsDict()[3].second.AsInt(), 5);
}

TEST(GinValue, ValuesSpanLinesInsideBrackets) {
  Value v = V("[\n  1,  # one\n  2,\n]");
  EXPECT_EQ(v.AsList().size(), 2u);
}

TEST(GinValue, ToGinStringRoundTrips) {
  for (const char* text :
       {"None", "True", "False", "0", "-12", "1.0", "0.0001", "1e-30", "0.1", "-2.5",
        "123456789.123", "'abc'", "\"it's\"", "'a\\nb\\\\c\\'d\"'", "('relu',)", "()", "[]",
        "[1, 'x', None]", "{'inputs': 512, 'targets': (1, 2)}", "@a.b()", "@train/a.b",
        "%X", "%gin.REQUIRED", "'\\x01'"}) {
    Value v = V(text);
    std::string printed = v.ToGinString();
    Value again = ParseGinValue(printed, "printed");
    EXPECT_EQ(v, again) << text << " printed as " << printed;
  }
  EXPECT_EQ(V("1e-4").ToGinString(), "0.0001");
  EXPECT_EQ(V("1.").ToGinString(), "1.0");
  EXPECT_EQ(V("('a',)").ToGinString(), "('a',)");
  EXPECT_EQ(V("{'a': [1, 2]}").ToGinString(), "{'a': [1, 2]}");
  EXPECT_EQ(V("@s/x.y()").ToGinString(), "@s/x.y()");
  EXPECT_EQ(V("\"it's\"").ToGinString(), "\"it's\"");
}

TEST(GinValue, LocationsAndWrongKindErrors) {
  Value v = ParseGinValue("  'abc'", "f.gin");
  EXPECT_EQ(v.location().ToString(), "f.gin:1:3");
  v.set_description("pkg.Fn.count");
  EXPECT_EQ(ErrorOf([&] { v.AsInt(); }),
            "f.gin:1:3: expected an int for pkg.Fn.count, got 'abc' (a string)");
  Value f = ParseGinValue("2.5", "--gin.X flag", /*flag_source=*/true);
  EXPECT_EQ(ErrorOf([&] { f.AsBool(); }),
            "--gin.X flag, column 1: expected a bool, got '2.5' (a float)");
  EXPECT_NE(ErrorOf([&] { f.reference_name(); }).find("expected a reference"), std::string::npos);
}

// gin binds `s/X = 1` as the macro 's/X' (s/X/gin.macro.value), read as
// %s/X; checked against gin-config 0.5.0 (tests/config/gin_oracle_corpus).
TEST(GinParser, ScopedMacros) {
  const std::vector<Statement> st = ParseGinText("s/t/X = 1\nY = %s/t/X\n", "f.gin");
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].kind, Statement::Kind::kMacro);
  EXPECT_EQ(st[0].param, "s/t/X");
  EXPECT_EQ(st[0].scope, "");
  EXPECT_EQ(st[1].value.kind(), Value::Kind::kMacro);
  EXPECT_EQ(st[1].value.macro_name(), "s/t/X");
}

// A block header names a configurable as any selector does, dotted or not
// (gin-config 0.5.0 accepts 'g:' for a configurable registered as g).
TEST(GinParser, UndottedBlockHeader) {
  const std::vector<Statement> st = ParseGinText("s/Feature:\n  a = 1\n", "f.gin");
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].kind, Statement::Kind::kBinding);
  EXPECT_EQ(st[0].scope, "s");
  EXPECT_EQ(st[0].configurable, "Feature");
  EXPECT_EQ(st[0].param, "a");
}

TEST(GinParser, Statements) {
  const std::string text = R"(# comment line
from __gin__ import dynamic_registration
import seqio
import t5.data.mixtures
import __main__ as train_script
from t5x import models
from t5x.examples.t5 import network as net
include 'other.gin'

Z_LOSS = 1e-4  # trailing comment
models.EncoderDecoderModel.z_loss = %Z_LOSS
train/utils.DatasetConfig.split = 'train'
a/b/pkg.Fn.x = [1,
                2]
network.T5Config:
  emb_dim = 512
  mlp_activations = (
      'gelu',
      'linear',
  )

train_eval/utils.DatasetConfig:
  shuffle = False
top.level = None
)";
  std::vector<Statement> st = ParseGinText(text, "f.gin");
  ASSERT_EQ(st.size(), 15u);
  using K = Statement::Kind;
  EXPECT_EQ(st[0].kind, K::kDynamicRegistration);
  EXPECT_EQ(st[1].kind, K::kImport);
  EXPECT_EQ(st[1].module, "seqio");
  EXPECT_EQ(st[1].alias, "seqio");
  EXPECT_EQ(st[2].module, "t5.data.mixtures");
  EXPECT_EQ(st[2].alias, "t5.data.mixtures");
  EXPECT_EQ(st[3].module, "__main__");
  EXPECT_EQ(st[3].alias, "train_script");
  EXPECT_EQ(st[4].module, "t5x.models");
  EXPECT_EQ(st[4].alias, "models");
  EXPECT_EQ(st[5].module, "t5x.examples.t5.network");
  EXPECT_EQ(st[5].alias, "net");
  EXPECT_EQ(st[6].kind, K::kInclude);
  EXPECT_EQ(st[6].path, "other.gin");
  EXPECT_EQ(st[7].kind, K::kMacro);
  EXPECT_EQ(st[7].param, "Z_LOSS");
  EXPECT_DOUBLE_EQ(st[7].value.AsFloat(), 1e-4);
  EXPECT_EQ(st[8].kind, K::kBinding);
  EXPECT_EQ(st[8].configurable, "models.EncoderDecoderModel");
  EXPECT_EQ(st[8].param, "z_loss");
  EXPECT_EQ(st[8].value.macro_name(), "Z_LOSS");
  EXPECT_EQ(st[8].loc.ToString(), "f.gin:11:1");
  EXPECT_EQ(st[9].scope, "train");
  EXPECT_EQ(st[9].configurable, "utils.DatasetConfig");
  EXPECT_EQ(st[10].scope, "a/b");
  EXPECT_EQ(st[10].configurable, "pkg.Fn");
  EXPECT_EQ(st[10].value.AsList()[1].AsInt(), 2);
  // Block form.
  EXPECT_EQ(st[11].configurable, "network.T5Config");
  EXPECT_EQ(st[11].param, "emb_dim");
  EXPECT_EQ(st[11].value.AsInt(), 512);
  EXPECT_EQ(st[11].loc.ToString(), "f.gin:16:3");
  EXPECT_EQ(st[12].param, "mlp_activations");
  EXPECT_EQ(st[12].value.AsList()[1].AsString(), "linear");
  EXPECT_EQ(st[13].scope, "train_eval");
  EXPECT_EQ(st[13].configurable, "utils.DatasetConfig");
  EXPECT_FALSE(st[13].value.AsBool());
  // A top-level line ends the block.
  EXPECT_EQ(st[14].configurable, "top");
  EXPECT_EQ(st[14].param, "level");
}

TEST(GinParser, BackslashContinuationAndFromImportList) {
  std::vector<Statement> st = ParseGinText("from t5x import utils, trainer as tr\na.b = \\\n  3\n", "f.gin");
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].module, "t5x.utils");
  EXPECT_EQ(st[1].module, "t5x.trainer");
  EXPECT_EQ(st[1].alias, "tr");
  EXPECT_EQ(st[2].value.AsInt(), 3);
}

TEST(GinParser, Keys) {
  Statement k = ParseGinKey("train/utils.DatasetConfig.split", "--gin flag", true);
  EXPECT_EQ(k.kind, Statement::Kind::kBinding);
  EXPECT_EQ(k.scope, "train");
  EXPECT_EQ(k.configurable, "utils.DatasetConfig");
  EXPECT_EQ(k.param, "split");
  Statement m = ParseGinKey("MODEL_DIR", "--gin flag", true);
  EXPECT_EQ(m.kind, Statement::Kind::kMacro);
  EXPECT_EQ(m.param, "MODEL_DIR");
}

struct ErrorCase {
  const char* text;
  const char* expected;  // substring of the message
};

TEST(GinParser, SyntaxErrorsNameLocationAndText) {
  const ErrorCase cases[] = {
      {"a.b = 'abc", "f.gin:1:7: unterminated string 'abc"},
      {"a.b = 1\na.c 2", "f.gin:2:5: expected '=' after 'a.c', got '2'"},
      {"a.b = hello", "f.gin:1:7: expected a value (strings need quotes, references start with '@', macros with '%'), got 'hello'"},
      {"a.b = [1, 2", "f.gin:1:7: '[' is never closed"},
      {"a.b = (1, 2]", "f.gin:1:12: ']' does not match '(' opened at f.gin:1:7"},
      {"a.b = 1)", "f.gin:1:8: unmatched ')'"},
      {"a.b = [1 2]", "f.gin:1:10: expected ',' or ']' in list, got '2'"},
      {"a.b = {'x' 1}", "f.gin:1:12: expected ':' after a dict key, got '1'"},
      {"a.b = 12abc", "f.gin:1:7: invalid number '12abc'"},
      {"a.b = 1__0", "f.gin:1:7: invalid number '1__0' (misplaced '_')"},
      {"a.b = 99999999999999999999", "f.gin:1:7: number '99999999999999999999' is out of range"},
      {"a.b = 1 2", "f.gin:1:9: expected end of line after the value of 'a.b', got '2'"},
      {"  a.b = 1", "f.gin:1:3: unexpected indentation before 'a'"},
      {"x.Fn:\ny.z = 1", "f.gin:1:1: block 'x.Fn:' has no indented 'param = value' lines"},
      {"x.Fn:\n  y.z = 1", "f.gin:2:4: inside the block for 'x.Fn' lines must be 'param = value' with a plain parameter name; got '.'"},
      {"a.b = @f(1)", "f.gin:1:10: references take no arguments: expected ')' after '@f(', got '1'"},
      {"a.b = %gin.constant", "f.gin:1:7: unsupported '%gin.constant' (only %gin.REQUIRED is supported)"},
      {"from __gin__ import foo", "f.gin:1:21: unsupported 'from __gin__ import foo'"},
      {"a.b = $", "f.gin:1:7: unexpected character '$'"},
      {"a.b =", "f.gin:1:6: expected a value, got end of line"},
      {"a.b = -'x'", "f.gin:1:8: expected a number after '-', got ''x''"},
  };
  for (const ErrorCase& c : cases) {
    std::string msg = ErrorOf([&] { ParseGinText(c.text, "f.gin"); });
    EXPECT_NE(msg.find(c.expected), std::string::npos)
        << "text: " << c.text << "\nmessage: " << msg << "\nexpected: " << c.expected;
  }
}

TEST(GinParser, NonAsciiIsReportedAsWholeCharacters) {
  // ‘ is E2 80 98 = U+2018, a typographic quote a word processor typed for '.
  EXPECT_EQ(ErrorOf([] { ParseGinText("a.b = \xE2\x80\x98x\xE2\x80\x99", "f.gin"); }),
            "f.gin:1:7: unexpected character '\xE2\x80\x98' (U+2018); gin strings use ' or \"");
  // “ is E2 80 9C = U+201C.
  EXPECT_EQ(ErrorOf([] { ParseGinText("a.b = \xE2\x80\x9Cx\xE2\x80\x9D", "f.gin"); }),
            "f.gin:1:7: unexpected character '\xE2\x80\x9C' (U+201C); gin strings use ' or \"");
  // é is C3 A9 = U+00E9: not a quote, no hint.
  EXPECT_EQ(ErrorOf([] { ParseGinText("a.b = \xC3\xA9", "f.gin"); }),
            "f.gin:1:7: unexpected character '\xC3\xA9' (U+00E9)");
  // FF starts no UTF-8 character; E2 80 followed by 'x' is a cut-off
  // character: each is shown as the byte \xNN, never half a character.
  EXPECT_EQ(ErrorOf([] { ParseGinText("a.b = \xFF", "f.gin"); }),
            "f.gin:1:7: unexpected byte '\\xff', which does not start a UTF-8 character "
            "(is the file UTF-8?)");
  EXPECT_EQ(ErrorOf([] { ParseGinText("a.b = \xE2\x80x", "f.gin"); }),
            "f.gin:1:7: unexpected byte '\\xe2', which does not start a UTF-8 character "
            "(is the file UTF-8?)");
  // A control character is shown as \xNN too.
  EXPECT_EQ(ErrorOf([] { ParseGinText("a.b = \x01", "f.gin"); }),
            "f.gin:1:7: unexpected character '\\x01'");
  // An unterminated string is quoted up to 40 bytes: "'" and 38 a's are 39
  // bytes, and 你 (E4 BD A0, 3 bytes) would end at byte 42, so it is left
  // out whole rather than cut.
  const std::string text = "a.b = '" + std::string(38, 'a') + "\xE4\xBD\xA0" "bc";
  EXPECT_EQ(ErrorOf([&] { ParseGinText(text, "f.gin"); }),
            "f.gin:1:7: unterminated string '" + std::string(38, 'a'));
  // Invalid bytes in an unterminated string are shown as \xNN.
  EXPECT_EQ(ErrorOf([] { ParseGinText("a.b = 'x\xFF", "f.gin"); }),
            "f.gin:1:7: unterminated string 'x\\xff");
}

TEST(GinValue, StringsKeepBytesAndRejectUnencodableEscapes) {
  // Bytes that are not UTF-8 inside a string pass through unchanged.
  EXPECT_EQ(V("'bad \xFF\xFE byte'").AsString(), "bad \xFF\xFE byte");
  // \U0001F917 is 🤗 = F0 9F A4 97.
  EXPECT_EQ(V(R"('\U0001F917')").AsString(), "\xF0\x9F\xA4\x97");
  // Column 8 is the backslash (after "a.b = '").
  EXPECT_EQ(ErrorOf([] { ParseGinText(R"(a.b = '\U00110000')", "f.gin"); }),
            "f.gin:1:8: invalid escape '\\U00110000' in string: above U+10FFFF, the last "
            "code point");
  EXPECT_EQ(ErrorOf([] { ParseGinText(R"(a.b = '\ud800')", "f.gin"); }),
            "f.gin:1:8: invalid escape '\\ud800' in string: a surrogate, which UTF-8 cannot "
            "encode");
}

TEST(GinParser, ValueErrors) {
  EXPECT_EQ(ErrorOf([] { ParseGinValue("/tmp/run", "--gin.MODEL_DIR flag", true); }),
            "--gin.MODEL_DIR flag, column 1: expected a value, got '/'");
  EXPECT_EQ(ErrorOf([] { ParseGinValue("1 2", "v", true); }),
            "v, column 3: unexpected text after the value: '2'");
}

}  // namespace
}  // namespace t5xx::gin

namespace t5xx::gin {
namespace {

// Values nest by recursion in the parser: a value 100 deep (99 lists around
// a number) parses, 101 deep is refused with a location (issue 17: no
// input may overflow the stack).
TEST(GinLimits, ValueNestingIsBoundedAt100) {
  const auto nested = [](int depth) {
    return std::string(depth, '[') + "1" + std::string(depth, ']');
  };
  EXPECT_EQ(V(nested(99)).kind(), Value::Kind::kList);
  const std::string message = ErrorOf([&] { V(nested(100)); });
  EXPECT_NE(message.find("v.gin:1:101: value nested more than 100 levels deep (the limit)"),
            std::string::npos)
      << message;
  // 60,000 levels: refused as well, not a stack overflow.
  EXPECT_NE(ErrorOf([&] { V(nested(60000)); }).find("nested more than 100"), std::string::npos);
}

}  // namespace
}  // namespace t5xx::gin
