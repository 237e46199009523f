// The gin-to-seqio bridge: tasks and mixtures written in gin become seqio
// objects whose examples are what the bindings say, and every bad binding
// is one error naming its file:line. Expected token ids are hand arithmetic:
// seqio's ByteVocabulary maps byte b to b + 3 (0 pad, 1 EOS, 2 UNK).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <variant>

#include "t5xx/config/config.h"
#include "t5xx/seqio_gin/seqio_gin.h"
#include "test_util.h"

namespace t5xx::seqio_gin {
namespace {

namespace fs = std::filesystem;

class SeqioGinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterSeqioConfigurables(registry_);
    dir_ = fs::temp_directory_path() /
           ("t5xx_seqio_gin_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "train.txt") << "ab\nc\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Parses `gin` (as file "tasks.gin"), finalizes for the task roots and
  // registers its tasks and mixtures into this test's registries.
  GinTaskNames Register(const std::string& gin, GinTaskOptions options = {}) {
    config_ = std::make_unique<gin::Config>(&registry_);
    config_->ParseString(gin, "tasks.gin");
    config_->Finalize({"t5xx.seqio.register"});
    return RegisterGinTasks(*config_, options, tasks_, mixtures_);
  }

  std::string TaskGin(const std::string& name, const std::string& preprocessors) {
    return name + "/seqio.Task.name = '" + name + "'\n" + name +
           "/seqio.Task.source = @seqio.TextLineDataSource()\n" + name +
           "/seqio.TextLineDataSource.split_to_filepattern = {'train': '" +
           (dir_ / "train.txt").string() + "'}\n" + name + "/seqio.Task.preprocessors = " +
           preprocessors + "\n" + name +
           "/seqio.Task.output_features = {'targets': @seqio.Feature()}\n" + name +
           "/seqio.Feature.vocabulary = @seqio.ByteVocabulary()\n";
  }

  gin::Registry registry_;
  std::unique_ptr<gin::Config> config_;
  seqio::TaskRegistry tasks_;
  seqio::MixtureRegistry mixtures_;
  fs::path dir_;
};

constexpr char kPreprocessors[] =
    "[@seqio.preprocessors.rekey, @seqio.preprocessors.tokenize, "
    "@seqio.preprocessors.append_eos]\n"
    "seqio.preprocessors.rekey.key_map = {'targets': 'text'}";

TEST_F(SeqioGinTest, BuildsTheTaskTheBindingsDescribe) {
  GinTaskNames names = Register(TaskGin("t", kPreprocessors) +
                                "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n");
  ASSERT_EQ(names.tasks, std::vector<std::string>{"t"});
  ASSERT_TRUE(tasks_.Has("t"));
  seqio::TaskPtr task = tasks_.Get("t");
  EXPECT_EQ(task->splits(), std::vector<std::string>{"train"});
  EXPECT_EQ(task->output_features().at("targets").vocabulary->vocab_size(), 259);
  seqio::DatasetPtr ds = task->GetDataset({{"targets", 8}}, "train", /*shuffle=*/false);
  auto first = ds->Next();
  ASSERT_TRUE(first.has_value());
  // "ab" -> 'a' 97 + 3, 'b' 98 + 3, then EOS 1.
  EXPECT_EQ(std::get<seqio::Tokens>(first->at("targets")), (seqio::Tokens{100, 101, 1}));
  auto second = ds->Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(std::get<seqio::Tokens>(second->at("targets")), (seqio::Tokens{102, 1}));
  EXPECT_FALSE(ds->Next().has_value());
}

TEST_F(SeqioGinTest, BuildsMixturesOverGinTasks) {
  GinTaskNames names = Register(
      TaskGin("t1", kPreprocessors) + TaskGin("t2", kPreprocessors) +
      "m/seqio.Mixture.name = 'm'\n"
      "m/seqio.Mixture.tasks = [('t1', 1.0), ('t2', 3.0)]\n"
      "t5xx.seqio.register.tasks = [@t1/seqio.Task(), @t2/seqio.Task()]\n"
      "t5xx.seqio.register.mixtures = [@m/seqio.Mixture()]\n");
  EXPECT_EQ(names.tasks, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_EQ(names.mixtures, std::vector<std::string>{"m"});
  ASSERT_TRUE(mixtures_.Has("m"));
  EXPECT_EQ(mixtures_.Get("m")->tasks().size(), 2u);
}

TEST_F(SeqioGinTest, UnknownSourceKindNamesTheBinding) {
  const std::string gin =
      "t/seqio.Task.name = 't'\n"
      "t/seqio.Task.source = @seqio.ByteVocabulary()\n"
      "t/seqio.Task.output_features = {'targets': @seqio.Feature()}\n"
      "t/seqio.Feature.vocabulary = @seqio.ByteVocabulary()\n"
      "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n";
  EXPECT_ERROR_CONTAINS(Register(gin), "tasks.gin:2");
  EXPECT_ERROR_CONTAINS(Register(gin), "@seqio.ByteVocabulary is not a data source");
}

TEST_F(SeqioGinTest, UnknownPreprocessorSuggestsTheClosest) {
  // gin itself finds a name that no configurable has.
  EXPECT_ERROR_CONTAINS(
      Register(TaskGin("t", "[@seqio.preprocessors.tokenise]") +
               "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n"),
      "tasks.gin:4:31: unknown configurable 'seqio.preprocessors.tokenise'; did you mean "
      "'seqio.preprocessors.tokenize'?");
  // The bridge finds a configurable that is no preprocessor.
  EXPECT_ERROR_CONTAINS(Register(TaskGin("t", "[@seqio.ByteVocabulary]") +
                                 "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n"),
                        "tasks.gin:4:31: @seqio.ByteVocabulary is not a preprocessor");
}

TEST_F(SeqioGinTest, RefusesDuplicateNames) {
  EXPECT_ERROR_CONTAINS(
      Register(TaskGin("t", kPreprocessors) + TaskGin("u", kPreprocessors) +
               "u/seqio.Task.name = 't'\n"
               "t5xx.seqio.register.tasks = [@t/seqio.Task(), @u/seqio.Task()]\n"),
      "a task or mixture named 't' is already registered");
}

TEST_F(SeqioGinTest, RefusesTheDemoTaskNames) {
  GinTaskOptions options;
  options.demo_task_names = {"t"};
  EXPECT_ERROR_CONTAINS(Register(TaskGin("t", kPreprocessors) +
                                     "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n",
                                 options),
                        "the task name 't' is t5xx's demo task");
}

TEST_F(SeqioGinTest, BadSourceArgumentNamesTheSource) {
  EXPECT_ERROR_CONTAINS(Register(TaskGin("t", kPreprocessors) +
                                 "t/seqio.TextLineDataSource.skip_header_lines = -1\n"
                                 "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n"),
                        "must be in [0, 2147483647], got -1");
}

TEST_F(SeqioGinTest, MixtureEntryMustBeANameOrAPair) {
  EXPECT_ERROR_CONTAINS(Register(TaskGin("t", kPreprocessors) +
                                 "m/seqio.Mixture.name = 'm'\n"
                                 "m/seqio.Mixture.tasks = [('t', 1.0, 2)]\n"
                                 "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n"
                                 "t5xx.seqio.register.mixtures = [@m/seqio.Mixture()]\n"),
                        "a mixture entry is a name or a (name, rate) tuple");
}

}  // namespace
}  // namespace t5xx::seqio_gin
