// seqio.CacheDatasetPlaceholder and seqio.mixing_rate_num_examples in gin:
// the placeholder in seqio.Task.preprocessors sets the task's CacheStep,
// every misuse is one error naming its gin file:line, and the rate reads the
// cache's stats. The rates start from tests/testdata/seqio_cache/
// interop_cached_upper/stats.train.json, written by seqio 0.0.19's
// cache_tasks ("examples": 64); the expected values are hand arithmetic.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "t5xx/config/config.h"
#include "t5xx/data/cache/task_cache.h"
#include "t5xx/seqio_gin/seqio_gin.h"
#include "test_util.h"

namespace t5xx::seqio_gin {
namespace {

namespace fs = std::filesystem;

class CachePlaceholderGinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterSeqioConfigurables(registry_);
    dir_ = fs::temp_directory_path() /
           ("t5xx_cache_gin_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "train.txt") << "ab\nc\n";
    seqio::SetGlobalCacheDirs({std::string(T5XX_SOURCE_DIR) + "/tests/testdata/seqio_cache"});
  }
  void TearDown() override {
    fs::remove_all(dir_);
    seqio::SetGlobalCacheDirs({});
  }

  // Each call starts from empty registries.
  GinTaskNames Register(const std::string& gin) {
    tasks_.Clear();
    mixtures_.Clear();
    config_ = std::make_unique<gin::Config>(&registry_);
    config_->ParseString(gin, "tasks.gin");
    config_->Finalize({"t5xx.seqio.register"});
    return RegisterGinTasks(*config_, {}, tasks_, mixtures_);
  }

  // Task `name` over train.txt; its preprocessors binding is line 4 of the
  // block.
  std::string TaskGin(const std::string& name, const std::string& preprocessors) {
    return name + "/seqio.Task.name = '" + name + "'\n" + name +
           "/seqio.Task.source = @seqio.TextLineDataSource()\n" + name +
           "/seqio.TextLineDataSource.split_to_filepattern = {'train': '" +
           (dir_ / "train.txt").string() + "'}\n" + name + "/seqio.Task.preprocessors = " +
           preprocessors + "\n" + name +
           "/seqio.Task.output_features = {'targets': @seqio.Feature()}\n" + name +
           "/seqio.Feature.vocabulary = @seqio.ByteVocabulary()\n"
           "seqio.preprocessors.rekey.key_map = {'targets': 'text'}\n";
  }
  std::string RegisterTask(const std::string& name) {
    return "t5xx.seqio.register.tasks = [@" + name + "/seqio.Task()]\n";
  }

  gin::Registry registry_;
  std::unique_ptr<gin::Config> config_;
  seqio::TaskRegistry tasks_;
  seqio::MixtureRegistry mixtures_;
  fs::path dir_;
};

constexpr char kCached[] =
    "[@seqio.preprocessors.rekey, @seqio.preprocessors.tokenize, "
    "@seqio.CacheDatasetPlaceholder(), @seqio.preprocessors.append_eos]";

TEST_F(CachePlaceholderGinTest, PlaceholderSetsTheCacheStep) {
  Register(TaskGin("t", kCached) + RegisterTask("t"));
  seqio::TaskPtr t = tasks_.Get("t");
  ASSERT_TRUE(t->supports_caching());
  EXPECT_EQ(t->cache_step()->index, 2u);
  EXPECT_FALSE(t->requires_caching());
  EXPECT_EQ(t->preprocessors().size(), 3u);  // the placeholder is not a step
  // On the fly the placeholder changes nothing: "ab" -> 97 + 3, 98 + 3, EOS.
  auto ds = t->GetDataset({{"targets", 8}}, "train", false);
  EXPECT_EQ(std::get<seqio::Tokens>(ds->Next()->at("targets")), (seqio::Tokens{100, 101, 1}));
}

TEST_F(CachePlaceholderGinTest, RequiredBinding) {
  Register(TaskGin("t", kCached) + "t/seqio.CacheDatasetPlaceholder.required = True\n" +
           RegisterTask("t"));
  EXPECT_TRUE(tasks_.Get("t")->requires_caching());
  EXPECT_ERROR_CONTAINS(tasks_.Get("t")->GetDataset({}, "train", false),
                        "task 't' requires caching");
}

TEST_F(CachePlaceholderGinTest, MisusesNameTheBinding) {
  EXPECT_ERROR_CONTAINS(
      Register(TaskGin("t", "[@seqio.CacheDatasetPlaceholder(), @seqio.preprocessors.rekey, "
                            "@seqio.CacheDatasetPlaceholder()]") +
               RegisterTask("t")),
      "seqio.CacheDatasetPlaceholder may appear at most once in the preprocessors, found entry "
      "0 (seqio.CacheDatasetPlaceholder, bound at tasks.gin:4:");
  const std::string msg = ::t5xx::testing::ErrorOf([&] {
    Register(TaskGin("t", "[@seqio.preprocessors.rekey, @seqio.preprocessors.tokenize, "
                          "@seqio.preprocessors.append_eos_after_trim, "
                          "@seqio.CacheDatasetPlaceholder()]") +
             RegisterTask("t"));
  });
  EXPECT_EQ(msg.rfind("tasks.gin:4:", 0), 0u) << msg;
  EXPECT_NE(msg.find("task 't': preprocessors entry 2 (seqio.preprocessors.append_eos_after_trim, "
                     "bound at tasks.gin:4:"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("takes sequence_length but comes before seqio.CacheDatasetPlaceholder"),
            std::string::npos)
      << msg;
  EXPECT_ERROR_CONTAINS(
      Register(TaskGin("t", "[@seqio.CacheDatasetPlaceholder, @seqio.preprocessors.rekey]") +
               RegisterTask("t")),
      "write @seqio.CacheDatasetPlaceholder() with parentheses");
  EXPECT_ERROR_CONTAINS(
      Register(TaskGin("t", kCached) +
               "t/seqio.CacheDatasetPlaceholder.file_shuffle_buffer_size = 16\n" +
               RegisterTask("t")),
      "tasks.gin:8");  // the binding's own line
  EXPECT_ERROR_CONTAINS(
      Register(TaskGin("t", kCached) +
               "t/seqio.TextLineDataSource.caching_permitted = False\n" + RegisterTask("t")),
      "its data source forbids caching (caching_permitted=False)");
}

// seqio's Mixture calls its rate functions later, outside any gin scope: a
// bare @seqio.mixing_rate_num_examples takes unscoped bindings; a scoped
// reference @m/... runs in scope m (gin's rule, checked against gin-config
// by tests/config/gin_oracle_test.py).
TEST_F(CachePlaceholderGinTest, MixingRateNumExamples) {
  // interop_cached_upper has 64 examples in its seqio-written cache.
  Register(TaskGin("interop_cached_upper", kCached) + TaskGin("u", kCached) +
           "m/seqio.Mixture.name = 'm'\n"
           "m/seqio.Mixture.tasks = ['interop_cached_upper', ('u', 14)]\n"
           "m/seqio.Mixture.default_rate = @m/seqio.mixing_rate_num_examples\n"
           "m/seqio.mixing_rate_num_examples.maximum = 50\n"
           "t5xx.seqio.register.tasks = [@interop_cached_upper/seqio.Task(), @u/seqio.Task()]\n"
           "t5xx.seqio.register.mixtures = [@m/seqio.Mixture()]\n");
  seqio::MixturePtr m = mixtures_.Get("m");
  const seqio::Task& cached = *tasks_.Get("interop_cached_upper");
  EXPECT_DOUBLE_EQ(m->GetRate(cached), 50.0);  // min(64 * 1.0, 50)
  EXPECT_DOUBLE_EQ(m->TotalRate(), 64.0);      // 50 + 14
}

TEST_F(CachePlaceholderGinTest, MixingRateAsAnEntryRateWithTemperature) {
  Register(TaskGin("interop_cached_upper", kCached) +
           "m/seqio.Mixture.name = 'm'\n"
           "m/seqio.Mixture.tasks = [('interop_cached_upper', @seqio.mixing_rate_num_examples)]\n"
           "seqio.mixing_rate_num_examples.temperature = 2.0\n"
           "seqio.mixing_rate_num_examples.scale = 4\n"
           "t5xx.seqio.register.tasks = [@interop_cached_upper/seqio.Task()]\n"
           "t5xx.seqio.register.mixtures = [@m/seqio.Mixture()]\n");
  // (64 * 4) ** (1 / 2) = 16.
  EXPECT_DOUBLE_EQ(mixtures_.Get("m")->GetRate(*tasks_.Get("interop_cached_upper")), 16.0);
}

TEST_F(CachePlaceholderGinTest, MixingRateMisuses) {
  const std::string task = TaskGin("interop_cached_upper", kCached) +
                           "t5xx.seqio.register.tasks = [@interop_cached_upper/seqio.Task()]\n"
                           "t5xx.seqio.register.mixtures = [@m/seqio.Mixture()]\n"
                           "m/seqio.Mixture.name = 'm'\n"
                           "m/seqio.Mixture.tasks = ['interop_cached_upper']\n";
  EXPECT_ERROR_CONTAINS(
      Register(task + "m/seqio.Mixture.default_rate = @seqio.mixing_rate_num_examples()\n"),
      "write @seqio.mixing_rate_num_examples without \"()\"");
  EXPECT_ERROR_CONTAINS(Register(task + "m/seqio.Mixture.default_rate = 'many'\n"),
                        "tasks.gin:12:");
  EXPECT_ERROR_CONTAINS(
      Register(task + "m/seqio.Mixture.default_rate = @r/seqio.mixing_rate_num_examples\n"
                      "r/seqio.mixing_rate_num_examples.temperature = 0.0\n"),
      "temperature must be a finite number > 0");
}

}  // namespace
}  // namespace t5xx::seqio_gin
