// Every stock gin file under configs/ parses and finalizes against the t5x
// registry; small.gin + pretrain.gin resolve to t5x's published values; a
// walk of everything train() reaches uses every binding.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/util/error.h"

namespace t5xx::gin {
namespace {

namespace fs = std::filesystem;

const std::string kConfigs = std::string(T5XX_SOURCE_DIR) + "/configs";

// The macros a run must supply (pretrain.gin's %gin.REQUIRED ones, plus the
// dropout the model files leave open).
void AddRunBindings(Config& config) {
  config.AddFlagBinding("MODEL_DIR", "/tmp/t5xx_model", "--gin.MODEL_DIR flag");
  config.AddFlagBinding("MIXTURE_OR_TASK_NAME", "c4_v220_span_corruption", "--gin.MIXTURE_OR_TASK_NAME flag");
  config.AddFlagBinding("TASK_FEATURE_LENGTHS", "{'inputs': 512, 'targets': 114}", "--gin.TASK_FEATURE_LENGTHS flag");
  config.AddFlagBinding("TRAIN_STEPS", "10000", "--gin.TRAIN_STEPS flag");
  config.AddFlagBinding("DROPOUT_RATE", "0.0", "--gin.DROPOUT_RATE flag");
}

std::vector<std::string> GinFiles(const std::string& sub) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(kConfigs + "/" + sub)) {
    if (e.path().extension() == ".gin") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Queries every parameter of `name` in `scope` the way the trainer would,
// following references, each in the scope gin calls it in (gin::CallScope).
void Walk(Config& config, const Registry& registry, const std::string& name, const std::string& scope,
          std::set<std::string>& seen) {
  if (!seen.insert(scope + "|" + name).second) return;
  for (const ParamSpec& p : registry.Find(name)->params) {
    if (p.required && !config.IsBound(name, p.name, scope)) continue;
    std::vector<Value> todo{config.Query(name, p.name, scope)};
    while (!todo.empty()) {
      Value v = todo.back();
      todo.pop_back();
      if (v.kind() == Value::Kind::kReference) {
        Walk(config, registry, v.reference_name(), gin::CallScope(scope, v), seen);
      } else if (v.kind() == Value::Kind::kList || v.kind() == Value::Kind::kTuple) {
        for (const Value& item : v.AsList()) todo.push_back(item);
      }
    }
  }
}

TEST(StockConfigs, EveryModelFileFinalizesWithPretrain) {
  Registry registry;
  run::RegisterConfigurables(registry);
  std::vector<std::string> models = GinFiles("models");
  ASSERT_GE(models.size(), 6u);  // base, small, large, xl, xxl, tiny
  for (const std::string& model : models) {
    SCOPED_TRACE(model);
    Config config(&registry);
    config.ParseFile(model);
    config.ParseFile(kConfigs + "/runs/pretrain.gin");
    AddRunBindings(config);
    EXPECT_NO_THROW(config.Finalize());
  }
}

TEST(StockConfigs, EveryRunFileFinalizesWithSmall) {
  Registry registry;
  run::RegisterConfigurables(registry);
  std::vector<std::string> runs = GinFiles("runs");
  ASSERT_GE(runs.size(), 1u);
  for (const std::string& run : runs) {
    SCOPED_TRACE(run);
    Config config(&registry);
    config.ParseFile(kConfigs + "/models/t5_1_1/small.gin");
    config.ParseFile(run);
    const std::string name = fs::path(run).filename().string();
    if (name == "infer.gin" || name == "eval.gin") {
      // t5x's infer.gin / eval.gin macros (their DROPOUT_RATE is 0).
      config.AddFlagBinding("MIXTURE_OR_TASK_NAME", "'my_task'", "--gin.MIXTURE_OR_TASK_NAME flag");
      config.AddFlagBinding("CHECKPOINT_PATH", "'/tmp/ckpt/checkpoint_100'",
                            "--gin.CHECKPOINT_PATH flag");
      if (name == "infer.gin") {
        config.AddFlagBinding("TASK_FEATURE_LENGTHS", "{'inputs': 512, 'targets': 114}",
                              "--gin.TASK_FEATURE_LENGTHS flag");
        config.AddFlagBinding("INFER_OUTPUT_DIR", "'/tmp/infer'", "--gin.INFER_OUTPUT_DIR flag");
      } else {
        config.AddFlagBinding("EVAL_OUTPUT_DIR", "'/tmp/eval'", "--gin.EVAL_OUTPUT_DIR flag");
      }
    } else {
      AddRunBindings(config);
      if (name == "finetune.gin") {
        config.AddFlagBinding("INITIAL_CHECKPOINT_PATH", "'/tmp/ckpt/checkpoint_100'",
                              "--gin.INITIAL_CHECKPOINT_PATH flag");
      }
    }
    EXPECT_NO_THROW(config.Finalize());
  }
}

TEST(StockConfigs, PromptTuningFilesFinalizeWithFinetune) {
  // configs/prompt_tuning/ are add-ons to a T5.1.1 size file: with
  // runs/finetune.gin every binding is read (by train, or by eval with the
  // prompt file).
  Registry registry;
  run::RegisterConfigurables(registry);
  Config config(&registry);
  config.AddSearchPath(kConfigs);
  config.ParseFile(kConfigs + "/models/t5_1_1/small.gin");
  config.ParseFile(kConfigs + "/prompt_tuning/t5_1_1_prompt.gin");
  config.ParseFile(kConfigs + "/prompt_tuning/from_file.gin");
  config.ParseFile(kConfigs + "/runs/finetune.gin");
  AddRunBindings(config);
  config.AddFlagBinding("INITIAL_CHECKPOINT_PATH", "'/tmp/base/checkpoint_1000'",
                        "--gin.INITIAL_CHECKPOINT_PATH flag");
  config.AddFlagBinding("PROMPT_FILE", "'/tmp/prompt.npy'", "--gin.PROMPT_FILE flag");
  EXPECT_NO_THROW(config.Finalize());
  std::set<std::string> seen;
  Walk(config, registry, "__main__.train", "", seen);
  EXPECT_EQ(config.UnusedBindings(), std::vector<std::string>{});
}

TEST(StockConfigs, EveryExampleFileFinalizes) {
  // Examples are complete runs: they include a model and a run file through
  // the configs/ search path and set everything but MODEL_DIR.
  if (!fs::is_directory(kConfigs + "/examples")) GTEST_SKIP() << "no configs/examples";
  Registry registry;
  run::RegisterConfigurables(registry);
  for (const std::string& example : GinFiles("examples")) {
    SCOPED_TRACE(example);
    Config config(&registry);
    config.AddSearchPath(kConfigs);
    config.ParseFile(example);
    config.AddFlagBinding("MODEL_DIR", "/tmp/t5xx_model", "--gin.MODEL_DIR flag");
    // Finetuning examples leave the checkpoint to the command line.
    std::ifstream text(example);
    const std::string body((std::istreambuf_iterator<char>(text)), {});
    if (body.find("--gin.INITIAL_CHECKPOINT_PATH") != std::string::npos) {
      config.AddFlagBinding("INITIAL_CHECKPOINT_PATH", "'/tmp/t5xx_demo/checkpoint_300'",
                            "--gin.INITIAL_CHECKPOINT_PATH flag");
    }
    EXPECT_NO_THROW(config.Finalize());
    std::set<std::string> seen;
    Walk(config, registry, "__main__.train", "", seen);
    EXPECT_EQ(config.UnusedBindings(), std::vector<std::string>{});
  }
}

TEST(StockConfigs, RequiredRunMacrosAreReported) {
  Registry registry;
  run::RegisterConfigurables(registry);
  Config config(&registry);
  config.ParseFile(kConfigs + "/models/t5_1_1/small.gin");
  config.ParseFile(kConfigs + "/runs/pretrain.gin");
  config.AddFlagBinding("DROPOUT_RATE", "0.1", "--gin.DROPOUT_RATE flag");
  try {
    config.Finalize({"__main__.train"});  // what `t5xx train` calls
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("pretrain.gin:18:1: macros 'MODEL_DIR', 'MIXTURE_OR_TASK_NAME', 'TASK_FEATURE_LENGTHS', "
                       "'TRAIN_STEPS' are %gin.REQUIRED"),
              std::string::npos)
        << msg;
  }
}

// umT5 (configs/umt5, mirroring t5x/examples/scalable_t5/umt5): every
// pretrain_<size>.gin finalizes through the configs/ search path, uses every
// binding, and gives umT5's vocabulary, the scanned scalable_t5 network and
// (xxl) the unfactored Adafactor with momentum.
TEST(StockConfigs, UmT5PretrainFilesValidate) {
  Registry registry;
  run::RegisterConfigurables(registry);
  const std::vector<std::pair<std::string, int64_t>> sizes = {
      {"small", 512}, {"base", 768}, {"large", 1024}, {"xl", 2048}, {"xxl", 4096}};
  for (const auto& [size, emb] : sizes) {
    SCOPED_TRACE(size);
    Config config(&registry);
    config.AddSearchPath(kConfigs);
    config.ParseFile(kConfigs + "/umt5/pretrain_" + size + ".gin");
    config.AddFlagBinding("MODEL_DIR", "/tmp/t5xx_model", "--gin.MODEL_DIR flag");
    config.AddFlagBinding("MIXTURE_OR_TASK_NAME", "'mc4'", "--gin.MIXTURE_OR_TASK_NAME flag");
    config.AddFlagBinding("TRAIN_EVAL_MIXTURE_OR_TASK_NAME", "'mc4'",
                          "--gin.TRAIN_EVAL_MIXTURE_OR_TASK_NAME flag");
    ASSERT_NO_THROW(config.Finalize({"__main__.train"}));
    std::set<std::string> seen;
    Walk(config, registry, "__main__.train", "", seen);
    EXPECT_EQ(config.UnusedBindings(), std::vector<std::string>{});
    const std::string c = "t5x.examples.scalable_t5.network.T5Config";
    EXPECT_EQ(config.Query(c, "vocab_size").AsInt(), 256384);
    EXPECT_EQ(config.Query(c, "emb_dim").AsInt(), emb);
    EXPECT_TRUE(config.Query(c, "scan_layers").AsBool());
    EXPECT_EQ(config.Query(c, "remat_policy").AsString(), "minimal");
    EXPECT_EQ(config.Query("seqio.SentencePieceVocabulary", "extra_ids").AsInt(), 300);
    EXPECT_EQ(config.Query("seqio.SentencePieceVocabulary", "sentencepiece_model_file").AsString(),
              "gs://t5-data/vocabs/umt5.256000/sentencepiece.model");
    const std::string ada = "t5x.adafactor.Adafactor";
    EXPECT_DOUBLE_EQ(config.Query(ada, "decay_rate").AsFloat(), 0.8);
    EXPECT_EQ(config.Query(ada, "factored").AsBool(), size != "xxl");
    EXPECT_EQ(config.Query("__main__.train", "total_steps").AsInt(), 1000000);
    EXPECT_FALSE(config.Query("t5x.utils.DatasetConfig", "pack", "train").AsBool());
  }
}

class SmallPretrain : public ::testing::Test {
 protected:
  void SetUp() override {
    run::RegisterConfigurables(registry_);
    config_.ParseFile(kConfigs + "/models/t5_1_1/small.gin");
    config_.ParseFile(kConfigs + "/runs/pretrain.gin");
    AddRunBindings(config_);
    config_.Finalize();
  }
  Registry registry_;
  Config config_{&registry_};
};

TEST_F(SmallPretrain, NetworkDims) {
  const std::string c = "t5x.examples.t5.network.T5Config";
  EXPECT_EQ(config_.Query(c, "vocab_size").AsInt(), 32128);
  EXPECT_EQ(config_.Query(c, "dtype").AsString(), "float32");
  EXPECT_EQ(config_.Query(c, "emb_dim").AsInt(), 512);
  EXPECT_EQ(config_.Query(c, "num_heads").AsInt(), 6);
  EXPECT_EQ(config_.Query(c, "num_encoder_layers").AsInt(), 8);
  EXPECT_EQ(config_.Query(c, "num_decoder_layers").AsInt(), 8);
  EXPECT_EQ(config_.Query(c, "head_dim").AsInt(), 64);
  EXPECT_EQ(config_.Query(c, "mlp_dim").AsInt(), 1024);
  EXPECT_EQ(config_.Query(c, "mlp_activations").ToGinString(), "('gelu', 'linear')");
  EXPECT_DOUBLE_EQ(config_.Query(c, "dropout_rate").AsFloat(), 0.0);
  EXPECT_FALSE(config_.Query(c, "logits_via_embedding").AsBool());
}

TEST_F(SmallPretrain, ReferenceChainFromTrain) {
  Value model = config_.Query("__main__.train", "model");
  EXPECT_EQ(model.reference_name(), "t5x.models.EncoderDecoderModel");
  EXPECT_TRUE(model.reference_evaluated());
  Value module = config_.Query(model.reference_name(), "module");
  EXPECT_EQ(module.reference_name(), "t5x.examples.t5.network.Transformer");
  EXPECT_EQ(config_.Query(module.reference_name(), "config").reference_name(), "t5x.examples.t5.network.T5Config");
  EXPECT_EQ(config_.Query(model.reference_name(), "input_vocabulary").reference_name(), "seqio.SentencePieceVocabulary");
  EXPECT_DOUBLE_EQ(config_.Query(model.reference_name(), "z_loss").AsFloat(), 1e-4);
  EXPECT_TRUE(config_.Query(model.reference_name(), "loss_normalizing_factor").is_none());
  EXPECT_EQ(config_.Query("seqio.SentencePieceVocabulary", "extra_ids").AsInt(), 100);
  EXPECT_EQ(config_.Query("__main__.train", "trainer_cls").reference_name(), "t5x.trainer.Trainer");
  EXPECT_FALSE(config_.Query("__main__.train", "trainer_cls").reference_evaluated());
  EXPECT_EQ(config_.Query("__main__.train", "model_dir").AsString(), "/tmp/t5xx_model");
  EXPECT_EQ(config_.Query("__main__.train", "total_steps").AsInt(), 10000);
  EXPECT_EQ(config_.Query("__main__.train", "eval_steps").AsInt(), 20);
  EXPECT_EQ(config_.Query("__main__.train", "stats_period").AsInt(), 100);

  Value train_ds = config_.Query("__main__.train", "train_dataset_cfg");
  EXPECT_EQ(train_ds.reference_scope(), "train");
  const std::string ds = "t5x.utils.DatasetConfig";
  EXPECT_EQ(config_.Query(ds, "split", "train").AsString(), "train");
  EXPECT_EQ(config_.Query(ds, "split", "train_eval").AsString(), "validation");
  EXPECT_TRUE(config_.Query(ds, "seed", "train").is_none());
  EXPECT_EQ(config_.Query(ds, "seed", "train_eval").AsInt(), 42);
  EXPECT_EQ(config_.Query(ds, "batch_size", "train").AsInt(), 128);
  EXPECT_EQ(config_.Query(ds, "task_feature_lengths", "train").AsDict()[0].second.AsInt(), 512);
  EXPECT_EQ(config_.Query(ds, "mixture_or_task_name", "train").AsString(), "c4_v220_span_corruption");
  EXPECT_EQ(config_.Query("t5x.utils.create_learning_rate_scheduler", "factors").AsString(),
            "constant * rsqrt_decay");
  EXPECT_EQ(config_.Query("t5x.utils.create_learning_rate_scheduler", "warmup_steps").AsInt(), 10000);
  EXPECT_EQ(config_.Query("t5x.partitioning.PjitPartitioner", "num_partitions").AsInt(), 1);
  EXPECT_TRUE(config_.Query("t5x.utils.CheckpointConfig", "restore").is_none());
}

TEST_F(SmallPretrain, WalkUsesEveryBindingAndOperativeRoundTrips) {
  std::set<std::string> seen;
  Walk(config_, registry_, "__main__.train", "", seen);
  EXPECT_EQ(config_.UnusedBindings(), std::vector<std::string>{});
  std::string operative = config_.OperativeConfigString();
  EXPECT_NE(operative.find("train/t5x.utils.DatasetConfig.split = 'train'\n"), std::string::npos) << operative;
  EXPECT_NE(operative.find("t5x.examples.t5.network.T5Config.emb_dim = 512\n"), std::string::npos) << operative;

  Config again(&registry_);
  again.ParseString(operative, "config.gin");
  again.Finalize();
  std::set<std::string> seen2;
  Walk(again, registry_, "__main__.train", "", seen2);
  EXPECT_EQ(seen, seen2);
  EXPECT_EQ(again.OperativeConfigString(), operative);
}

}  // namespace
}  // namespace t5xx::gin
