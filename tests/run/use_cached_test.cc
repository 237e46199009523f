// t5x's DatasetConfig.use_cached (USE_CACHED_TASKS) in a run: the caches
// are checked with the other configuration checks, before MODEL_DIR is
// written or parameters exist, and the batches come from the cache. The
// cache is written here by hand in seqio's layout (info/stats.<split>.json,
// <split>.tfrecord-00000-of-00001 of tf.Examples, COMPLETED); expected ids
// are hand arithmetic: the cached ids, then EOS (1) from the post-cache
// append_eos.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/data/cache/task_cache.h"
#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/sources/tf_example.h"
#include "t5xx/data/sources/tfrecord_file.h"
#include "t5xx/run/datasets.h"
#include "t5xx/run/model.h"
#include "t5xx/run/train.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/run/validation.h"
#include "test_util.h"

namespace t5xx::run {
namespace {

namespace fs = std::filesystem;

class UseCachedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("t5xx_use_cached_" + std::to_string(::getpid()) + "_" +
                                        name_);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    seqio::SetGlobalCacheDirs({});
  }
  void TearDown() override {
    fs::remove_all(dir_);
    seqio::TaskRegistry::Global().Remove(Task());
    seqio::SetGlobalCacheDirs({});
  }
  std::string Task() const { return "cached_" + name_; }

  // T5.1.1 tiny over a gin task whose source file does not exist (only a
  // cache can feed it): rekey, tokenize, <placeholder>, append_eos.
  LoadedTrainConfig Load(const std::string& extra, const std::string& placeholder =
                                                       "@seqio.CacheDatasetPlaceholder(), ") {
    seqio::TaskRegistry::Global().Remove(Task());
    LoadedTrainConfig loaded = NewTrainConfig();
    loaded.config->AddSearchPath(std::string(T5XX_SOURCE_DIR) + "/configs");
    loaded.config->ParseString(
        "include 'models/t5_1_1/tiny.gin'\n"
        "include 'runs/pretrain.gin'\n"
        "MODEL_DIR = '" + (dir_ / "model").string() + "'\n"
        "MIXTURE_OR_TASK_NAME = '" + Task() + "'\n"
        "TASK_FEATURE_LENGTHS = {'inputs': 8, 'targets': 8}\n"
        "TRAIN_STEPS = 2\n"
        "BATCH_SIZE = 2\n"
        "DROPOUT_RATE = 0.0\n"
        "t/seqio.Task.name = '" + Task() + "'\n"
        "t/seqio.Task.source = @seqio.TextLineDataSource()\n"
        "t/seqio.TextLineDataSource.split_to_filepattern = {'train': '" +
            (dir_ / "absent.txt").string() + "'}\n"
        "t/seqio.Task.preprocessors = [@seqio.preprocessors.rekey, "
        "@seqio.preprocessors.tokenize, " + placeholder + "@seqio.preprocessors.append_eos]\n"
        "seqio.preprocessors.rekey.key_map = {'inputs': 'text', 'targets': 'text'}\n"
        "t/seqio.Task.output_features = {'inputs': @seqio.Feature(), "
        "'targets': @seqio.Feature()}\n"
        "t/seqio.Feature.vocabulary = @seqio.ByteVocabulary()\n"
        "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n" + extra,
        "use_cached_test.gin");
    RunOptions options;
    options.data_dir = dir_.string();
    std::ostringstream notes;
    LoadTrainConfig(loaded, options, "test", notes);
    return loaded;
  }

  // <root>/<task>/ holding split 'train': 4 examples whose inputs and
  // targets are {10 + i, 20 + i}, one shard.
  void WriteCache(const fs::path& root) {
    const fs::path dir = root / Task();
    fs::create_directories(dir);
    std::vector<std::string> records;
    for (int i = 0; i < 4; ++i) {
      const seqio::Tokens ids{10 + i, 20 + i};
      records.push_back(seqio::SerializeTFExample({{"inputs", ids}, {"targets", ids}}));
    }
    seqio::WriteTFRecordFile((dir / "train.tfrecord-00000-of-00001").string(), records);
    const nlohmann::json feature = {{"dtype", "int32"}, {"shape", {nullptr}}};
    std::ofstream(dir / "info.train.json")
        << nlohmann::json{{"features", {{"inputs", feature}, {"targets", feature}}},
                          {"num_shards", 1}}
               .dump();
    std::ofstream(dir / "stats.train.json")
        << nlohmann::json{{"examples", 4}, {"inputs_tokens", 8}, {"targets_tokens", 8}}.dump();
    std::ofstream(dir / "COMPLETED");
  }

  std::string name_;
  fs::path dir_;
};

TEST_F(UseCachedTest, MissingCacheFailsUpFront) {
  const LoadedTrainConfig loaded = Load("USE_CACHED_TASKS = True\n");
  EXPECT_TRUE(loaded.setup.train_dataset.use_cached);
  const std::string msg = testing::ErrorOf([&] { ValidateTrainRun(loaded); });
  EXPECT_NE(msg.find("the train dataset (train/utils.DatasetConfig: task '" + Task() +
                     "', split 'train'): task '" + Task() +
                     "' is read from its cache (use_cached=True) but has none: no cache "
                     "directories were given; build it with `t5xx cache_tasks --tasks=" +
                     Task() + " --output_cache_dir=<dir>` (with this run's --gin_file flags "
                              "when the task is defined in gin) and pass that directory with "
                              "--seqio_additional_cache_dirs=<dir> (or --cache_dir=<dir>)"),
            std::string::npos)
      << msg;
  // The absent source file is not the complaint: a cached read needs none.
  EXPECT_EQ(msg.find("absent.txt"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir_ / "model"));
  // A directory that lacks the cache is named.
  seqio::SetGlobalCacheDirs({(dir_ / "caches").string()});
  EXPECT_ERROR_CONTAINS(ValidateTrainRun(loaded),
                        "no COMPLETED cache in " + (dir_ / "caches" / Task()).string());
}

TEST_F(UseCachedTest, BatchesComeFromTheCache) {
  WriteCache(dir_ / "caches");
  seqio::SetGlobalCacheDirs({(dir_ / "caches").string()});
  const LoadedTrainConfig loaded = Load("USE_CACHED_TASKS = True\n");
  auto model = CreateModel(loaded.setup.model);
  // The dataset checks of ValidateTrainRun pass (the absent source file is
  // never listed); its other checks (the byte vocabulary is not the model's)
  // are not this test's.
  EXPECT_NO_THROW(CheckDataset(loaded.setup.train_dataset, "train", *model));
  DatasetConfig d = loaded.setup.train_dataset;
  d.shuffle = false;
  d.pack = false;
  trainer::BatchFn batches = GetBatches(d, "train", *model, 1, 0, {});
  auto b = batches();
  ASSERT_TRUE(b.has_value());
  // Cached {10, 20} and {11, 21}, then append_eos's 1, padded to 8.
  const at::Tensor inputs = b->at("encoder_input_tokens");
  ASSERT_EQ(inputs.dim(), 2);
  ASSERT_EQ(inputs.size(0), 2);
  ASSERT_EQ(inputs.size(1), 8);
  const at::Tensor row0 = inputs[0].to(at::kLong).contiguous();
  const at::Tensor row1 = inputs[1].to(at::kLong).contiguous();
  EXPECT_EQ(std::vector<int64_t>(row0.data_ptr<int64_t>(), row0.data_ptr<int64_t>() + 8),
            (std::vector<int64_t>{10, 20, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(std::vector<int64_t>(row1.data_ptr<int64_t>(), row1.data_ptr<int64_t>() + 8),
            (std::vector<int64_t>{11, 21, 1, 0, 0, 0, 0, 0}));
}

TEST_F(UseCachedTest, RequiredCacheWithoutUseCachedFailsUpFront) {
  WriteCache(dir_ / "caches");
  seqio::SetGlobalCacheDirs({(dir_ / "caches").string()});
  const LoadedTrainConfig loaded =
      Load("t/seqio.CacheDatasetPlaceholder.required = True\n");  // USE_CACHED_TASKS False
  EXPECT_ERROR_CONTAINS(ValidateTrainRun(loaded),
                        "task '" + Task() + "' requires caching (its "
                        "seqio.CacheDatasetPlaceholder has required=True) but was read with "
                        "use_cached=False");
  EXPECT_FALSE(fs::exists(dir_ / "model"));
}

TEST_F(UseCachedTest, UseCachedWithoutPlaceholderReadsTheSource) {
  // seqio: a warning, then the task is preprocessed on the fly, so its
  // (absent) source file is what fails.
  const LoadedTrainConfig loaded = Load("USE_CACHED_TASKS = True\n", /*placeholder=*/"");
  EXPECT_ERROR_CONTAINS(ValidateTrainRun(loaded), "absent.txt");
}

}  // namespace
}  // namespace t5xx::run
