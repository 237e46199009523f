// The run layer, below the CLI: a train configuration read from t5x's stock
// gin files, validated (every failure in one error), and prepared (model,
// parameters, partitioner, trainer, first batches, MODEL_DIR). Expected
// numbers are hand arithmetic from the gin files written here and from
// configs/models/t5_1_1/tiny.gin.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/feature_converters/feature_converters.h"
#include "t5xx/models/decoder_only_model.h"
#include "t5xx/run/datasets.h"
#include "t5xx/run/memory.h"
#include "t5xx/run/model.h"
#include "t5xx/run/model_dir.h"
#include "t5xx/run/restore.h"
#include "t5xx/run/train.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/run/validation.h"
#include "test_util.h"

namespace t5xx::run {
namespace {

namespace fs = std::filesystem;

class RunLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("t5xx_run_" + std::to_string(::getpid()) + "_" + name_);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "four.txt") << "one\ntwo\nthree\nfour\n";
    std::ofstream(dir_ / "empty.txt");
  }
  void TearDown() override {
    fs::remove_all(dir_);
    seqio::TaskRegistry::Global().Remove("task_" + name_);
  }

  // T5.1.1 tiny over a gin task (task name unique to the test: tasks go to
  // seqio's global registry) reading `file` with byte ids, plus `extra`.
  LoadedTrainConfig Load(const std::string& file, const std::string& extra = "",
                         const std::string& model = "models/t5_1_1/tiny.gin") {
    seqio::TaskRegistry::Global().Remove("task_" + name_);  // a test may load twice
    LoadedTrainConfig loaded = NewTrainConfig();
    loaded.config->AddSearchPath(std::string(T5XX_SOURCE_DIR) + "/configs");
    const std::string task = "task_" + name_;
    loaded.config->ParseString(
        "include '" + model + "'\n"
        "include 'runs/pretrain.gin'\n"
        "MODEL_DIR = '" + (dir_ / "model").string() + "'\n"
        "MIXTURE_OR_TASK_NAME = '" + task + "'\n"
        "TASK_FEATURE_LENGTHS = {'inputs': 8, 'targets': 8}\n"
        "TRAIN_STEPS = 2\n"
        "BATCH_SIZE = 2\n"
        "DROPOUT_RATE = 0.0\n"
        "t/seqio.Task.name = '" + task + "'\n"
        "t/seqio.Task.source = @seqio.TextLineDataSource()\n"
        "t/seqio.TextLineDataSource.split_to_filepattern = {'train': '" +
            (dir_ / file).string() + "', 'validation': '" + (dir_ / file).string() + "'}\n"
        "t/seqio.Task.preprocessors = [@seqio.preprocessors.rekey, "
        "@seqio.preprocessors.tokenize, @seqio.preprocessors.append_eos]\n"
        "seqio.preprocessors.rekey.key_map = {'inputs': 'text', 'targets': 'text'}\n"
        "t/seqio.Task.output_features = {'inputs': @seqio.Feature(), "
        "'targets': @seqio.Feature()}\n"
        "t/seqio.Feature.vocabulary = @seqio.ByteVocabulary()\n"
        "t5xx.seqio.register.tasks = [@t/seqio.Task()]\n" + extra,
        "run_layer_test.gin");
    RunOptions options;
    options.data_dir = dir_.string();
    std::ostringstream notes;
    LoadTrainConfig(loaded, options, "test", notes);
    return loaded;
  }

  std::string name_;
  fs::path dir_;
};

TEST_F(RunLayerTest, ReadsTheStockConfigs) {
  const LoadedTrainConfig loaded = Load("four.txt");
  const TrainSetup& s = loaded.setup;
  // configs/models/t5_1_1/tiny.gin.
  EXPECT_EQ(s.model.kind, ModelKind::kEncoderDecoder);
  EXPECT_EQ(s.model.t5_config.emb_dim, 128);
  EXPECT_EQ(s.model.t5_config.num_heads, 4);
  EXPECT_EQ(s.model.t5_config.num_encoder_layers, 2);
  EXPECT_EQ(s.model.t5_config.mlp_dim, 256);
  // t5x's defaults: Adafactor decay_rate 0.8, no microbatches.
  EXPECT_EQ(s.optimizer.kind, optim::OptimizerConfig::Kind::kAdafactor);
  EXPECT_DOUBLE_EQ(s.optimizer.adafactor.decay_rate, 0.8);
  EXPECT_FALSE(s.num_microbatches.has_value());
  EXPECT_EQ(s.train_dataset.batch_size, 2);
  EXPECT_EQ(s.train_dataset.task_feature_lengths.at("targets"), 8);
  EXPECT_EQ(s.total_steps, 2);
}

TEST_F(RunLayerTest, ReaderErrorsNameTheBinding) {
  EXPECT_ERROR_CONTAINS(Load("four.txt", "TRAIN_STEPS = -1\n"), "must be >= 0, got -1");
  EXPECT_ERROR_CONTAINS(Load("four.txt", "BATCH_SIZE = 3\ntrainer.Trainer.num_microbatches = 2\n"),
                        "does not divide the train batch size 3");
  const std::string restore = "utils.CheckpointConfig.restore = @utils.RestoreCheckpointConfig()\n";
  EXPECT_ERROR_CONTAINS(Load("four.txt", restore), "utils.RestoreCheckpointConfig.path");
  EXPECT_ERROR_CONTAINS(
      Load("four.txt", restore + "utils.RestoreCheckpointConfig.path = '/x'\n"
                                 "utils.RestoreCheckpointConfig.mode = 'newest'\n"),
      "must be 'specific', 'latest' or 'all'");
  EXPECT_ERROR_CONTAINS(
      Load("four.txt", restore + "utils.RestoreCheckpointConfig.path = '/x'\n"
                                 "utils.RestoreCheckpointConfig.assignment_map = [('a', 'b', 'c')]\n"),
      "expected a list of (regex, replacement or None) pairs");
  EXPECT_ERROR_CONTAINS(Load("four.txt", "utils.SaveCheckpointConfig.dtype = 'float16'\n"),
                        "must be None, 'float32' or 'bfloat16'");
}

// t5x's other T5 families as stock configs (configs/models/<family>/),
// with t5x's dimensions (t5x/examples/t5/<family>/tiny.gin: emb 8, 4 heads
// of 3, MLP 16, 2 + 2 layers).
TEST_F(RunLayerTest, ReadsTheFamilyConfigs) {
  const LoadedTrainConfig t5_1_0 = Load("four.txt", "", "models/t5_1_0/tiny.gin");
  const models::T5Config& a = t5_1_0.setup.model.t5_config;
  EXPECT_EQ(a.mlp_activations, std::vector<std::string>{"relu"});
  EXPECT_TRUE(a.logits_via_embedding);
  EXPECT_EQ(std::vector<int64_t>({a.vocab_size, a.emb_dim, a.num_heads, a.head_dim, a.mlp_dim}),
            std::vector<int64_t>({32128, 8, 4, 3, 16}));
  EXPECT_EQ(t5_1_0.setup.model.output_vocabulary.sentencepiece_model_file,
            "gs://t5-data/vocabs/cc_all.32000.100extra/sentencepiece.model");
  const LoadedTrainConfig mt5 = Load("four.txt", "", "models/mt5/small.gin");
  EXPECT_EQ(mt5.setup.model.t5_config.vocab_size, 250112);
  EXPECT_EQ(mt5.setup.model.t5_config.mlp_dim, 1024);
  EXPECT_FALSE(mt5.setup.model.t5_config.logits_via_embedding);
  // ByT5: a byte vocabulary for the model, and the byte task fits it.
  const LoadedTrainConfig byt5 = Load("four.txt", "", "models/byt5/base.gin");
  const models::T5Config& b = byt5.setup.model.t5_config;
  EXPECT_EQ(std::vector<int64_t>({b.vocab_size, b.num_encoder_layers, b.num_decoder_layers,
                                  b.emb_dim, b.mlp_dim}),
            std::vector<int64_t>({384, 18, 6, 1536, 3968}));
  EXPECT_TRUE(byt5.setup.model.output_vocabulary.byte);
  const std::string task = byt5.setup.train_dataset.mixture_or_task_name;
  CheckVocabularies(byt5.setup.model, task, GetOutputFeatures(task, std::nullopt),
                    dir_.string());
  const LoadedTrainConfig other =
      // (The model's vocabulary is %VOCABULARY: evaluated in scope VOCABULARY.)
      Load("four.txt", "VOCABULARY/seqio.ByteVocabulary.extra_ids = 5\n", "models/byt5/tiny.gin");
  EXPECT_ERROR_CONTAINS(
      CheckVocabularies(other.setup.model, task, GetOutputFeatures(task, std::nullopt),
                        dir_.string()),
      "the model's vocabulary (seqio.ByteVocabulary, extra_ids = 5) is not the vocabulary of "
      "task '" + task + "' (seqio.ByteVocabulary, extra_ids = 0)");
}

// t5x's scalable_t5 network (umT5's) by its own gin names: a table per layer;
// scan_layers = True gives the stacked checkpoint layout (ModelConfig::
// scan_layout); param_scan_axis beyond a layer-norm scale's rank is refused.
TEST_F(RunLayerTest, ReadsTheScalableT5Network) {
  const auto model_gin = [&](const std::string& scan) {
    std::ofstream(dir_ / "scalable.gin") << R"(from __gin__ import dynamic_registration
import seqio
from t5x import adafactor
from t5x import models
from t5x.examples.scalable_t5 import network
VOCABULARY = @seqio.ByteVocabulary()
MODEL = @models.EncoderDecoderModel()
models.EncoderDecoderModel:
  module = @network.Transformer()
  input_vocabulary = %VOCABULARY
  output_vocabulary = %VOCABULARY
  optimizer_def = @adafactor.Adafactor()
network.Transformer.config = @network.T5Config()
network.T5Config:
  vocab_size = 384
  emb_dim = 8
  num_heads = 2
  num_encoder_layers = 2
  num_decoder_layers = 3
  head_dim = 4
  mlp_dim = 16
  mlp_activations = ('gelu', 'linear')
  dropout_rate = %DROPOUT_RATE
  remat_policy = 'minimal'
)" << scan;
    return (dir_ / "scalable.gin").string();
  };
  const LoadedTrainConfig loaded =
      Load("four.txt", "", model_gin("  scan_layers = False\n  param_scan_axis = 1\n"));
  const models::T5Config& c = loaded.setup.model.t5_config;
  EXPECT_TRUE(c.relpos_per_layer);
  EXPECT_EQ(c.remat_policy, "minimal");
  EXPECT_EQ(c.num_decoder_layers, 3);
  const models::ParamStore params = CreateModel(loaded.setup.model)->InitParams(0);
  EXPECT_EQ(params.GetParam("decoder.layers_2.relpos_bias.rel_embedding").value.sizes(),
            (std::vector<int64_t>{2, 32}));
  // t5x's default is scan_layers = True.
  EXPECT_TRUE(Load("four.txt", "", model_gin("")).setup.model.t5_config.scan_layers);
  const LoadedTrainConfig scanned = Load("four.txt", "", model_gin("  scan_layers = True\n"));
  EXPECT_TRUE(scanned.setup.model.t5_config.scan_layers);
  ASSERT_TRUE(scanned.setup.model.scan_layout().has_value());
  EXPECT_EQ(scanned.setup.model.scan_layout()->param_scan_axis, 1);
  EXPECT_EQ(scanned.setup.model.scan_layout()->num_heads, 2);
  EXPECT_ERROR_CONTAINS(
      Load("four.txt", "", model_gin("  scan_layers = True\n  param_scan_axis = 2\n")),
      "t5x.examples.scalable_t5.network.T5Config.param_scan_axis = 2 must be 0 or 1");
}

TEST_F(RunLayerTest, ValidationReportsEveryFailureAtOnce) {
  LoadedTrainConfig loaded = Load("four.txt");
  std::ofstream(dir_ / "model") << "a file, not a directory";
  // The task uses ByteVocabulary, not the model's SentencePiece vocabulary.
  const std::string msg = testing::ErrorOf([&] { ValidateTrainRun(loaded); });
  EXPECT_NE(msg.find("2 errors in the train configuration:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("exists and is not a directory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a SentencePieceVocabulary"), std::string::npos) << msg;
}

TEST_F(RunLayerTest, UnknownTaskSuggestsTheClosest) {
  LoadedTrainConfig loaded = Load("four.txt");
  EXPECT_ERROR_CONTAINS(GetOutputFeatures("task_UnknownTaskSuggestsTheClosesx", std::nullopt),
                        "no mixture or task named 'task_UnknownTaskSuggestsTheClosesx'; did you mean [task_UnknownTaskSuggestsTheClosest]?");
}

TEST_F(RunLayerTest, VocabularySizeMustCoverTheTask) {
  LoadedTrainConfig loaded = Load("four.txt", "network.T5Config.vocab_size = 200\n");
  const seqio::OutputFeatures features =
      GetOutputFeatures(loaded.setup.train_dataset.mixture_or_task_name, std::nullopt);
  // ByteVocabulary: 256 bytes + 3 special ids.
  EXPECT_ERROR_CONTAINS(CheckVocabularies(loaded.setup.model, "t", features, dir_.string()),
                        "uses a vocabulary of 259 ids but network.T5Config.vocab_size = 200");
}

TEST_F(RunLayerTest, ModelDirMayHoldCheckpointsAndMustBeADirectory) {
  CheckModelDir((dir_ / "new" / "run").string());  // creatable
  fs::create_directories(dir_ / "old" / "checkpoint_5");
  CheckModelDir((dir_ / "old").string());  // resumed from (run/restore.h)
  std::ofstream(dir_ / "afile") << "x";
  EXPECT_ERROR_CONTAINS(CheckModelDir((dir_ / "afile").string()),
                        "exists and is not a directory");
}

TEST_F(RunLayerTest, DatasetsReadThisProcessShard) {
  LoadedTrainConfig loaded = Load("four.txt");
  DatasetConfig d = loaded.setup.train_dataset;
  d.batch_size = 2;  // global: 1 example per shard and batch
  auto model = CreateModel(loaded.setup.model);
  // One file, two shards: every second example (seqio's fallback), so shard
  // 1 of 2 reads "two" and "four", one a batch.
  trainer::BatchFn batches = GetBatches(d, "train", *model, /*num_epochs=*/1, 0, {1, 2});
  // Byte ids: each byte + 3, then EOS 1, padding to 8. "two" -> 't' 119,
  // 'w' 122, 'o' 114; "four" -> 'f' 105, 'o' 114, 'u' 120, 'r' 117 (in
  // the shuffle's order).
  std::vector<std::vector<int64_t>> rows;
  for (int b = 0; b < 2; ++b) {
    auto batch = batches();
    ASSERT_TRUE(batch.has_value());
    const at::Tensor row = batch->at("decoder_target_tokens")[0].contiguous();
    ASSERT_EQ(row.size(0), 8);
    rows.emplace_back(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + 8);
  }
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<std::vector<int64_t>>{{105, 114, 120, 117, 1, 0, 0, 0},
                                                     {119, 122, 114, 1, 0, 0, 0, 0}}));
  EXPECT_FALSE(batches().has_value());
}

TEST_F(RunLayerTest, TrainingEvalBatchesAreStridedRowsOfTheGlobalBatch) {
  LoadedTrainConfig loaded = Load("four.txt");
  DatasetConfig d = loaded.setup.train_dataset;
  d.batch_size = 2;
  d.shuffle = false;
  d.pack = false;  // one example a row
  auto model = CreateModel(loaded.setup.model);
  // t5x reads train-eval data whole and keeps rows r % 2 == 0 of the global
  // batches ["one", "two"], ["three", "four"]: "one", then "three".
  trainer::BatchFn rows = GetTrainingEvalBatches(d, *model, /*num_epochs=*/1, 0, {0, 2});
  auto first = rows();
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->at("decoder_target_tokens").size(0), 1);
  EXPECT_EQ(first->at("decoder_target_tokens")[0][0].item<int64_t>(), 'o' + 3);
  auto second = rows();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->at("decoder_target_tokens")[0][0].item<int64_t>(), 't' + 3);
  EXPECT_EQ(second->at("decoder_target_tokens")[0][1].item<int64_t>(), 'h' + 3);
  EXPECT_FALSE(rows().has_value());
  // A global batch that does not split over the shards.
  d.batch_size = 3;
  EXPECT_ERROR_CONTAINS(GetBatches(d, "train", *model, 1, 0, {0, 2}),
                        "train/utils.DatasetConfig.batch_size = 3 does not divide by the data "
                        "axis size 2");
  EXPECT_ERROR_CONTAINS(GetTrainingEvalBatches(d, *model, 1, 0, {1, 2}),
                        "train_eval/utils.DatasetConfig.batch_size = 3 does not divide");
}

TEST_F(RunLayerTest, CheckDatasetNamesTheSplitToSet) {
  LoadedTrainConfig loaded = Load("four.txt");
  DatasetConfig d = loaded.setup.train_dataset;
  d.split = "test";
  auto model = CreateModel(loaded.setup.model);
  EXPECT_ERROR_CONTAINS(CheckDataset(d, "train", *model),
                        "has no split 'test' (its splits: 'train', 'validation'); set "
                        "train/utils.DatasetConfig.split");
}

TEST_F(RunLayerTest, TheModelOwnsItsFeatureConverter) {
  ModelConfig m;
  m.kind = ModelKind::kDecoderOnly;
  m.decoder_only_config.vocab_size = 300;
  m.decoder_only_config.emb_dim = 8;
  m.decoder_only_config.num_heads = 2;
  m.decoder_only_config.num_layers = 1;
  m.decoder_only_config.head_dim = 4;
  m.decoder_only_config.mlp_dim = 16;
  auto model = CreateModel(m);
  EXPECT_NE(dynamic_cast<seqio::PrefixLMFeatureConverter*>(
                model->CreateFeatureConverter(false, {{"inputs", 4}, {"targets", 6}}).get()),
            nullptr);
  EXPECT_NE(dynamic_cast<seqio::LMFeatureConverter*>(
                model->CreateFeatureConverter(false, {{"targets", 6}}).get()),
            nullptr);
  // The prefix-LM converter concatenates inputs and targets.
  EXPECT_EQ(model->ModelFeatureLengths({{"inputs", 4}, {"targets", 6}}).at("decoder_target_tokens"),
            10);
}

TEST_F(RunLayerTest, AnImpossibleModelIsRefusedBeforeAllocation) {
  LoadedTrainConfig loaded =
      Load("four.txt", "network.T5Config.emb_dim = 16000000\nnetwork.T5Config.mlp_dim = 16000000\n");
  auto model = CreateModel(loaded.setup.model);
  const std::optional<std::string> problem = MemoryProblemBeforeAllocation(loaded.setup, *model);
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("the memory plan needs"), std::string::npos) << *problem;
}

// A run that does not fit is refused naming the layouts that would: the
// plan of one process at half the memory it needs finds layouts on more
// processes, each with a peak under that memory.
TEST_F(RunLayerTest, ARefusalNamesTheLayoutsThatFit) {
  const LoadedTrainConfig loaded = Load("four.txt");
  const TrainSetup& s = loaded.setup;
  auto model = CreateModel(s.model);
  const std::vector<models::ParamSpec> specs = model->ParamSpecs();
  const models::MemoryPlan one = PlanMemory(s, *model, specs, {1, 1}, s.logical_axis_rules);
  const models::MemoryPlan zero3 = PlanMemory(s, *model, specs, {2, 1},
                                              partitioning::StandardLogicalAxisRules(1, 2));
  // Every T5 parameter but the relative position tables has 'embed'.
  EXPECT_LT(zero3.parameters, one.parameters * 51 / 100);
  EXPECT_LT(zero3.peak(), one.peak());
  const int64_t available = (one.peak() + zero3.peak()) / 2;
  const std::vector<LayoutPlan> fit = LayoutsThatFit(s, *model, specs, 1, available, 0);
  ASSERT_FALSE(fit.empty());
  for (const LayoutPlan& l : fit) {
    EXPECT_GT(l.mesh.size(), 1);
    EXPECT_LE(l.plan.peak(), available) << l.Describe();
  }
  try {
    CheckMemoryPlan(one, available, 0, fit);
    ADD_FAILURE() << "a plan above the memory available was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("these layouts would fit -- "), std::string::npos) << m;
    EXPECT_NE(m.find(fit.front().Describe()), std::string::npos) << m;
  }
  EXPECT_NO_THROW(CheckMemoryPlan(one, one.peak(), 0));
}

TEST_F(RunLayerTest, PrepareBuildsTheRunAndWritesModelDirLast) {
  const LoadedTrainConfig loaded = Load("four.txt");
  ValidatedTrainRun validated;
  validated.loop.model_dir = loaded.setup.model_dir;
  std::ostringstream log;
  PreparedTrainRun run = PrepareTrainRun(loaded, validated, log);
  EXPECT_TRUE(fs::exists(dir_ / "model" / "config.gin"));
  EXPECT_EQ(run.trainer->step(), 0);
  EXPECT_EQ(run.partitioner->mesh().size(), 1);
  auto batch = run.train_batches();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->at("encoder_input_tokens").sizes().vec(), (std::vector<int64_t>{2, 8}));
  // The variable table: one row per parameter and state array, with mesh axes.
  EXPECT_NE(log.str().find("target/token_embedder.embedding"), std::string::npos);
  EXPECT_NE(log.str().find("('vocab', 'embed')           ('model', None)"), std::string::npos)
      << log.str();
}

TEST_F(RunLayerTest, ReadsSaveBestCheckpointerAndRefusesWhatT5xRefuses) {
  const std::string cls =
      "utils.SaveCheckpointConfig.checkpointer_cls = @checkpoints.SaveBestCheckpointer\n";
  const TrainSetup s = Load("four.txt", cls +
      "checkpoints.SaveBestCheckpointer.metric_name_to_monitor = "
      "'inference_eval/wmt_t2t_ende_v003/eval/bleu'\n"
      "checkpoints.SaveBestCheckpointer.keep_checkpoints_without_metrics = False\n"
      "checkpoints.SaveBestCheckpointer.force_keep_period = 8\n").setup;
  ASSERT_TRUE(s.save_best.has_value());
  EXPECT_EQ(s.save_best->metric_name_to_monitor, "inference_eval/wmt_t2t_ende_v003/eval/bleu");
  EXPECT_EQ(s.save_best->metric_mode, "max");  // t5x's default
  EXPECT_FALSE(s.save_best->keep_checkpoints_without_metrics);
  EXPECT_EQ(s.save_best->force_keep_period, 8);
  EXPECT_EQ(s.force_keep_period, 8);
  EXPECT_FALSE(Load("four.txt", "").setup.save_best.has_value());
  EXPECT_ERROR_CONTAINS(Load("four.txt", cls + "checkpoints.SaveBestCheckpointer.metric_mode = 'avg'\n"),
                        "metric_mode) = 'avg': must be 'max' or 'min'");
  EXPECT_ERROR_CONTAINS(
      Load("four.txt", cls + "checkpoints.SaveBestCheckpointer.metric_name_to_monitor = 'bleu'\n"),
      "= 'bleu': must be '{run}/{tag}'");
  EXPECT_ERROR_CONTAINS(Load("four.txt", cls + "train.use_orbax = True\n"),
                        "bind them on checkpoints.OrbaxCheckpointManagerInterface");
  // With Orbax, the manager's own metric arguments (Orbax's rules).
  const TrainSetup o = Load("four.txt",
      "train.use_orbax = True\n"
      "checkpoints.OrbaxCheckpointManagerInterface.metric_name_to_monitor = 'train/loss'\n"
      "checkpoints.OrbaxCheckpointManagerInterface.metric_mode = 'min'\n"
      "checkpoints.OrbaxCheckpointManagerInterface.force_keep_period = 6\n").setup;
  ASSERT_TRUE(o.save_best.has_value());
  EXPECT_TRUE(o.save_best->orbax);
  EXPECT_EQ(o.save_best->metric_name_to_monitor, "train/loss");
  EXPECT_EQ(o.save_best->metric_mode, "min");
  EXPECT_TRUE(o.save_best->keep_checkpoints_without_metrics);
  EXPECT_EQ(o.force_keep_period, 6);
  EXPECT_ERROR_CONTAINS(
      Load("four.txt", "train.use_orbax = True\n"
                       "checkpoints.OrbaxCheckpointManagerInterface.metric_name_to_monitor = "
                       "'loss'\n"),
      "= 'loss': must be '{run}/{tag}'");
}

TEST_F(RunLayerTest, ReadsTheCheckpointConfigsAsT5xNamesThem) {
  const LoadedTrainConfig loaded = Load(
      "four.txt",
      "utils.CheckpointConfig.restore = @utils.RestoreCheckpointConfig()\n"
      "utils.RestoreCheckpointConfig.path = '/ckpts/checkpoint_1000000'\n"
      "utils.RestoreCheckpointConfig.mode = 'specific'\n"
      "utils.RestoreCheckpointConfig.dtype = 'float32'\n"
      "utils.RestoreCheckpointConfig.strict = False\n"
      "utils.RestoreCheckpointConfig.fallback_to_scratch = True\n"
      "utils.RestoreCheckpointConfig.assignment_map = [(r'state/.*', None), "
      "(r'target/(.*)', r'target/\\1')]\n"
      "utils.SaveCheckpointConfig.dtype = 'bfloat16'\n"
      "utils.SaveCheckpointConfig.keep = 3\n"
      "utils.SaveCheckpointConfig.keep_dataset_checkpoints = 1\n"
      "utils.SaveCheckpointConfig.checkpoint_steps = [5, 7]\n"
      "utils.SaveCheckpointConfig.checkpoint_manager_cls = "
      "@checkpoints.OrbaxCheckpointManagerInterface\n"
      "train.use_orbax = True\n"
      "checkpoints.Checkpointer.force_keep_period = 100\n");
  const TrainSetup& s = loaded.setup;
  EXPECT_TRUE(s.use_orbax);
  ASSERT_TRUE(s.restore.has_value());
  EXPECT_EQ(s.restore->paths, std::vector<std::string>{"/ckpts/checkpoint_1000000"});
  EXPECT_EQ(s.restore->mode, "specific");
  EXPECT_EQ(s.restore->options.dtype, std::optional<std::string>("float32"));
  EXPECT_FALSE(s.restore->options.strict);
  EXPECT_TRUE(s.restore->options.fallback_to_scratch);
  ASSERT_EQ(s.restore->options.assignment_map.size(), 2u);
  EXPECT_EQ(s.restore->options.assignment_map[0].first, "state/.*");
  EXPECT_EQ(s.restore->options.assignment_map[0].second, std::nullopt);
  EXPECT_EQ(s.restore->options.assignment_map[1].second, std::optional<std::string>("target/\\1"));
  EXPECT_EQ(s.save_dtype, trainer::SaveDType::kBFloat16);
  EXPECT_EQ(s.checkpoint_keep, 3);
  EXPECT_EQ(s.keep_dataset_checkpoints, 1);
  EXPECT_EQ(s.checkpoint_steps, (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(s.force_keep_period, 100);
  // A 'specific' path that is no checkpoint is named with its binding.
  std::vector<std::string> notes;
  EXPECT_ERROR_CONTAINS(PlanRestore(s, &notes),
                        "= '/ckpts/checkpoint_1000000' is not a t5x checkpoint directory (it "
                        "does not exist)");
}

TEST_F(RunLayerTest, ARestartResumesTheModelAndTheDataPosition) {
  // Reference: the first three train batches of a fresh run.
  std::vector<models::FeatureBatch> reference;
  {
    const LoadedTrainConfig loaded = Load("four.txt");
    ValidatedTrainRun validated;
    validated.loop.model_dir = loaded.setup.model_dir;
    std::ostringstream log;
    PreparedTrainRun run = PrepareTrainRun(loaded, validated, log);
    for (int i = 0; i < 3; ++i) reference.push_back(*run.train_batches());
  }
  fs::remove_all(dir_ / "model");
  // Train one step and save (with the data position), as a run that is
  // then preempted.
  {
    const LoadedTrainConfig loaded = Load("four.txt", "TRAIN_STEPS = 1\n");
    ValidatedTrainRun validated;
    validated.loop = trainer::TrainLoopConfig{};
    validated.loop.model_dir = loaded.setup.model_dir;
    validated.loop.total_steps = 1;
    std::ostringstream log;
    PreparedTrainRun run = PrepareTrainRun(loaded, validated, log);
    trainer::RunTrainLoop(*run.trainer, run.train_batches, {}, run.loop, log);
  }
  ASSERT_TRUE(fs::exists(dir_ / "model" / "checkpoint_1" / "t5xx_train_ds-000-of-001.json"));
  // The same run restarted: resumes at step 1 with the second batch next.
  const LoadedTrainConfig loaded = Load("four.txt");
  ValidatedTrainRun validated;
  validated.loop.model_dir = loaded.setup.model_dir;
  validated.restore = PlanRestore(loaded.setup, &validated.restore_notes);
  ASSERT_TRUE(validated.restore.has_value());
  EXPECT_TRUE(validated.restore->resuming);
  EXPECT_EQ(validated.restore->step, 1);
  std::ostringstream log;
  PreparedTrainRun run = PrepareTrainRun(loaded, validated, log);
  EXPECT_EQ(run.trainer->step(), 1);
  EXPECT_NE(log.str().find("the train data continues where step 1 left it"), std::string::npos)
      << log.str();
  for (int i = 1; i < 3; ++i) {
    const models::FeatureBatch b = *run.train_batches();
    for (const auto& [name, t] : reference[static_cast<size_t>(i)]) {
      EXPECT_TRUE(at::equal(b.at(name), t)) << "batch " << i << " " << name;
    }
  }
}

TEST_F(RunLayerTest, AnEmptySplitFailsBeforeModelDirIsWritten) {
  const LoadedTrainConfig loaded = Load("empty.txt");
  ValidatedTrainRun validated;
  std::ostringstream log;
  EXPECT_ERROR_CONTAINS(PrepareTrainRun(loaded, validated, log),
                        "yields no full batch of 2 examples");
  EXPECT_FALSE(fs::exists(dir_ / "model"));
}

}  // namespace
}  // namespace t5xx::run
