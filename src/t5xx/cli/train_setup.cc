#include "t5xx/cli/train_setup.h"

#include "t5xx/cli/commands.h"
#include "t5xx/cli/gin_tasks.h"
#include "t5xx/data/demo_tasks.h"
#include "t5xx/config/flags.h"
#include "t5xx/config/t5x_configurables.h"
#include "t5xx/data/corpus_builder.h"
#include "t5xx/optim/make_optimizer.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {
namespace {

constexpr char kTrain[] = "__main__.train";
constexpr char kModel[] = "t5x.models.EncoderDecoderModel";
constexpr char kTransformer[] = "t5x.examples.t5.network.Transformer";
constexpr char kT5Config[] = "t5x.examples.t5.network.T5Config";
constexpr char kDecoderOnlyModel[] = "t5x.models.DecoderOnlyModel";
constexpr char kDecoderWrapper[] = "t5x.examples.decoder_only.network.DecoderWrapper";
constexpr char kDecoderOnlyConfig[] = "t5x.examples.decoder_only.network.TransformerConfig";
constexpr char kVocab[] = "seqio.SentencePieceVocabulary";
constexpr char kAdafactor[] = "t5x.adafactor.Adafactor";
constexpr char kFactorRules[] = "t5x.adafactor.standard_logical_factor_rules";
constexpr char kOptimizersAdamW[] = "t5x.optimizers.adamw";
constexpr char kOptimizersChain[] = "t5x.optimizers.chain";
constexpr char kOptaxAdamW[] = "optax.adamw";
constexpr char kOptaxClipByGlobalNorm[] = "optax.clip_by_global_norm";
constexpr char kOptaxClip[] = "optax.clip";
constexpr char kDatasetConfig[] = "t5x.utils.DatasetConfig";
constexpr char kCheckpointConfig[] = "t5x.utils.CheckpointConfig";
constexpr char kSaveConfig[] = "t5x.utils.SaveCheckpointConfig";
constexpr char kPartitioner[] = "t5x.partitioning.PjitPartitioner";
constexpr char kAxisRules[] = "t5x.partitioning.standard_logical_axis_rules";
constexpr char kTrainer[] = "t5x.trainer.Trainer";
constexpr char kLrScheduler[] = "t5x.utils.create_learning_rate_scheduler";
constexpr char kSummarize[] = "t5x.gin_utils.summarize_gin_config";

std::string Where(const gin::Value& v) {
  std::string loc = v.location().ToString();
  return loc.empty() ? v.description() : loc + " (" + v.description() + ")";
}

// Checks that `v` references `expected` (evaluated `@x()` unless
// callable_ok) and returns its scope.
// `outer`: the scope the configurable holding `v` was called in; the
// returned scope nests the reference's own in it, as gin's config_scope.
std::string ExpectReference(const gin::Value& v, const std::string& expected,
                            bool evaluated = true, const std::string& outer = "") {
  T5XX_CHECK(v.kind() == gin::Value::Kind::kReference,
        Where(v) + ": expected @" + expected + (evaluated ? "()" : "") +
            ", got " + v.ToGinString());
  T5XX_CHECK(v.reference_name() == expected,
        Where(v) + ": t5xx supports only @" + expected + (evaluated ? "()" : "") +
            " here, got @" + v.reference_name());
  T5XX_CHECK(v.reference_evaluated() == evaluated,
        Where(v) + ": expected " + std::string(evaluated ? "@" + expected + "()" : "@" + expected) +
            " (" + (evaluated ? "evaluated" : "not called") + "), got " + v.ToGinString());
  return gin::NestedScope(outer, v.reference_scope());
}

std::optional<int64_t> OptionalInt(const gin::Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.AsInt();
}

int64_t AtLeast(const gin::Value& v, int64_t minimum) {
  const int64_t n = v.AsInt();
  T5XX_CHECK(n >= minimum, Where(v) + " must be >= " + std::to_string(minimum) + ", got " +
                          std::to_string(n));
  return n;
}

std::optional<int64_t> NoneOrAtLeast(const gin::Value& v, int64_t minimum) {
  if (v.is_none()) return std::nullopt;
  return AtLeast(v, minimum);
}

void Refuse(bool bad, const gin::Value& v, const std::string& what_to_do) {
  T5XX_CHECK(!bad, Where(v) + " = " + v.ToGinString() + " is not supported yet; " + what_to_do);
}

DatasetConfig ReadDatasetConfig(gin::Config& c, const std::string& scope) {
  DatasetConfig d;
  auto q = [&](const char* p) { return c.Query(kDatasetConfig, p, scope); };
  d.mixture_or_task_name = q("mixture_or_task_name").AsString();
  const gin::Value lengths = q("task_feature_lengths");  // outlives the loop
  for (const auto& [k, v] : lengths.AsDict()) {
    d.task_feature_lengths[k.AsString()] = v.AsInt();
  }
  d.split = q("split").AsString();
  d.batch_size = AtLeast(q("batch_size"), 1);
  d.shuffle = q("shuffle").AsBool();
  d.seed = OptionalInt(q("seed"));
  // t5x seeds tf.data with it; t5xx derives every draw from it as a uint64.
  T5XX_CHECK(!d.seed || *d.seed >= 0,
             Where(q("seed")) + " = " + std::to_string(*d.seed) + " must be >= 0 (or None)");
  d.pack = q("pack").AsBool();
  d.trim_output_features = q("trim_output_features").AsBool();
  q("use_custom_packing_ops").AsBool();  // no effect: one packer (documented)
  q("use_memory_cache").AsBool();        // no effect: streams are rebuilt
  gin::Value use_cached = q("use_cached");
  Refuse(use_cached.AsBool(), use_cached,
         "t5xx has no seqio cache yet; set USE_CACHED_TASKS = False");
  gin::Value module = q("module");
  Refuse(!module.is_none(), module,
         "t5xx has no Python modules; define the task in C++ or in gin "
         "(t5xx.seqio.register, docs/gin.md) and remove the module binding "
         "(MIXTURE_OR_TASK_MODULE = None)");
  return d;
}

}  // namespace

TrainSetup ReadTrainSetup(gin::Config& c) {
  TrainSetup s;
  s.model_dir = c.Query(kTrain, "model_dir").AsString();
  T5XX_CHECK(!s.model_dir.empty(), "train.model_dir (MODEL_DIR) is empty; pass --gin.MODEL_DIR=/path");

  std::string num_microbatches_where = "trainer.Trainer.num_microbatches";
  // --- model ---
  // MODEL = @models.EncoderDecoderModel() (network.Transformer/T5Config) or
  // @models.DecoderOnlyModel() (decoder_only network.DecoderWrapper/
  // TransformerConfig).
  const gin::Value model_ref = c.Query(kTrain, "model");
  T5XX_CHECK(model_ref.kind() == gin::Value::Kind::kReference &&
            (model_ref.reference_name() == kModel ||
             model_ref.reference_name() == kDecoderOnlyModel),
        Where(model_ref) + ": expected @models.EncoderDecoderModel() or "
                           "@models.DecoderOnlyModel(), got " + model_ref.ToGinString());
  const std::string model_name = model_ref.reference_name();
  const std::string model_scope = ExpectReference(model_ref, model_name);
  auto read_activations = [](const gin::Value& v) {
    std::vector<std::string> out;
    for (const auto& a : v.AsList()) out.push_back(a.AsString());
    return out;
  };
  if (model_name == kModel) {
    s.model_kind = ModelKind::kEncoderDecoder;
    const std::string module_scope =
        ExpectReference(c.Query(kModel, "module", model_scope), kTransformer, true, model_scope);
    const std::string cfg_scope =
        ExpectReference(c.Query(kTransformer, "config", module_scope), kT5Config, true, module_scope);
    auto tq = [&](const char* p) { return c.Query(kT5Config, p, cfg_scope); };
    models::T5Config& t = s.t5_config;
    t.vocab_size = tq("vocab_size").AsInt();
    t.dtype = tq("dtype").AsString();
    t.emb_dim = tq("emb_dim").AsInt();
    t.num_heads = tq("num_heads").AsInt();
    t.num_encoder_layers = tq("num_encoder_layers").AsInt();
    t.num_decoder_layers = tq("num_decoder_layers").AsInt();
    t.head_dim = tq("head_dim").AsInt();
    t.mlp_dim = tq("mlp_dim").AsInt();
    t.mlp_activations = read_activations(tq("mlp_activations"));
    t.dropout_rate = tq("dropout_rate").AsFloat();
    t.logits_via_embedding = tq("logits_via_embedding").AsBool();
    t.float32_attention_logits = tq("float32_attention_logits").AsBool();
    t.remat_policy = tq("remat_policy").AsString();
    t.Validate([&](const char* field) { return Where(tq(field)); });
  } else {
    s.model_kind = ModelKind::kDecoderOnly;
    const std::string module_scope =
        ExpectReference(c.Query(kDecoderOnlyModel, "module", model_scope), kDecoderWrapper, true,
                        model_scope);
    const std::string cfg_scope =
        ExpectReference(c.Query(kDecoderWrapper, "config", module_scope), kDecoderOnlyConfig, true,
                        module_scope);
    auto tq = [&](const char* p) { return c.Query(kDecoderOnlyConfig, p, cfg_scope); };
    models::DecoderOnlyConfig& t = s.decoder_only_config;
    t.vocab_size = tq("vocab_size").AsInt();
    t.dtype = tq("dtype").AsString();
    t.emb_dim = tq("emb_dim").AsInt();
    t.num_heads = tq("num_heads").AsInt();
    t.num_layers = tq("num_layers").AsInt();
    t.head_dim = tq("head_dim").AsInt();
    t.mlp_dim = tq("mlp_dim").AsInt();
    t.mlp_activations = read_activations(tq("mlp_activations"));
    t.dropout_rate = tq("dropout_rate").AsFloat();
    t.logits_via_embedding = tq("logits_via_embedding").AsBool();
    t.remat_policy = tq("remat_policy").AsString();
    t.Validate([&](const char* field) { return Where(tq(field)); });
    s.inputs_bidirectional_attention =
        c.Query(kDecoderOnlyModel, "inputs_bidirectional_attention", model_scope).AsBool();
  }

  s.z_loss = c.Query(model_name, "z_loss", model_scope).AsFloat();
  {
    const gin::Value ls = c.Query(model_name, "label_smoothing", model_scope);
    s.label_smoothing = ls.AsFloat();
    // t5x's cross_entropy_with_logits: confidence = 1 - label_smoothing.
    T5XX_CHECK(s.label_smoothing >= 0 && s.label_smoothing < 1,
               Where(ls) + " = " + ls.ToGinString() + " must be in [0, 1) (the target's "
               "probability is 1 - label_smoothing)");
  }
  {
    gin::Value lnf = c.Query(model_name, "loss_normalizing_factor", model_scope);
    std::string text = lnf.is_none() ? "None"
                       : lnf.kind() == gin::Value::Kind::kString ? lnf.AsString()
                                                                 : std::to_string(lnf.AsFloat());
    s.loss_normalizing_factor = models::LossNormalizingFactor::Parse(text, Where(lnf));
  }
  {
    // The model's vocabularies are used for decoding (later issues); for
    // training t5xx checks that the task's vocabulary fits the embedding.
    std::string vs;
    if (s.model_kind == ModelKind::kEncoderDecoder) {
      gin::Value in = c.Query(kModel, "input_vocabulary", model_scope);
      gin::Value out = c.Query(kModel, "output_vocabulary", model_scope);
      vs = ExpectReference(out, kVocab, true, model_scope);
      ExpectReference(in, kVocab, true, model_scope);
    } else {
      vs = ExpectReference(c.Query(kDecoderOnlyModel, "vocabulary", model_scope), kVocab, true,
                           model_scope);
    }
    s.output_vocabulary.sentencepiece_model_file =
        c.Query(kVocab, "sentencepiece_model_file", vs).AsString();
    s.output_vocabulary.extra_ids = c.Query(kVocab, "extra_ids", vs).AsInt();
  }

  // --- optimizer ---
  // utils.create_learning_rate_scheduler bound in `scope` (the trainer's
  // learning_rate_fn, or an optax learning_rate).
  auto read_schedule = [&c](const std::string& scope) {
    auto lq = [&](const char* p) { return c.Query(kLrScheduler, p, scope); };
    optim::LearningRateSchedulerConfig lr;
    lr.factors = lq("factors").AsString();
    lr.base_learning_rate = lq("base_learning_rate").AsFloat();
    lr.warmup_steps = lq("warmup_steps").AsInt();
    lr.decay_factor = lq("decay_factor").AsFloat();
    lr.steps_per_decay = lq("steps_per_decay").AsInt();
    lr.steps_per_cycle = lq("steps_per_cycle").AsInt();
    lr.step_offset = lq("step_offset").AsInt();
    lr.min_learning_rate = lq("min_learning_rate").AsFloat();
    try {
      optim::LearningRateSchedule check(lr);
    } catch (const Error& e) {
      throw Error(Where(lq("factors")) + ": " + e.what());
    }
    return lr;
  };
  auto optional_float = [](const gin::Value& v) {
    return v.is_none() ? std::nullopt : std::optional<double>(v.AsFloat());
  };
  auto dtype = [](const gin::Value& v, bool none_ok) -> std::optional<at::ScalarType> {
    if (none_ok && v.is_none()) return std::nullopt;
    const std::string d = v.AsString();
    if (d == "float32") return at::kFloat;
    if (d == "bfloat16") return at::kBFloat16;
    throw Error(Where(v) + " = " + v.ToGinString() + ": use 'float32' or 'bfloat16'" +
                (none_ok ? " (or None)" : ""));
  };
  // optax.adamw / optimizers.adamw bound in `scope`.
  auto read_adamw = [&](const char* name, const std::string& scope) {
    auto q = [&](const char* p) { return c.Query(name, p, scope); };
    optim::OptaxTransform t;
    t.kind = optim::OptaxTransform::Kind::kAdamW;
    t.gin_name = std::string(name) == kOptaxAdamW ? "optax.adamw" : "optimizers.adamw";
    optim::AdamWConfig& a = t.adamw;
    const gin::Value lr = q("learning_rate");
    if (lr.kind() == gin::Value::Kind::kReference) {
      a.learning_rate_schedule = read_schedule(ExpectReference(lr, kLrScheduler, true, scope));
    } else {
      a.learning_rate = lr.AsFloat();
    }
    a.b1 = q("b1").AsFloat();
    a.b2 = q("b2").AsFloat();
    a.eps = q("eps").AsFloat();
    a.eps_root = q("eps_root").AsFloat();
    a.mu_dtype = dtype(q("mu_dtype"), /*none_ok=*/true);
    a.weight_decay = q("weight_decay").AsFloat();
    a.nesterov = q("nesterov").AsBool();
    gin::Value mask = q("mask");
    Refuse(!mask.is_none(), mask,
           "t5xx applies weight_decay to every parameter; set mask = None (or weight_decay = 0)");
    return t;
  };
  const gin::Value opt_def = c.Query(model_name, "optimizer_def", model_scope);
  T5XX_CHECK(opt_def.kind() == gin::Value::Kind::kReference && opt_def.reference_evaluated(),
        Where(opt_def) + ": expected @adafactor.Adafactor(), @optimizers.adamw() or "
                         "@optimizers.chain(), got " + opt_def.ToGinString());
  const std::string opt_scope = gin::NestedScope(model_scope, opt_def.reference_scope());
  if (opt_def.reference_name() == kAdafactor) {
    s.optimizer.kind = optim::OptimizerConfig::Kind::kAdafactor;
    optim::AdafactorConfig& a = s.optimizer.adafactor;
    auto aq = [&](const char* p) { return c.Query(kAdafactor, p, opt_scope); };
    gin::Value lr = aq("learning_rate");
    T5XX_CHECK(lr.is_none(), Where(lr) + " = " + lr.ToGinString() +
                            " has no effect (t5x's trainer sets Adafactor's rate from "
                            "trainer.Trainer.learning_rate_fn); remove it and set "
                            "utils.create_learning_rate_scheduler.base_learning_rate");
    a.factored = aq("factored").AsBool();
    a.multiply_by_parameter_scale = aq("multiply_by_parameter_scale").AsBool();
    a.beta1 = optional_float(aq("beta1"));
    a.decay_rate = aq("decay_rate").AsFloat();
    a.step_offset = aq("step_offset").AsInt();
    a.clipping_threshold = optional_float(aq("clipping_threshold"));
    a.weight_decay_rate = optional_float(aq("weight_decay_rate"));
    a.min_dim_size_to_factor = aq("min_dim_size_to_factor").AsInt();
    a.epsilon1 = aq("epsilon1").AsFloat();
    a.epsilon2 = aq("epsilon2").AsFloat();
    a.dtype_momentum = *dtype(aq("dtype_momentum"), /*none_ok=*/false);
    gin::Value factor_map = aq("factor_map");
    Refuse(!factor_map.is_none(), factor_map,
           "set logical_factor_rules (e.g. @adafactor.standard_logical_factor_rules()) instead");
    gin::Value rules = aq("logical_factor_rules");
    if (rules.kind() == gin::Value::Kind::kDict) {
      optim::LogicalFactorRules r;
      for (const auto& [k, v] : rules.AsDict()) {
        r[k.AsString()] = v.is_none() ? optim::FactorDim::kNone
                                      : optim::FactorDimFromName(v.AsString(), Where(v));
      }
      a.logical_factor_rules = std::move(r);
    } else if (!rules.is_none()) {
      ExpectReference(rules, kFactorRules, true, opt_scope);
      a.logical_factor_rules = optim::StandardLogicalFactorRules();
    }
    a.weight_decay_rate_lr_exponent = optional_float(aq("weight_decay_rate_lr_exponent"));
    a.global_norm_clip_threshold = optional_float(aq("global_norm_clip_threshold"));
    a.max_parameter_scale = optional_float(aq("max_parameter_scale"));
    gin::Value skip = aq("skip_nan_updates");
    a.skip_nan_updates = !skip.is_none() && skip.AsBool();
  } else if (opt_def.reference_name() == kOptimizersAdamW) {
    s.optimizer.kind = optim::OptimizerConfig::Kind::kOptax;
    s.optimizer.optax.chained = false;
    s.optimizer.optax.transforms = {read_adamw(kOptimizersAdamW, opt_scope)};
  } else if (opt_def.reference_name() == kOptimizersChain) {
    s.optimizer.kind = optim::OptimizerConfig::Kind::kOptax;
    s.optimizer.optax.chained = true;
    const gin::Value list = c.Query(kOptimizersChain, "transformations", opt_scope);
    for (const gin::Value& v : list.AsList()) {
      T5XX_CHECK(v.kind() == gin::Value::Kind::kReference && v.reference_evaluated(),
            Where(list) + ": expected a list of @optax.adamw(), @optax.clip_by_global_norm() or "
                          "@optax.clip(), got " + v.ToGinString());
      const std::string& n = v.reference_name();
      const std::string scope = gin::NestedScope(opt_scope, v.reference_scope());
      if (n == kOptaxAdamW) {
        s.optimizer.optax.transforms.push_back(read_adamw(kOptaxAdamW, scope));
      } else if (n == kOptaxClipByGlobalNorm || n == kOptaxClip) {
        optim::OptaxTransform t;
        const bool global = n == kOptaxClipByGlobalNorm;
        t.kind = global ? optim::OptaxTransform::Kind::kClipByGlobalNorm
                        : optim::OptaxTransform::Kind::kClip;
        t.gin_name = global ? "optax.clip_by_global_norm" : "optax.clip";
        (global ? t.max_norm : t.max_delta) =
            c.Query(n, global ? "max_norm" : "max_delta", scope).AsFloat();
        s.optimizer.optax.transforms.push_back(t);
      } else {
        throw Error(Where(list) + ": t5xx supports @optax.adamw(), @optax.clip_by_global_norm() "
                                  "and @optax.clip() in optimizers.chain, got @" + n);
      }
    }
  } else {
    throw Error(Where(opt_def) + ": t5xx supports optimizer_def = @adafactor.Adafactor(), "
                                 "@optimizers.adamw() or @optimizers.chain(), got @" +
                opt_def.reference_name());
  }
  optim::MakeOptimizer(s.optimizer);  // option checks; errors name the gin keys

  // --- trainer and schedule ---
  const std::string trainer_scope =
      ExpectReference(c.Query(kTrain, "trainer_cls"), kTrainer, /*evaluated=*/false);
  {
    gin::Value mb = c.Query(kTrainer, "num_microbatches", trainer_scope);
    s.num_microbatches = NoneOrAtLeast(mb, 1);
    num_microbatches_where = Where(mb);
  }
  const std::string lr_scope = ExpectReference(
      c.Query(kTrainer, "learning_rate_fn", trainer_scope), kLrScheduler, true, trainer_scope);
  s.lr = read_schedule(lr_scope);

  // --- partitioner ---
  const std::string part_scope = ExpectReference(c.Query(kTrain, "partitioner"), kPartitioner);
  {
    gin::Value np = c.Query(kPartitioner, "num_partitions", part_scope);
    s.num_partitions = np.is_none() ? 1 : AtLeast(np, 1);
    Refuse(s.num_partitions != 1, np,
           "t5xx runs one process with one device for now; set num_partitions = 1");
    gin::Value sub = c.Query(kPartitioner, "model_parallel_submesh", part_scope);
    Refuse(!sub.is_none(), sub, "use num_partitions instead");
    gin::Value rules = c.Query(kPartitioner, "logical_axis_rules", part_scope);
    if (rules.is_none()) {
      s.logical_axis_rules = partitioning::StandardLogicalAxisRules();
    } else {
      const std::string rs = ExpectReference(rules, kAxisRules, true, part_scope);
      s.logical_axis_rules = partitioning::StandardLogicalAxisRules(
          static_cast<int>(c.Query(kAxisRules, "activation_partitioning_dims", rs).AsInt()),
          static_cast<int>(c.Query(kAxisRules, "parameter_partitioning_dims", rs).AsInt()));
    }
  }

  // --- data ---
  s.train_dataset = ReadDatasetConfig(
      c, ExpectReference(c.Query(kTrain, "train_dataset_cfg"), kDatasetConfig));
  {
    const int64_t k = s.num_microbatches.value_or(1);
    T5XX_CHECK(s.train_dataset.batch_size % k == 0,
          num_microbatches_where + " = " + std::to_string(k) +
              " does not divide the train batch size " +
              std::to_string(s.train_dataset.batch_size) +
              " (train/utils.DatasetConfig.batch_size); choose a divisor");
  }
  {
    gin::Value ev = c.Query(kTrain, "train_eval_dataset_cfg");
    if (!ev.is_none()) {
      s.train_eval_dataset = ReadDatasetConfig(c, ExpectReference(ev, kDatasetConfig));
    }
  }

  // --- checkpoints ---
  {
    const std::string cs =
        ExpectReference(c.Query(kTrain, "checkpoint_cfg"), kCheckpointConfig);
    gin::Value restore = c.Query(kCheckpointConfig, "restore", cs);
    Refuse(!restore.is_none(), restore,
           "restoring comes with the checkpoint issue; set utils.CheckpointConfig.restore = None");
    gin::Value save = c.Query(kCheckpointConfig, "save", cs);
    s.save_checkpoints = !save.is_none();
    if (!save.is_none()) {
      const std::string ss = ExpectReference(save, kSaveConfig, true, cs);
      s.checkpoint_period = NoneOrAtLeast(c.Query(kSaveConfig, "period", ss), 1);
      gin::Value dtype = c.Query(kSaveConfig, "dtype", ss);
      Refuse(dtype.AsString() != "float32", dtype, "set SaveCheckpointConfig.dtype = 'float32'");
      // t5x: keep = None keeps every checkpoint (0 does too; t5xx asks for None).
      s.checkpoint_keep = NoneOrAtLeast(c.Query(kSaveConfig, "keep", ss), 1);
      gin::Value sd = c.Query(kSaveConfig, "save_dataset", ss);
      Refuse(sd.AsBool(), sd, "set SaveCheckpointConfig.save_dataset = False");
    }
  }

  // --- loop ---
  s.total_steps = AtLeast(c.Query(kTrain, "total_steps"), 1);
  // t5x: when relative_steps is set, total_steps = start step + relative_steps.
  s.relative_steps = NoneOrAtLeast(c.Query(kTrain, "relative_steps"), 1);
  s.eval_steps = AtLeast(c.Query(kTrain, "eval_steps"), 1);
  {
    gin::Value ep = c.Query(kTrain, "eval_period");
    s.eval_period = NoneOrAtLeast(ep, 1);
    // t5x trains in "epochs" of min(eval_period, checkpoint period) steps and
    // raises ValueError unless both are multiples of it.
    if (s.train_eval_dataset && s.eval_period && s.save_checkpoints && s.checkpoint_period) {
      const int64_t e = *s.eval_period, k = *s.checkpoint_period;
      T5XX_CHECK(e % std::min(e, k) == 0 && k % std::min(e, k) == 0,
            Where(ep) + " = " + std::to_string(e) + " and utils.SaveCheckpointConfig.period = " +
                std::to_string(k) + " must be multiples of each other (t5x trains in "
                "\"epochs\" of the smaller period and raises ValueError otherwise); make the "
                "larger a multiple of the smaller");
    }
  }
  s.run_eval_before_training = c.Query(kTrain, "run_eval_before_training").AsBool();
  {
    // train.actions = {'TRAIN': [...], 'TRAIN_EVAL': [...]} (t5x ActionMode
    // names) of @trainer.EarlyStoppingAction() / @trainer.TerminateOnNanAction().
    constexpr char kEarlyStopping[] = "t5x.trainer.EarlyStoppingAction";
    constexpr char kTerminateOnNan[] = "t5x.trainer.TerminateOnNanAction";
    gin::Value actions = c.Query(kTrain, "actions");
    if (!actions.is_none()) {
      for (const auto& [key, list] : actions.AsDict()) {
        const std::string mode = key.AsString();
        T5XX_CHECK(mode == "TRAIN" || mode == "TRAIN_EVAL" || mode == "INFER_EVAL",
              Where(actions) + ": actions keys must be one of 'TRAIN', 'TRAIN_EVAL' "
                               "(t5x's ActionMode), got '" + mode + "'");
        Refuse(mode == "INFER_EVAL", actions,
               "t5xx has no inference evaluation yet; use 'TRAIN_EVAL' (teacher-forced)");
        for (const gin::Value& a : list.AsList()) {
          T5XX_CHECK(a.kind() == gin::Value::Kind::kReference && a.reference_evaluated() &&
                    (a.reference_name() == kEarlyStopping ||
                     a.reference_name() == kTerminateOnNan),
                Where(actions) + ": expected lists of @trainer.EarlyStoppingAction() or "
                                 "@trainer.TerminateOnNanAction(), got " + a.ToGinString());
          const std::string scope = a.reference_scope();
          trainer::ActionConfig ac;
          if (a.reference_name() == kEarlyStopping) {
            auto q = [&](const char* p) { return c.Query(kEarlyStopping, p, scope); };
            ac.kind = trainer::ActionConfig::Kind::kEarlyStopping;
            ac.gin_name = (scope.empty() ? "" : scope + "/") + "trainer.EarlyStoppingAction";
            const gin::Value metric = q("metric");
            const std::vector<gin::Value>& pair = metric.AsList();
            T5XX_CHECK(pair.size() == 2, Where(metric) + " = " + metric.ToGinString() +
                                        ": expected (task, metric name), e.g. ('my_task', "
                                        "'loss'), or ('train', 'loss') for TRAIN actions");
            ac.task = pair[0].AsString();
            ac.metric = pair[1].AsString();
            const gin::Value m = q("mode");
            ac.mode = m.AsString();
            T5XX_CHECK(ac.mode == "min" || ac.mode == "max",
                  Where(m) + " = " + m.ToGinString() + ": use 'min' or 'max'");
            ac.patience = AtLeast(q("patience"), 1);
            const gin::Value atol = q("atol"), rtol = q("rtol");
            ac.atol = atol.AsFloat();
            ac.rtol = rtol.AsFloat();
            T5XX_CHECK(ac.atol >= 0, Where(atol) + " must be >= 0, got " + atol.ToGinString());
            T5XX_CHECK(ac.rtol >= 0, Where(rtol) + " must be >= 0, got " + rtol.ToGinString());
          } else {
            auto q = [&](const char* p) { return c.Query(kTerminateOnNan, p, scope); };
            ac.kind = trainer::ActionConfig::Kind::kTerminateOnNan;
            ac.gin_name = (scope.empty() ? "" : scope + "/") + "trainer.TerminateOnNanAction";
            ac.task = q("task").AsString();
            ac.metric = q("metric").AsString();
          }
          (mode == "TRAIN" ? s.train_actions : s.train_eval_actions).push_back(ac);
        }
      }
    }
    gin::Value concurrent = c.Query(kTrain, "concurrent_metrics");
    T5XX_CHECK(s.train_actions.empty() || !concurrent.AsBool(),
          Where(concurrent) + " = True, but actions['TRAIN'] is set: t5x runs TRAIN actions "
                              "only with concurrent_metrics = False (and otherwise ignores "
                              "them with a warning); set train.concurrent_metrics = False");
  }
  {
    gin::Value sp = c.Query(kTrain, "stats_period");
    s.stats_period = NoneOrAtLeast(sp, 1);
    gin::Value seed = c.Query(kTrain, "random_seed");
    s.random_seed = seed.is_none() ? 0 : AtLeast(seed, 0);
    gin::Value hw = c.Query(kTrain, "use_hardware_rng");
    Refuse(hw.AsBool(), hw,
           "t5xx derives every random draw from random_seed; set USE_HARDWARE_RNG = False");
    gin::Value summarize = c.Query(kTrain, "summarize_config_fn");
    if (!summarize.is_none()) ExpectReference(summarize, kSummarize, /*evaluated=*/false);
  }
  return s;
}

LoadedTrainConfig LoadTrainConfig(const std::vector<std::string>& args,
                                  const std::string& command,
                                  const std::vector<std::string>& known_flags) {
  bool has_gin_file = false;
  for (const auto& a : args) has_gin_file = has_gin_file || a.rfind("--gin_file", 0) == 0;
  T5XX_CHECK(has_gin_file, "t5xx " + command + ": no --gin_file given; e.g. t5xx " + command +
                          " --gin_file=examples/t5_1_1_tiny_demo.gin --gin.MODEL_DIR=/tmp/run");
  LoadedTrainConfig out;
  out.registry = std::make_unique<gin::Registry>();
  gin::RegisterT5xConfigurables(*out.registry);
  RegisterPreprocessorConfigurables(*out.registry);
  out.config = std::make_unique<gin::Config>(out.registry.get());
  std::vector<std::string> rest = gin::ParseGinFlags(args, *out.config);
  out.flags = ParseFlags(rest, known_flags, command);
  // What train calls: t5x's train() and the gin-defined tasks and mixtures.
  out.config->Finalize({"__main__.train", "t5xx.seqio.register"});
  out.setup = ReadTrainSetup(*out.config);
  // Tasks are registered explicitly at start-up: the demo task first (so gin
  // mixtures may name it), then the tasks and mixtures defined in the gin
  // files, before train or config reads them.
  const std::string data_dir =
      out.flags.count("data_dir") ? out.flags["data_dir"] : seqio::DefaultDataDir();
  bool skip = false;
  if (auto it = out.flags.find("skip_bad_records"); it != out.flags.end()) {
    T5XX_CHECK(it->second == "true" || it->second == "false",
          "t5xx " + command + ": --skip_bad_records must be true or false, got '" + it->second +
              "'");
    skip = it->second == "true";
  }
  out.demo_problem = seqio::RegisterDemoTasks(data_dir, seqio::TaskRegistry::Global(), skip);
  RegisterGinTasks(*out.config, data_dir, seqio::TaskRegistry::Global(),
                   seqio::MixtureRegistry::Global(), skip);
  RequireAllBindingsRead(*out.config, command);
  return out;
}

}  // namespace t5xx::cli
