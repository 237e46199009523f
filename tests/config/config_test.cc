// Config + Registry tests: name resolution, scopes, macros, includes,
// validation errors, operative config and unused bindings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::gin {
namespace {

using ::t5xx::testing::ErrorOf;

namespace fs = std::filesystem;



ParamSpec P(const std::string& name, ParamType type, Value def = Value(), bool required = false) {
  ParamSpec p;
  p.name = name;
  p.type = type;
  p.default_value = std::move(def);
  p.required = required;
  return p;
}

Registry TestRegistry() {
  Registry r;
  ParamSpec lnf = P("factor", ParamType::kOptionalFloat);
  lnf.allowed_strings = {"NUM_TOKENS"};
  r.Register({"pkg.mod.Fn",
              {P("count", ParamType::kInt, Value::Int(3)), P("rate", ParamType::kFloat, Value::Float(0.5)),
               P("name", ParamType::kString, Value::String("x")),
               P("maybe", ParamType::kOptionalInt), P("ref", ParamType::kOptionalReference),
               P("items", ParamType::kList, Value::List({})), P("anything", ParamType::kAny),
               P("table", ParamType::kDict, Value::Dict({})), P("flag", ParamType::kBool, Value::Bool(false)),
               P("needed", ParamType::kInt, Value(), /*required=*/true), lnf},
              "test"});
  r.Register({"pkg.other.Fn", {P("x", ParamType::kInt, Value::Int(0))}, ""});
  r.Register({"pkg.mod.Thing", {}, ""});
  // A method of a class, as t5x binds models.EncoderDecoderModel.
  // predict_batch_with_aux.num_decodes: registered as its own configurable.
  r.Register({"pkg.mod.Thing.predict", {P("num_decodes", ParamType::kInt, Value::Int(1))}, ""});
  r.Register({"__main__.train", {P("model", ParamType::kOptionalReference)}, ""});
  return r;
}

class ConfigTest : public ::testing::Test {
 protected:
  ConfigTest() : registry_(TestRegistry()), config_(&registry_) {}

  // Parses text as "t.gin" and finalizes.
  void Load(const std::string& text) {
    config_.ParseString(text, "t.gin");
    config_.Finalize();
  }

  Registry registry_;
  Config config_;
};

// ---------------------------------------------------------------- Registry

TEST(GinRegistry, RegisterFindAndErrors) {
  Registry r = TestRegistry();
  ASSERT_NE(r.Find("pkg.mod.Fn"), nullptr);
  EXPECT_EQ(r.Find("pkg.mod.Fn")->FindParam("count")->default_value.AsInt(), 3);
  EXPECT_EQ(r.Find("mod.Fn"), nullptr);  // Find is exact
  EXPECT_EQ(r.size(), 5u);
  EXPECT_ERROR_CONTAINS(r.Register({"pkg.mod.Fn", {}, ""}),
                        "configurable 'pkg.mod.Fn' is registered twice");
  EXPECT_ERROR_CONTAINS(r.Register({"a.B", {P("x", ParamType::kInt, Value::Int(1)), P("x", ParamType::kInt, Value::Int(1))}, ""}),
                        "parameter 'x' of 'a.B' is registered twice");
  EXPECT_ERROR_CONTAINS(r.Register({"a.C", {P("x", ParamType::kInt, Value::String("s"))}, ""}),
                        "default of 'a.C.x': expected an int, got 's'");
  EXPECT_ERROR_CONTAINS(r.Register({"a..D", {}, ""}), "invalid configurable name 'a..D'");
}

TEST(GinRegistry, Resolve) {
  Registry r = TestRegistry();
  std::map<std::string, std::string> aliases{{"mod", "pkg.mod"}, {"train_script", "__main__"},
                                             {"pkg.mod", "pkg.mod"}};
  EXPECT_EQ(r.Resolve("pkg.mod.Fn").full_name, "pkg.mod.Fn");
  EXPECT_EQ(r.Resolve("mod.Fn", aliases).full_name, "pkg.mod.Fn");
  EXPECT_EQ(r.Resolve("train_script.train", aliases).full_name, "__main__.train");
  EXPECT_EQ(r.Resolve("Thing").full_name, "pkg.mod.Thing");      // unique suffix
  EXPECT_EQ(r.Resolve("other.Fn").full_name, "pkg.other.Fn");    // dotted suffix
  EXPECT_EQ(r.Resolve("Fn").error,
            "ambiguous configurable name 'Fn': it could be 'pkg.mod.Fn', 'pkg.other.Fn'; write more of the name");
  EXPECT_EQ(r.Resolve("mod.Fnn", aliases).error, "unknown configurable 'mod.Fnn'; did you mean 'mod.Fn'?");
  EXPECT_EQ(r.Resolve("pkg.mod.Thnig").error, "unknown configurable 'pkg.mod.Thnig'; did you mean 'pkg.mod.Thing'?");
  EXPECT_EQ(r.Resolve("zzzzzz").error, "unknown configurable 'zzzzzz'");
}

TEST(GinRegistry, RefusedModulesAreNamedAtTheirImport) {
  Registry r = TestRegistry();
  r.RefuseModule("vendor", "is not supported; use pkg");
  EXPECT_EQ(r.ModuleRefusal("vendor.sub.mod"), "is not supported; use pkg");
  EXPECT_EQ(r.ModuleRefusal("vendor"), "is not supported; use pkg");
  EXPECT_EQ(r.ModuleRefusal("vendorx"), "");
  Config c(&r);
  EXPECT_ERROR_CONTAINS(c.ParseString("import pkg.mod\nfrom vendor.sub import mod2\n", "t.gin"),
                        "t.gin:2:1: 'vendor.sub.mod2' is not supported; use pkg");
}

TEST(GinRegistry, EditDistanceAndTypes) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(ClosestName("z_los", {"z_loss", "label_smoothing"}), "z_loss");
  EXPECT_EQ(ClosestName("completely_else", {"z_loss"}), "");
  ParamSpec f = P("rate", ParamType::kFloat);
  EXPECT_EQ(CheckParamValue(f, Value::Int(1)), "");
  EXPECT_EQ(CheckParamValue(f, Value::String("abc"), "a.rate"),
            "expected a float for a.rate, got 'abc' (a string)");
  EXPECT_EQ(CheckParamValue(P("n", ParamType::kOptionalInt), Value::None()), "");
  EXPECT_EQ(CheckParamValue(P("n", ParamType::kInt), Value::None()), "expected an int, got 'None' (None)");
  EXPECT_EQ(CheckParamValue(P("l", ParamType::kList), Value::Tuple({})), "");
  EXPECT_EQ(ParamTypeName(ParamType::kOptionalString), "a string or None");
}

// ---------------------------------------------------------------- Bindings

TEST_F(ConfigTest, BindingsDefaultsAndOverrides) {
  Load(R"(
pkg.mod.Fn.count = 10
pkg.mod.Fn.name = 'first'
pkg.mod.Fn.name = "second"   # later wins
pkg.mod.Fn.items = ['a', 'b']
pkg.mod.Fn.table = {'inputs': 512}
pkg.mod.Fn.factor = 'NUM_TOKENS'
)");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count").AsInt(), 10);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "name").AsString(), "second");
  EXPECT_DOUBLE_EQ(config_.Query("pkg.mod.Fn", "rate").AsFloat(), 0.5);  // default
  EXPECT_TRUE(config_.Query("pkg.mod.Fn", "maybe").is_none());
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "items").AsList()[1].AsString(), "b");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "table").AsDict()[0].second.AsInt(), 512);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "factor").AsString(), "NUM_TOKENS");
  EXPECT_TRUE(config_.IsBound("pkg.mod.Fn", "count"));
  EXPECT_FALSE(config_.IsBound("pkg.mod.Fn", "rate"));
  Value v = config_.Query("pkg.mod.Fn", "count");
  EXPECT_EQ(v.location().ToString(), "t.gin:2:20");
  EXPECT_EQ(v.description(), "pkg.mod.Fn.count");
  EXPECT_EQ(ErrorOf([&] { v.AsString(); }),
            "t.gin:2:20: expected a string for pkg.mod.Fn.count, got '10' (an int)");
}

TEST_F(ConfigTest, BlockFormAndLaterFilesOverride) {
  config_.ParseString("pkg.mod.Fn:\n  count = 1\n  rate = 2.5\n", "a.gin");
  config_.ParseString("pkg.mod.Fn.count = 7\n", "b.gin");
  config_.Finalize();
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count").AsInt(), 7);
  EXPECT_DOUBLE_EQ(config_.Query("pkg.mod.Fn", "rate").AsFloat(), 2.5);
}

TEST_F(ConfigTest, Scopes) {
  Load(R"(
pkg.mod.Fn.count = 1
train/pkg.mod.Fn.count = 2
train/eval/pkg.mod.Fn.count = 3
train/pkg.mod.Fn.name = 'train'
)");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count").AsInt(), 1);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count", "train").AsInt(), 2);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count", "train/eval").AsInt(), 3);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count", "other").AsInt(), 1);    // unscoped
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "name", "train/eval").AsString(), "train");  // parent scope
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "name", "infer").AsString(), "x");  // default
  EXPECT_TRUE(config_.IsBound("pkg.mod.Fn", "name", "train"));
  EXPECT_FALSE(config_.IsBound("pkg.mod.Fn", "name"));
}

TEST_F(ConfigTest, ImportsAliasesAndReferences) {
  Load(R"(
from __gin__ import dynamic_registration
import __main__ as train_script
from pkg import mod
import pkg.other as oth
train_script.train.model = @train/mod.Fn()
mod.Fn.ref = @Thing
oth.Fn.x = 4
mod.Fn.anything = [@mod.Thing(), {'k': @s/pkg.other.Fn}]
)");
  Value model = config_.Query("__main__.train", "model");
  EXPECT_EQ(model.reference_name(), "pkg.mod.Fn");  // full name after resolution
  EXPECT_EQ(model.reference_scope(), "train");
  EXPECT_TRUE(model.reference_evaluated());
  Value ref = config_.Query("pkg.mod.Fn", "ref");
  EXPECT_EQ(ref.reference_name(), "pkg.mod.Thing");
  EXPECT_FALSE(ref.reference_evaluated());
  EXPECT_EQ(config_.Query("pkg.other.Fn", "x").AsInt(), 4);
  Value any = config_.Query("pkg.mod.Fn", "anything");
  EXPECT_EQ(any.AsList()[0].reference_name(), "pkg.mod.Thing");
  EXPECT_EQ(any.AsList()[1].AsDict()[0].second.reference_name(), "pkg.other.Fn");
  EXPECT_EQ(any.AsList()[1].AsDict()[0].second.reference_scope(), "s");
}

TEST_F(ConfigTest, ConflictingImportAlias) {
  EXPECT_ERROR_CONTAINS(config_.ParseString("from pkg import mod\nimport pkg.other as mod\n", "t.gin"),
                        "t.gin:2:1: import alias 'mod' for 'pkg.other' conflicts with 'pkg.mod' imported as 'mod' at t.gin:1:1");
}

// ---------------------------------------------------------------- Macros

TEST_F(ConfigTest, Macros) {
  Load(R"(
pkg.mod.Fn.count = %STEPS       # used before it is defined
pkg.mod.Fn.items = [%STEPS, %NAME]
pkg.mod.Fn.name = %NAME
NAME = %OTHER                   # macro of a macro
OTHER = 'hello'
STEPS = 5
STEPS = 6                       # later wins
pkg.mod.Fn.ref = %MODEL
MODEL = @mod.Thing()
import pkg.mod as mod
)");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count").AsInt(), 6);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "items").ToGinString(), "[6, 'hello']");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "name").AsString(), "hello");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "ref").reference_name(), "pkg.mod.Thing");
  EXPECT_EQ(config_.MacroValue("STEPS")->AsInt(), 6);
  EXPECT_FALSE(config_.MacroValue("NOPE").has_value());
}

// Macros nothing reads are reported (gin is silent): a scoped macro is
// explained -- gin-config 0.5.0 gives train/f.x = %BATCH_SIZE the value of
// 'BATCH_SIZE = 32' although 'train/BATCH_SIZE = 4' is set (checked in the
// test venv); only %train/BATCH_SIZE reads the scoped one.
TEST_F(ConfigTest, UnreadMacrosAreNamedAndScopedOnesExplained) {
  Load(R"(
BATCH_SIZE = 32
train/BATCH_SIZE = 4
train/pkg.mod.Fn.count = %BATCH_SIZE
pkg.other.Fn.x = %INNER
INNER = %DEEP
DEEP = 1
NEVER = 2
ASKED = 3
)");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count", "train").AsInt(), 32);
  EXPECT_EQ(config_.Query("pkg.other.Fn", "x").AsInt(), 1);  // INNER, DEEP read through it
  EXPECT_EQ(config_.MacroValue("ASKED")->AsInt(), 3);
  const std::vector<std::string> unread = config_.UnreadMacros();
  ASSERT_EQ(unread.size(), 2u) << ::testing::PrintToString(unread);
  EXPECT_EQ(unread[0],
            "t.gin:3:1: macro train/BATCH_SIZE is never read: it is a scoped macro, and gin "
            "evaluates %BATCH_SIZE in scope BATCH_SIZE whatever scope reads it, so only "
            "%train/BATCH_SIZE would read it, and %BATCH_SIZE keeps the value of "
            "'BATCH_SIZE = ...'; to set it in scope train, bind train/pkg.mod.Fn.count");
  EXPECT_EQ(unread[1],
            "t.gin:8:1: macro NEVER is never read (no configurable this run calls reads %NEVER)");
}

// gin's rule as t5x runs it (gin_utils.parse_gin_flags finalizes the
// config): a binding or macro left at %gin.REQUIRED itself is an error
// whether or not anything reads it (gin's find_missing_overrides_hook;
// checked with gin-config 0.5.0: 'A = %gin.REQUIRED' alone gives "A/macro.value
// set to `%gin.REQUIRED` but not subsequently overridden."). The message
// names who reads it when something does. t5xx's data commands, which call
// no model, pass require_overrides = false: only what they read counts.
TEST_F(ConfigTest, RequiredMacroLeftUnsetIsAnErrorAsInT5x) {
  config_.ParseString("RATE = %gin.REQUIRED\npkg.mod.Fn.rate = %RATE\n", "base.gin");
  const std::string want =
      "base.gin:1:1: macro 'RATE' is %gin.REQUIRED and was never set (read by pkg.mod.Fn.rate at "
      "base.gin:2:1); set it in a gin file ('RATE = ...') or with --gin.RATE=<value>";
  EXPECT_EQ(ErrorOf([&] { config_.Finalize({"pkg.mod.Fn"}); }), want);
  // Not read by the run: still refused, as gin.finalize() refuses it.
  EXPECT_EQ(ErrorOf([&] { config_.Finalize({"pkg.other.Fn"}); }),
            "base.gin:1:1: macro 'RATE' is %gin.REQUIRED and was never set (nothing this command "
            "calls reads it, but t5x's gin refuses an unset %gin.REQUIRED all the same); set it in "
            "a gin file ('RATE = ...') or with --gin.RATE=<value>");
  // A data command: only reads count, and a read Finalize did not foresee
  // is the error itself.
  config_.Finalize({"pkg.other.Fn"}, /*require_overrides=*/false);
  EXPECT_EQ(config_.Query("pkg.other.Fn", "x").AsInt(), 0);
  EXPECT_EQ(ErrorOf([&] { config_.Query("pkg.mod.Fn", "rate"); }), want);
  config_.AddFlagBinding("RATE", "0.25", "--gin.RATE flag");
  config_.Finalize({"pkg.mod.Fn"});
  EXPECT_DOUBLE_EQ(config_.Query("pkg.mod.Fn", "rate").AsFloat(), 0.25);
}

TEST_F(ConfigTest, UnreadRequiredMacroIsAnErrorOnlyWhereT5xWouldRefuseIt) {
  // Issue 9 made an unread `SOME_UNUSED_SETTING = %gin.REQUIRED` pass every
  // command, taking gin without finalize() as the rule; t5x finalizes, so
  // train/infer/eval/config refuse it as t5x does (issue 32, gin oracle).
  // The data commands (tasks only) still accept it.
  config_.ParseString("SOME_UNUSED_SETTING = %gin.REQUIRED\npkg.mod.Fn.count = 2\n", "x.gin");
  EXPECT_ERROR_CONTAINS(config_.Finalize({"pkg.mod.Fn", "__main__.train"}),
                        "x.gin:1:1: macro 'SOME_UNUSED_SETTING' is %gin.REQUIRED and was never set "
                        "(nothing this command calls reads it");
  config_.Finalize({"pkg.mod.Fn"}, /*require_overrides=*/false);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count").AsInt(), 2);
}

TEST_F(ConfigTest, RequiredReachedThroughAReferenceIsReported) {
  // train.model = @pkg.mod.Fn() makes Fn called; scoped references are
  // followed in their scope.
  config_.ParseString(
      "A = %gin.REQUIRED\nB = %gin.REQUIRED\nC = %gin.REQUIRED\n"
      "__main__.train.model = @s/pkg.mod.Fn()\n"
      "s/pkg.mod.Fn.count = %A\npkg.mod.Fn.rate = %B\npkg.other.Fn.x = %C\n",
      "r.gin");
  EXPECT_EQ(ErrorOf([&] { config_.Finalize({"__main__.train"}); }),
            "r.gin:1:1: macros 'A', 'B', 'C' are %gin.REQUIRED and were never set (A read by "
            "s/pkg.mod.Fn.count at r.gin:5:1; B read by s/pkg.mod.Fn.rate at r.gin:6:1; C read by "
            "nothing this command calls); set each in a gin file or with --gin.NAME=<value> (e.g. "
            "--gin.A=<value>)");
}

TEST_F(ConfigTest, RequiredInsideASetMacroSaysSo) {
  config_.ParseString("T = {'a': %gin.REQUIRED, 'b': 8}\npkg.mod.Fn.table = %T\n", "d.gin");
  EXPECT_EQ(ErrorOf([&] { config_.Finalize({"pkg.mod.Fn"}); }),
            "d.gin:1:1: macro 'T' = {'a': %gin.REQUIRED, 'b': 8} holds a %gin.REQUIRED that was "
            "never overridden (read by pkg.mod.Fn.table at d.gin:2:1); give it a value in place");
}

TEST_F(ConfigTest, RequiredBinding) {
  config_.ParseString("pkg.mod.Fn.count = %gin.REQUIRED\n", "r.gin");
  EXPECT_ERROR_CONTAINS(config_.Finalize({"pkg.mod.Fn"}),
                        "r.gin:1:20: pkg.mod.Fn.count is %gin.REQUIRED and was never overridden");
  EXPECT_ERROR_CONTAINS(config_.Finalize(),
                        "r.gin:1:20: pkg.mod.Fn.count is %gin.REQUIRED and was never overridden "
                        "(t5x's gin refuses it even where nothing reads it)");
  config_.Finalize({}, /*require_overrides=*/false);
  EXPECT_ERROR_CONTAINS(config_.Query("pkg.mod.Fn", "count"),
                        "r.gin:1:20: pkg.mod.Fn.count is %gin.REQUIRED and was never overridden");
}

TEST_F(ConfigTest, EveryErrorInOneMessageBindingErrorsFirst) {
  // Issue 9: unset REQUIRED macros hid a misspelt configurable, a misspelt
  // parameter and a wrongly typed value; gin reports binding errors first.
  config_.ParseString(
      "STEPS = %gin.REQUIRED\n"
      "pkg.mod.Fn.count = %STEPS\n"
      "pkg.mod.Fnn.rate = 0.1\n"
      "pkg.mod.Fn.rat = 0.1\n"
      "pkg.mod.Fn.flag = 'yes'\n",
      "e.gin");
  const std::string msg = ErrorOf([&] { config_.Finalize({"pkg.mod.Fn"}); });
  EXPECT_EQ(msg.substr(0, msg.find('\n')), "4 errors in the gin config:") << msg;
  const size_t fnn = msg.find("e.gin:3:1: ");
  const size_t rat = msg.find("e.gin:4:1: unknown parameter 'rat' of 'pkg.mod.Fn'");
  const size_t flag = msg.find("e.gin:5:19: expected a bool");
  const size_t steps = msg.find("e.gin:1:1: macro 'STEPS' is %gin.REQUIRED");
  ASSERT_NE(fnn, std::string::npos) << msg;
  ASSERT_NE(rat, std::string::npos) << msg;
  ASSERT_NE(flag, std::string::npos) << msg;
  ASSERT_NE(steps, std::string::npos) << msg;
  EXPECT_LT(fnn, rat);
  EXPECT_LT(rat, flag);
  EXPECT_LT(flag, steps);
}

TEST_F(ConfigTest, MacroErrors) {
  config_.ParseString("STEPS = 'many'\npkg.mod.Fn.count = %STEPS\n", "m.gin");
  EXPECT_ERROR_CONTAINS(config_.Finalize(),
                        "m.gin:2:20: expected an int for pkg.mod.Fn.count, got 'many' (a string) (from macro %STEPS set at m.gin:1:1)");

  Config c2(&registry_);
  c2.ParseString("STEPS = 1\npkg.mod.Fn.count = %STEP\n", "m.gin");
  EXPECT_ERROR_CONTAINS(c2.Finalize(), "m.gin:2:20: undefined macro '%STEP'; did you mean '%STEPS'?");

  // A macro cycle is an error where a called configurable reads it (gin
  // evaluates macros only there, and recurses without end; gin-config
  // 0.5.0 accepts the same text when pkg.mod.Fn is never called).
  Config c3(&registry_);
  c3.ParseString("A = %B\nB = [%A]\npkg.mod.Fn.items = %A\n", "m.gin");
  EXPECT_ERROR_CONTAINS(c3.Finalize({"pkg.mod.Fn"}),
                        "m.gin:2:6: macro cycle: %A -> %B -> %A (in the value of "
                        "pkg.mod.Fn.items at m.gin:3:1; gin would recurse without end)");
  c3.Finalize({"pkg.other.Fn"});
  EXPECT_ERROR_CONTAINS(c3.Query("pkg.mod.Fn", "items"), "macro cycle: %A -> %B -> %A");
}

TEST_F(ConfigTest, ReferenceCyclesNameEveryLink) {
  // gin-config 0.5.0 recurses without end (RecursionError) on each of these
  // once pkg.mod.Fn is called; t5xx names the chain, file:line per link.
  Config scoped(&registry_);
  scoped.ParseString(
      "__main__.train.model = @s/pkg.mod.Fn()\n"
      "s/pkg.mod.Fn.anything = @t/pkg.mod.Fn()\n"
      "t/pkg.mod.Fn.anything = @s/pkg.mod.Fn()\n",
      "c.gin");
  EXPECT_ERROR_CONTAINS(
      scoped.Finalize({"__main__.train"}),
      "gin reference cycle: s/pkg.mod.Fn.anything = @t/pkg.mod.Fn() at c.gin:2:25 (bound at "
      "c.gin:2:1); then t/pkg.mod.Fn.anything = @s/pkg.mod.Fn() at c.gin:3:25 (bound at "
      "c.gin:3:1), which calls s/pkg.mod.Fn again (gin would recurse without end)");
  // Through a macro: the macro's text and the binding that reads it (%M
  // evaluates in scope M, as gin's @M/gin.macro()).
  Config macro(&registry_);
  macro.ParseString("M = @pkg.mod.Fn()\npkg.mod.Fn.anything = %M\n", "m.gin");
  EXPECT_ERROR_CONTAINS(macro.Finalize({"pkg.mod.Fn"}),
                        "gin reference cycle: M/pkg.mod.Fn.anything = @M/pkg.mod.Fn() at m.gin:1:5 "
                        "(bound at m.gin:2:1), which calls M/pkg.mod.Fn again");
}

// ---------------------------------------------------------------- Validation errors

TEST_F(ConfigTest, UnknownConfigurableSuggests) {
  config_.ParseString("from pkg import mod\n\nmod.Fnn.count = 1\n", "u.gin");
  EXPECT_ERROR_CONTAINS(config_.Finalize(),
                        "u.gin:3:1: unknown configurable 'mod.Fnn'; did you mean 'mod.Fn'? (in binding 'mod.Fnn.count')");
}

TEST_F(ConfigTest, UnknownParameterSuggests) {
  config_.ParseString("pkg.mod.Fn:\n  cuont = 1\n", "u.gin");
  EXPECT_ERROR_CONTAINS(config_.Finalize(),
                        "u.gin:2:3: unknown parameter 'cuont' of 'pkg.mod.Fn' (in binding 'pkg.mod.Fn.cuont'); did you mean 'count'?");
  Config c2(&registry_);
  c2.ParseString("pkg.mod.Thing.x = 1\n", "u.gin");
  EXPECT_ERROR_CONTAINS(c2.Finalize(), "unknown parameter 'x' of 'pkg.mod.Thing' (in binding 'pkg.mod.Thing.x'); it takes no parameters");
}

TEST_F(ConfigTest, UnknownReferenceSuggests) {
  config_.ParseString("pkg.mod.Fn.ref = @pkg.mod.Thng()\n", "u.gin");
  EXPECT_ERROR_CONTAINS(config_.Finalize(),
                        "u.gin:1:18: unknown configurable 'pkg.mod.Thng'; did you mean 'pkg.mod.Thing'? (in reference '@pkg.mod.Thng()')");
}

TEST_F(ConfigTest, AmbiguousName) {
  config_.ParseString("Fn.count = 1\n", "u.gin");
  EXPECT_ERROR_CONTAINS(config_.Finalize(), "u.gin:1:1: ambiguous configurable name 'Fn'");
}

TEST_F(ConfigTest, TypeMismatch) {
  const std::pair<const char*, const char*> cases[] = {
      {"pkg.mod.Fn.count = 1.5", "t.gin:1:20: expected an int for pkg.mod.Fn.count, got '1.5' (a float)"},
      {"pkg.mod.Fn.rate = 'fast'", "t.gin:1:19: expected a float for pkg.mod.Fn.rate, got 'fast' (a string)"},
      {"pkg.mod.Fn.name = None", "t.gin:1:19: expected a string for pkg.mod.Fn.name, got 'None' (None)"},
      {"pkg.mod.Fn.flag = 1", "t.gin:1:19: expected a bool for pkg.mod.Fn.flag, got '1' (an int)"},
      {"pkg.mod.Fn.items = 'a'", "expected a list or tuple for pkg.mod.Fn.items, got 'a' (a string)"},
      {"pkg.mod.Fn.ref = 'a'", "expected a reference (@name or @name()) or None for pkg.mod.Fn.ref"},
      {"train/pkg.mod.Fn.factor = 'FOO'",
       "expected a float or None or one of 'NUM_TOKENS' for train/pkg.mod.Fn.factor, got 'FOO' (a string)"},
  };
  for (const auto& [text, expected] : cases) {
    Config c(&registry_);
    c.ParseString(std::string(text) + "\n", "t.gin");
    EXPECT_ERROR_CONTAINS(c.Finalize(), expected);
  }
}

TEST_F(ConfigTest, QueryProgrammingErrors) {
  EXPECT_THROW(config_.Query("pkg.mod.Fn", "count"), std::logic_error);  // not finalized
  config_.Finalize();
  EXPECT_ERROR_CONTAINS(config_.Query("pkg.mod.Fnx", "count"),
                        "internal error: gin query for unregistered configurable 'pkg.mod.Fnx'; did you mean 'pkg.mod.Fn'?");
  EXPECT_ERROR_CONTAINS(config_.Query("pkg.mod.Fn", "cont"),
                        "unregistered parameter 'cont' of 'pkg.mod.Fn'; did you mean 'count'?");
  EXPECT_ERROR_CONTAINS(config_.Query("pkg.mod.Fn", "needed", "train"),
                        "no value for required parameter 'train/pkg.mod.Fn.needed'");
  config_.ParseString("pkg.mod.Fn.count = 1\n", "late.gin");
  EXPECT_THROW(config_.Query("pkg.mod.Fn", "count"), std::logic_error);  // needs Finalize again
}

// ---------------------------------------------------------------- Flags-style bindings

TEST_F(ConfigTest, AddBindingAndFlagBindings) {
  config_.AddBinding("pkg.mod.Fn.count = 12", "--gin_bindings flag");
  config_.AddFlagBinding("DIR", "/tmp/run", "--gin.DIR flag");                 // plain string macro
  config_.AddFlagBinding("pkg.mod.Fn.name", "my_run", "--gin.pkg.mod.Fn.name flag");  // string param
  config_.AddFlagBinding("pkg.mod.Fn.table", "{'inputs': 8}", "--gin.pkg.mod.Fn.table flag");
  config_.AddFlagBinding("pkg.mod.Fn.factor", "NUM_TOKENS", "--gin.pkg.mod.Fn.factor flag");
  config_.AddBinding("pkg.mod.Fn.items = [%DIR]", "--gin_bindings flag");
  config_.Finalize();
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count").AsInt(), 12);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "name").AsString(), "my_run");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "table").AsDict()[0].second.AsInt(), 8);
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "items").AsList()[0].AsString(), "/tmp/run");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "factor").AsString(), "NUM_TOKENS");
  EXPECT_EQ(config_.Query("pkg.mod.Fn", "count").location().ToString(), "--gin_bindings flag, column 20");
}

TEST_F(ConfigTest, FlagBindingErrors) {
  config_.AddFlagBinding("pkg.mod.Fn.count", "many", "--gin.pkg.mod.Fn.count flag");
  EXPECT_ERROR_CONTAINS(config_.Finalize(),
                        "--gin.pkg.mod.Fn.count flag, column 1: expected a value (strings need quotes");
  EXPECT_ERROR_CONTAINS(config_.Finalize(), "(value for 'pkg.mod.Fn.count', which takes an int)");

  Config c2(&registry_);
  c2.AddFlagBinding("STEPS", "abc", "--gin.STEPS flag");
  c2.ParseString("pkg.mod.Fn.count = %STEPS\n", "t.gin");
  EXPECT_ERROR_CONTAINS(c2.Finalize(),
                        "t.gin:1:20: expected an int for pkg.mod.Fn.count, got 'abc' (a string) (from macro %STEPS set at --gin.STEPS flag)");

  Config c3(&registry_);
  EXPECT_ERROR_CONTAINS(c3.AddBinding("pkg.mod.Fn.count 3", "--gin_bindings flag"),
                        "--gin_bindings flag, column 18: expected '=' after 'pkg.mod.Fn.count', got '3'");
}

// ---------------------------------------------------------------- Includes

class GinFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("t5xx_gin_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
    fs::create_directories(dir_ / "lib");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(dir_ / rel) << text;
  }
  std::string Path(const std::string& rel) const { return (dir_ / rel).string(); }

  fs::path dir_;
  Registry registry_ = TestRegistry();
};

TEST_F(GinFilesTest, IncludeRelativeThenSearchPath) {
  Write("sub/main.gin", "include 'base.gin'\ninclude 'shared.gin'\npkg.mod.Fn.count = 2\n");
  Write("sub/base.gin", "pkg.mod.Fn.count = 1\npkg.mod.Fn.name = 'base'\n");
  Write("lib/shared.gin", "pkg.mod.Fn.rate = 9.0\npkg.mod.Fn.name = 'shared'\n");
  Config config(&registry_);
  config.AddSearchPath(Path("lib"));
  config.ParseFile(Path("sub/main.gin"));
  config.Finalize();
  EXPECT_EQ(config.Query("pkg.mod.Fn", "count").AsInt(), 2);
  EXPECT_EQ(config.Query("pkg.mod.Fn", "name").AsString(), "shared");
  EXPECT_DOUBLE_EQ(config.Query("pkg.mod.Fn", "rate").AsFloat(), 9.0);
  EXPECT_EQ(config.parsed_files().size(), 3u);
  // gin's order: a search path before the including file's folder.
  Write("sub/both.gin", "include 'dup.gin'\n");
  Write("sub/dup.gin", "pkg.mod.Fn.name = 'beside'\n");
  Write("lib/dup.gin", "pkg.mod.Fn.name = 'search path'\n");
  Config c3(&registry_);
  c3.AddSearchPath(Path("lib"));
  c3.ParseFile(Path("sub/both.gin"));
  c3.Finalize();
  EXPECT_EQ(c3.Query("pkg.mod.Fn", "name").AsString(), "search path");
  // Relative top-level file found through a search path.
  Config c2(&registry_);
  c2.AddSearchPath(dir_.string());
  c2.ParseFile("sub/base.gin");
  c2.Finalize();
  EXPECT_EQ(c2.Query("pkg.mod.Fn", "name").AsString(), "base");
  EXPECT_EQ(c2.Query("pkg.mod.Fn", "name").location().ToString(), Path("sub/base.gin") + ":2:19");
}

TEST_F(GinFilesTest, IncludeCycleAndMissing) {
  Write("a.gin", "include 'b.gin'\n");
  Write("b.gin", "pkg.mod.Fn.count = 1\ninclude 'a.gin'\n");
  Config config(&registry_);
  std::string msg = ErrorOf([&] { config.ParseFile(Path("a.gin")); });
  EXPECT_NE(msg.find(Path("b.gin") + ":2:1: include cycle: 'a.gin' is already being parsed"), std::string::npos) << msg;

  Write("c.gin", "\n  \ninclude 'nope.gin'\n");
  Config c2(&registry_);
  msg = ErrorOf([&] { c2.ParseFile(Path("c.gin")); });
  // Where gin looks (the current directory), then the including folder.
  EXPECT_NE(msg.find(Path("c.gin") + ":3:1: included file 'nope.gin' not found (looked for nope.gin, " +
                     Path("nope.gin") + ")"),
            std::string::npos) << msg;
  Config c3(&registry_);
  EXPECT_ERROR_CONTAINS(c3.ParseFile("missing_file.gin"), "gin file 'missing_file.gin' not found");
}

TEST_F(GinFilesTest, ErrorsInIncludedFileNameThatFile) {
  Write("main.gin", "include 'bad.gin'\n");
  Write("bad.gin", "pkg.mod.Fn.count = 1\npkg.mod.Fn.rate = 'x\n");
  Config config(&registry_);
  EXPECT_ERROR_CONTAINS(config.ParseFile(Path("main.gin")), Path("bad.gin") + ":2:19: unterminated string 'x");
}

// ---------------------------------------------------------------- Operative config

TEST_F(ConfigTest, OperativeConfigRoundTrip) {
  Load(R"(
from pkg import mod
N = 4
mod.Fn:
  count = %N
  name = 'it\'s "quoted"'
  items = ('a', 1.5, None, [True])
  table = {'inputs': 512, 'targets': 114}
  ref = @train/mod.Thing()
  anything = @pkg.other.Fn
train/mod.Fn.count = 8
pkg.other.Fn.x = 3   # never queried
)");
  const std::vector<std::pair<std::string, std::string>> queries = {
      {"count", ""}, {"name", ""}, {"items", ""}, {"table", ""}, {"ref", ""},
      {"anything", ""}, {"rate", ""}, {"maybe", ""}, {"count", "train"}};
  std::vector<Value> first;
  for (const auto& [param, scope] : queries) first.push_back(config_.Query("pkg.mod.Fn", param, scope));

  std::string operative = config_.OperativeConfigString();
  EXPECT_NE(operative.find("# Parameters for pkg.mod.Fn:\n"), std::string::npos) << operative;
  EXPECT_NE(operative.find("pkg.mod.Fn.count = 4\n"), std::string::npos) << operative;
  EXPECT_NE(operative.find("pkg.mod.Fn.rate = 0.5\n"), std::string::npos) << operative;  // default
  EXPECT_NE(operative.find("pkg.mod.Fn.ref = @train/pkg.mod.Thing()\n"), std::string::npos) << operative;
  EXPECT_NE(operative.find("# Parameters for train/pkg.mod.Fn:\ntrain/pkg.mod.Fn.count = 8\n"), std::string::npos)
      << operative;
  EXPECT_EQ(operative.find("pkg.other.Fn.x"), std::string::npos) << operative;
  EXPECT_EQ(operative.find("%N"), std::string::npos) << operative;

  Config again(&registry_);
  again.ParseString(operative, "operative.gin");
  again.Finalize();
  for (size_t i = 0; i < queries.size(); ++i) {
    EXPECT_EQ(again.Query("pkg.mod.Fn", queries[i].first, queries[i].second), first[i])
        << queries[i].first << " in scope '" << queries[i].second << "'";
  }
  EXPECT_EQ(again.OperativeConfigString(), operative);

  // pkg.other.Fn is never called in this run: its binding is ignored (as
  // gin does), not an unused binding of a configurable the run reads.
  EXPECT_EQ(config_.UnusedBindings(), std::vector<std::string>{});
  std::vector<std::string> ignored = config_.IgnoredBindings();
  ASSERT_EQ(ignored.size(), 1u);
  EXPECT_EQ(ignored[0], "t.gin:12: pkg.other.Fn.x");
}

TEST_F(ConfigTest, UnusedBindingsOfQueriedConfigurablesOnly) {
  config_.ParseString("pkg.mod.Fn.count = 1\npkg.mod.Fn.rate = 2.0\npkg.other.Fn.x = 3\n", "q.gin");
  config_.Finalize();
  config_.Query("pkg.mod.Fn", "count");
  // rate belongs to a configurable the run reads: unused (an error for t5xx).
  EXPECT_EQ(config_.UnusedBindings(), std::vector<std::string>{"q.gin:2: pkg.mod.Fn.rate"});
  // pkg.other.Fn is never asked about: ignored.
  EXPECT_EQ(config_.IgnoredBindings(), std::vector<std::string>{"q.gin:3: pkg.other.Fn.x"});
  // Asking whether it is bound counts as using the configurable.
  config_.IsBound("pkg.other.Fn", "x");
  EXPECT_EQ(config_.IgnoredBindings(), std::vector<std::string>{});
  EXPECT_EQ(config_.UnusedBindings(),
            (std::vector<std::string>{"q.gin:2: pkg.mod.Fn.rate", "q.gin:3: pkg.other.Fn.x"}));
}

// gin ignores bindings of a scope the program never enters; t5xx does too
// when a reference names the scope (the component is configured but off,
// e.g. train_eval_dataset_cfg = None), and reports a scope no reference
// names (a misspelt scope would otherwise be dropped silently).
TEST_F(ConfigTest, BindingsOfUncalledScopes) {
  config_.ParseString(
      "__main__.train.model = @train/pkg.mod.Fn()\n"
      "__main__.train.model = None\n"  // the scope stays known
      "train/pkg.mod.Fn.count = 2\n"
      "trian/pkg.mod.Fn.rate = 1.0\n"
      "eval/pkg.mod.Fn.count = 4\n",
      "s.gin");
  config_.Finalize();
  config_.Query("__main__.train", "model");
  config_.Query("pkg.mod.Fn", "count", "eval");
  EXPECT_EQ(config_.IgnoredBindings(), std::vector<std::string>{"s.gin:3: train/pkg.mod.Fn.count"});
  EXPECT_EQ(config_.IgnoredConfigurables(),
            std::vector<std::string>{"train/pkg.mod.Fn (1 binding, at s.gin:3)"});
  EXPECT_EQ(config_.UnusedBindings(),
            std::vector<std::string>{"s.gin:4: trian/pkg.mod.Fn.rate (no reference enters scope "
                                     "'trian'; did you mean 'train'?)"});
}

TEST_F(ConfigTest, UnusedBindingsIncludeOverriddenScopesAndFlags) {
  config_.ParseString("pkg.mod.Fn.count = 1\ntrain/pkg.mod.Fn.count = 2\n", "u.gin");
  config_.AddBinding("pkg.mod.Fn.rate = 1.0", "--gin_bindings flag");
  config_.Finalize();
  config_.Query("pkg.mod.Fn", "count", "train");
  // The unscoped count is shadowed by train/ where it is read: gin accepts
  // such a placeholder, so it is ignored, not unused.
  EXPECT_EQ(config_.UnusedBindings(),
            std::vector<std::string>{"--gin_bindings flag: pkg.mod.Fn.rate"});
  EXPECT_EQ(config_.IgnoredBindings(), std::vector<std::string>{"u.gin:1: pkg.mod.Fn.count"});
  // Read unscoped as well: then it is simply used.
  config_.Query("pkg.mod.Fn", "count");
  EXPECT_EQ(config_.IgnoredBindings(), std::vector<std::string>{});
}

TEST_F(ConfigTest, MethodBindings) {
  // Class.method.param through an import alias, in both binding forms.
  Load("from pkg import mod\n"
       "mod.Thing.predict.num_decodes = 4\n"
       "infer/mod.Thing.predict:\n"
       "  num_decodes = 8\n");
  EXPECT_EQ(config_.Query("pkg.mod.Thing.predict", "num_decodes").AsInt(), 4);
  EXPECT_EQ(config_.Query("pkg.mod.Thing.predict", "num_decodes", "infer").AsInt(), 8);
  Config other(&registry_);
  other.ParseString("from pkg import mod\nmod.Thing.predikt.num_decodes = 4\n", "m.gin");
  EXPECT_ERROR_CONTAINS(other.Finalize(), "m.gin:2:1:");
}

TEST_F(ConfigTest, MacrosSetByFlagsButNeverUsedAreReported) {
  // COUNT is used (directly), LIMIT through another macro; COUNTT is a typo
  // set on the command line; SPARE is defined in a file and may go unused.
  config_.ParseString("COUNT = 1\nLIMIT = 2\nWRAP = %LIMIT\nSPARE = 3\n"
                      "pkg.mod.Fn.count = %COUNT\npkg.mod.Fn.rate = %WRAP\n", "m.gin");
  config_.AddFlagBinding("COUNTT", "5", "--gin.COUNTT flag");
  config_.AddFlagBinding("LIMIT", "4", "--gin.LIMIT flag");
  // A macro in --gin_bindings text may go unused, as in gin (the oracle test
  // checks gin-config accepts it).
  config_.AddBinding("EXTRA = 9", "--gin_bindings flag");
  // Reported by Finalize, with any other config error.
  EXPECT_EQ(ErrorOf([&] { config_.Finalize(); }),
            "--gin.COUNTT flag: macro COUNTT is never used (did you mean 'COUNT'?)");
}

// Issue 17 (fuzzing): each macro suggestion scans every macro, so one
// Finalize makes at most Config::kMaxSuggestions (20) of them; 4,000 unused
// flag macros took minutes under the fuzzer. 25 unused flag macros X0..X24,
// each one edit from another: the first 20 messages suggest, the last 5 do
// not, and all 25 are reported.
TEST_F(ConfigTest, MacroSuggestionsAreBoundedPerFinalize) {
  for (int i = 0; i < 25; ++i) {
    config_.AddFlagBinding("X" + std::to_string(i), "1", "--gin.X" + std::to_string(i));
  }
  const std::string msg = ErrorOf([&] { config_.Finalize(); });
  EXPECT_EQ(msg.substr(0, msg.find('\n')), "25 errors in the gin config:") << msg;
  size_t with = 0, without = 0;
  for (size_t at = msg.find("is never used"); at != std::string::npos;
       at = msg.find("is never used", at + 1)) {
    (msg.compare(at + 13, 16, " (did you mean '") == 0 ? with : without) += 1;
  }
  EXPECT_EQ(with, 20u) << msg;
  EXPECT_EQ(without, 5u) << msg;
}

}  // namespace
}  // namespace t5xx::gin

namespace t5xx::gin {
namespace {

// Macro chains and expansion are bounded (issue 17): a chain of 6,000
// macros was a stack overflow, and macros that each use the previous one
// four times expand to 4^20 values.
TEST(GinLimits, MacroChainDeeperThan32IsAnError) {
  Registry registry = TestRegistry();
  std::string text;
  for (int i = 0; i < 6000; ++i) text += "M" + std::to_string(i) + " = %M" + std::to_string(i + 1) + "\n";
  text += "M6000 = 1\npkg.mod.Fn.count = %M0\n";
  Config config(&registry);
  config.ParseString(text, "chain.gin");
  const std::string message = ErrorOf([&] { config.Finalize(); });
  EXPECT_NE(message.find("chain.gin:32:7: macros refer to macros more than 32 deep (the limit): "
                         "%M0 -> ... -> %M32"),
            std::string::npos)
      << message.substr(0, 400);

  // 31 macros deep is fine.
  std::string ok;
  for (int i = 0; i < 31; ++i) ok += "N" + std::to_string(i) + " = %N" + std::to_string(i + 1) + "\n";
  ok += "N31 = 5\npkg.mod.Fn.count = %N0\npkg.mod.Fn.needed = 1\n";
  Config fine(&registry);
  fine.ParseString(ok, "ok.gin");
  fine.Finalize();
  EXPECT_EQ(fine.Query("pkg.mod.Fn", "count").AsInt(), 5);
}

TEST(GinLimits, ExponentialMacroExpansionIsRefused) {
  Registry registry = TestRegistry();
  std::string text = "E0 = [1, 2]\n";
  for (int i = 1; i <= 20; ++i) {
    const std::string prev = "%E" + std::to_string(i - 1);
    text += "E" + std::to_string(i) + " = [" + prev + ", " + prev + ", " + prev + ", " + prev + "]\n";
  }
  text += "pkg.mod.Fn.items = %E20\n";
  Config config(&registry);
  config.ParseString(text, "bomb.gin");
  const std::string message = ErrorOf([&] { config.Finalize(); });
  EXPECT_NE(message.find("expanding macros makes more than 1048576 values in all (the limit)"),
            std::string::npos)
      << message.substr(0, 400);
}

}  // namespace
}  // namespace t5xx::gin

namespace t5xx::gin {
namespace {

TEST(GinLimits, FileOver16MiBIsRefusedBeforeReading) {
  t5xx::testing::TempDir tmp;
  const std::string path = tmp.path + "/huge.gin";
  {
    std::ofstream out(path, std::ios::binary);
    const std::string line(1023, '#');
    for (int i = 0; i < 16 * 1024 + 1; ++i) out << line << '\n';  // 16 MiB + 1 KiB of comments
  }
  Registry registry = TestRegistry();
  Config config(&registry);
  const std::string message = ErrorOf([&] { config.ParseFile(path); });
  EXPECT_NE(message.find("gin file '" + path + "' has 16778240 bytes, more than the limit of "
                         "16777216 (16 MiB)"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace t5xx::gin
