// ParseGinFlags: flag forms, ordering, search paths and flag errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "t5xx/config/flags.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::gin {
namespace {

using ::t5xx::testing::ErrorOf;

namespace fs = std::filesystem;


class FlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    run::RegisterConfigurables(registry_);
    dir_ = fs::temp_directory_path() /
           ("t5xx_gin_flags_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  Registry registry_;
  fs::path dir_;
};

TEST_F(FlagsTest, ConsumesGinFlagsInBothFormsAndKeepsTheRest) {
  std::string a = Write("a.gin", "from t5x import utils\nutils.SaveCheckpointConfig.period = 10\nutils.SaveCheckpointConfig.keep = 1\n");
  std::string b = Write("b.gin", "utils.SaveCheckpointConfig.period = 20\n");
  Config config(&registry_);
  std::vector<std::string> rest = ParseGinFlags(
      {"--run_mode=train", "--gin_file=" + a, "--gin_bindings", "utils.SaveCheckpointConfig.keep = 5",
       "--gin_file", b, "positional", "--gin.utils.SaveCheckpointConfig.dtype=bfloat16",
       "--gin.MODEL_DIR=/tmp/run", "--", "--gin.NOT_MINE=1"},
      config, "");
  EXPECT_EQ(rest, (std::vector<std::string>{"--run_mode=train", "positional", "--", "--gin.NOT_MINE=1"}));
  config.ParseString("__main__.train.model_dir = %MODEL_DIR\n", "uses.gin");  // a used macro
  config.Finalize();
  EXPECT_EQ(config.Query("t5x.utils.SaveCheckpointConfig", "period").AsInt(), 20);  // later file wins
  EXPECT_EQ(config.Query("t5x.utils.SaveCheckpointConfig", "keep").AsInt(), 5);     // bindings after files
  EXPECT_EQ(config.Query("t5x.utils.SaveCheckpointConfig", "dtype").AsString(), "bfloat16");
  EXPECT_EQ(config.MacroValue("MODEL_DIR")->AsString(), "/tmp/run");
}

TEST_F(FlagsTest, BindingsApplyInCommandLineOrder) {
  Config config(&registry_);
  ParseGinFlags({"--gin.t5x.utils.SaveCheckpointConfig.period=1",
                 "--gin_bindings=t5x.utils.SaveCheckpointConfig.period = 2",
                 "--gin.t5x.utils.SaveCheckpointConfig.period=3"},
                config, "");
  config.Finalize();
  EXPECT_EQ(config.Query("t5x.utils.SaveCheckpointConfig", "period").AsInt(), 3);
}

TEST_F(FlagsTest, QuotedAndStructuredFlagValues) {
  Config config(&registry_);
  ParseGinFlags({"--gin.MODEL_DIR=\"/quoted/dir\"", "--gin.TASK_FEATURE_LENGTHS={'inputs': 512, 'targets': 114}",
                 "--gin.RATE=1e-3", "--gin.NAME=c4_v220_span_corruption"},
                config, "");
  // Command-line macros must be used by some binding.
  config.ParseString("__main__.train.model_dir = %MODEL_DIR\n"
                     "train/t5x.utils.DatasetConfig.task_feature_lengths = %TASK_FEATURE_LENGTHS\n"
                     "t5x.utils.create_learning_rate_scheduler.base_learning_rate = %RATE\n"
                     "train/t5x.utils.DatasetConfig.mixture_or_task_name = %NAME\n",
                     "uses.gin");
  config.Finalize();
  EXPECT_EQ(config.MacroValue("MODEL_DIR")->AsString(), "/quoted/dir");
  EXPECT_EQ(config.MacroValue("TASK_FEATURE_LENGTHS")->AsDict()[1].second.AsInt(), 114);
  EXPECT_DOUBLE_EQ(config.MacroValue("RATE")->AsFloat(), 1e-3);
  EXPECT_EQ(config.MacroValue("NAME")->AsString(), "c4_v220_span_corruption");
}

TEST_F(FlagsTest, SearchPathsAndDefaultConfigDir) {
  fs::create_directories(dir_ / "extra");
  Write("extra/mine.gin", "t5x.utils.SaveCheckpointConfig.period = 77\n");
  Config config(&registry_);
  ParseGinFlags({"--gin_search_paths=/nonexistent," + (dir_ / "extra").string(), "--gin_file=mine.gin"}, config,
                "");
  config.Finalize();
  EXPECT_EQ(config.Query("t5x.utils.SaveCheckpointConfig", "period").AsInt(), 77);
  EXPECT_EQ(config.search_paths().size(), 2u);

  // The repo's configs/ folder is searched by default.
  Config stock(&registry_);
  ParseGinFlags({"--gin_file=models/t5_1_1/tiny.gin", "--gin.DROPOUT_RATE=0.0"}, stock);
  stock.Finalize();
  EXPECT_EQ(stock.Query("t5x.examples.t5.network.T5Config", "emb_dim").AsInt(), 128);
  EXPECT_EQ(stock.search_paths().back(), DefaultConfigDir());
}

TEST_F(FlagsTest, Errors) {
  Config config(&registry_);
  EXPECT_EQ(ErrorOf([&] { ParseGinFlags({"--gin.MODEL_DIR"}, config, ""); }),
            "flag '--gin.MODEL_DIR' has no '=': write --gin.MODEL_DIR=<value>");
  EXPECT_EQ(ErrorOf([&] { ParseGinFlags({"--gin_file"}, config, ""); }),
            "flag --gin_file needs a value (--gin_file=<value>)");
  EXPECT_EQ(ErrorOf([&] { ParseGinFlags({"--gin.=3"}, config, ""); }),
            "flag '--gin.=3' names nothing: write --gin.NAME=<value>");
  EXPECT_NE(ErrorOf([&] { ParseGinFlags({"--gin_file=does/not/exist.gin"}, config, ""); })
                .find("gin file 'does/not/exist.gin' not found"),
            std::string::npos);
  Config c2(&registry_);
  ParseGinFlags({"--gin.t5x.utils.SaveCheckpointConfig.period=soon"}, c2, "");
  EXPECT_NE(ErrorOf([&] { c2.Finalize(); })
                .find("--gin.t5x.utils.SaveCheckpointConfig.period flag, column 1: expected a value"),
            std::string::npos);
  Config c3(&registry_);
  ParseGinFlags({"--gin.utils.SaveCheckpointConfig.perod=3"}, c3, "");
  EXPECT_EQ(ErrorOf([&] { c3.Finalize(); }),
            "--gin.utils.SaveCheckpointConfig.perod flag: unknown parameter 'perod' of "
            "'t5x.utils.SaveCheckpointConfig' (in binding 'utils.SaveCheckpointConfig.perod'); did you mean 'period'?");
}

}  // namespace
}  // namespace t5xx::gin
