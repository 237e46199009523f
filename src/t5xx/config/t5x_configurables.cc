#include "t5xx/config/t5x_configurables.h"

#include <utility>
#include <vector>

namespace t5xx::gin {

namespace {

using T = ParamType;

ParamSpec Required(std::string name, ParamType type, std::string doc = "") {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.required = true;
  p.doc = std::move(doc);
  return p;
}

ParamSpec Optional(std::string name, ParamType type, Value default_value, std::string doc = "") {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.default_value = std::move(default_value);
  p.doc = std::move(doc);
  return p;
}

Value I(int64_t v) { return Value::Int(v); }
Value F(double v) { return Value::Float(v); }
Value B(bool v) { return Value::Bool(v); }
Value S(std::string v) { return Value::String(std::move(v)); }
Value None() { return Value::None(); }

}  // namespace

void RegisterT5xConfigurables(Registry& r) {
  {
    ParamSpec lnf = Optional("loss_normalizing_factor", T::kOptionalFloat, None(),
                             "Divides the summed loss; a number, None, or a special factor name.");
    lnf.allowed_strings = {"NUM_REAL_TARGET_TOKENS", "NUM_TOTAL_TARGET_TOKENS",
                           "AVERAGE_PER_SEQUENCE"};
    r.Register({"t5x.models.EncoderDecoderModel",
                {Required("module", T::kReference, "The flax network (network.Transformer)."),
                 Required("input_vocabulary", T::kReference),
                 Required("output_vocabulary", T::kReference),
                 Required("optimizer_def", T::kReference),
                 Optional("z_loss", T::kFloat, F(0.0), "Coefficient of the log(Z)^2 auxiliary loss."),
                 Optional("label_smoothing", T::kFloat, F(0.0)),
                 lnf},
                "Encoder-decoder model: loss, scoring and decoding around a network."});
    r.Register({"t5x.models.DecoderOnlyModel",
                {Required("module", T::kReference, "The flax network (network.DecoderWrapper)."),
                 Required("vocabulary", T::kReference),
                 Required("optimizer_def", T::kReference),
                 Optional("inputs_bidirectional_attention", T::kBool, B(false),
                          "Prefix LM: the inputs attend to each other bidirectionally."),
                 Optional("z_loss", T::kFloat, F(0.0), "Coefficient of the log(Z)^2 auxiliary loss."),
                 Optional("label_smoothing", T::kFloat, F(0.0)),
                 lnf},
                "Decoder-only (GPT-style or prefix-LM) model: loss, scoring and decoding around "
                "a network."});
  }
  r.Register({"t5x.examples.t5.network.Transformer",
              {Required("config", T::kReference, "A network.T5Config.")},
              "The T5.1.1 encoder-decoder network."});
  r.Register({"t5x.examples.t5.network.T5Config",
              {Required("vocab_size", T::kInt),
               Optional("dtype", T::kString, S("float32"),
                        "Activation dtype: 'float32' or 'bfloat16' (parameters stay float32)."),
               Required("emb_dim", T::kInt),
               Required("num_heads", T::kInt),
               Required("num_encoder_layers", T::kInt),
               Required("num_decoder_layers", T::kInt),
               Required("head_dim", T::kInt),
               Required("mlp_dim", T::kInt),
               Optional("mlp_activations", T::kList, Value::Tuple({S("relu")})),
               Optional("dropout_rate", T::kFloat, F(0.1)),
               Optional("logits_via_embedding", T::kBool, B(false)),
               Optional("float32_attention_logits", T::kBool, B(false),
                        "With dtype 'bfloat16': attention logits and softmax in float32."),
               Optional("remat_policy", T::kString, S("none"),
                        "t5xx only: 'none', or 'full' to recompute each layer in the backward "
                        "pass (activation checkpointing).")},
              "Hyperparameters of the T5.1.1 network."});
  r.Register({"t5x.examples.decoder_only.network.DecoderWrapper",
              {Required("config", T::kReference, "A network.TransformerConfig.")},
              "The decoder-only network."});
  r.Register({"t5x.examples.decoder_only.network.TransformerConfig",
              {Required("vocab_size", T::kInt),
               Optional("dtype", T::kString, S("float32"),
                        "Activation dtype: 'float32' or 'bfloat16' (parameters stay float32)."),
               Required("emb_dim", T::kInt),
               Required("num_heads", T::kInt),
               Required("num_layers", T::kInt),
               Required("head_dim", T::kInt),
               Required("mlp_dim", T::kInt),
               Optional("mlp_activations", T::kList, Value::Tuple({S("relu")})),
               Optional("dropout_rate", T::kFloat, F(0.1)),
               Optional("logits_via_embedding", T::kBool, B(false)),
               Optional("remat_policy", T::kString, S("none"),
                        "t5xx only: 'none', or 'full' to recompute each layer in the backward "
                        "pass (activation checkpointing).")},
              "Hyperparameters of the decoder-only network."});
  r.Register({"seqio.SentencePieceVocabulary",
              {Required("sentencepiece_model_file", T::kString),
               Optional("extra_ids", T::kInt, I(0), "Sentinel ids appended to the vocabulary.")},
              "A SentencePiece vocabulary."});
  r.Register({"seqio.Feature",
              {Required("vocabulary", T::kReference),
               Optional("add_eos", T::kBool, B(true), "append_eos(_after_trim) acts on it."),
               Optional("required", T::kBool, B(true), "The task fails when it is missing.")},
              "An output feature of a seqio Task (output_features of seqio.Task)."});
  // seqio tasks and mixtures defined in gin (built by the CLI at start-up,
  // src/t5xx/cli/gin_tasks.h; preprocessors are registered there too, from
  // the seqio PreprocessorRegistry).
  r.Register({"seqio.Task",
              {Required("name", T::kString),
               Required("source", T::kReference, "A data source, e.g. @seqio.TextLineDataSource()."),
               Optional("preprocessors", T::kList, Value::List({}),
                        "Preprocessor references, e.g. [@seqio.preprocessors.append_eos]."),
               Required("output_features", T::kDict, "{'targets': @seqio.Feature()}"),
               Optional("shuffle_buffer_size", T::kOptionalInt, I(1000),
                        "None forbids shuffling."),
               Optional("postprocess_fn", T::kOptionalReference, None(),
                        "e.g. @t5.data.postprocessors.string_label_to_class_id (None = the "
                        "decoded text)."),
               Optional("metric_fns", T::kList, Value::List({}),
                        "e.g. [@t5.evaluation.metrics.accuracy]")},
              "A seqio Task defined in gin; list it in t5xx.seqio.register.tasks."});
  // Postprocessors and metrics for seqio.Task.postprocess_fn / metric_fns
  // (src/t5xx/data/postprocessors.h, evaluation.h).
  r.Register({"t5.data.postprocessors.string_to_float",
              {Optional("default", T::kFloat, F(-1.0), "Returned when the text is no float.")},
              "Parses the decoded text as a float."});
  r.Register({"t5.data.postprocessors.lower_text", {}, "Lowercases the decoded text."});
  r.Register({"t5.data.postprocessors.string_label_to_class_id",
              {Required("label_classes", T::kList, "The class names, in id order."),
               Optional("default", T::kInt, I(-1), "Returned for an unknown label.")},
              "Maps the decoded label text to its class id."});
  r.Register({"t5.data.postprocessors.qa", {},
              "Targets become the example's 'answers'; predictions stay text."});
  for (const char* m : {"accuracy", "sequence_accuracy", "f1_score_with_invalid", "squad"}) {
    r.Register({std::string("t5.evaluation.metrics.") + m, {}, "A t5 evaluation metric."});
  }
  r.Register({"t5.evaluation.metrics.mean_multiclass_f1",
              {Required("num_classes", T::kInt)},
              "Macro-averaged F1 over num_classes labels."});
  r.Register({"seqio.Mixture",
              {Required("name", T::kString),
               Required("tasks", T::kList, "Task/mixture names or (name, rate) tuples."),
               Optional("default_rate", T::kOptionalFloat, None()),
               Optional("sample_fn", T::kOptionalReference, None(),
                        "None = seqio's default, sample_from_datasets with "
                        "stop_on_empty_dataset=True (the mixture ends when a drawn task runs "
                        "dry); @tf.data.Dataset.sample_from_datasets takes its "
                        "stop_on_empty_dataset binding (TF's default False: keep sampling the "
                        "other tasks).")},
              "A seqio Mixture defined in gin; list it in t5xx.seqio.register.mixtures."});
  r.Register({"tf.data.Dataset.sample_from_datasets",
              {Optional("stop_on_empty_dataset", T::kBool, B(false),
                        "True: stop when a drawn dataset is empty; False (TF's default): drop "
                        "it and renormalise the others' rates.")},
              "How a seqio.Mixture samples its tasks (seqio.Mixture.sample_fn)."});
  r.Register({"seqio.TextLineDataSource",
              {Required("split_to_filepattern", T::kDict),
               Optional("skip_header_lines", T::kInt, I(0))},
              "One example {'text': line} per line of the files."});
  r.Register({"seqio.TFExampleDataSource",
              {Required("split_to_filepattern", T::kDict),
               Optional("feature_keys", T::kOptionalList, None(),
                        "t5xx only: the tf.Example keys to read (None = all)."),
               Optional("skip_bad_records", T::kOptionalBool, None(),
                        "t5xx only: skip and count records with a bad CRC or an unparsable "
                        "tf.Example instead of failing (None = the --skip_bad_records flag).")},
              "TFRecord files of tf.Example."});
  r.Register({"t5xx.seqio.JsonLinesDataSource",
              {Required("split_to_filepattern", T::kDict),
               Optional("fields", T::kOptionalList, None(), "Fields to read (None = all)."),
               Optional("skip_bad_records", T::kOptionalBool, None(),
                        "Skip and count malformed lines instead of failing (None = the "
                        "--skip_bad_records flag).")},
              "JSON lines: string fields become text, arrays of ints become token ids."});
  r.Register({"seqio.ByteVocabulary", {Optional("extra_ids", T::kInt, I(0))},
              "The ByT5 byte vocabulary."});
  r.Register({"seqio.PassThroughVocabulary",
              {Required("size", T::kInt), Optional("eos_id", T::kOptionalInt, None())},
              "Identity vocabulary over token ids."});
  r.Register({"t5xx.seqio.register",
              {Optional("tasks", T::kList, Value::List({}), "[@my_task/seqio.Task(), ...]"),
               Optional("mixtures", T::kList, Value::List({}), "[@my_mix/seqio.Mixture(), ...]")},
              "The gin-defined tasks and mixtures that t5xx adds to seqio's registries at "
              "start-up, in order (a mixture after the tasks and mixtures it names)."});
  r.Register({"t5x.adafactor.Adafactor",
              {Optional("learning_rate", T::kOptionalFloat, None(),
                        "Set by the trainer's learning_rate_fn; leave None."),
               Optional("factored", T::kBool, B(true)),
               Optional("multiply_by_parameter_scale", T::kBool, B(true)),
               Optional("beta1", T::kOptionalFloat, None(), "Momentum; None = no m slot."),
               Optional("decay_rate", T::kFloat, F(0.8)),
               Optional("step_offset", T::kInt, I(0)),
               Optional("clipping_threshold", T::kOptionalFloat, F(1.0)),
               Optional("weight_decay_rate", T::kOptionalFloat, None()),
               Optional("min_dim_size_to_factor", T::kInt, I(128)),
               Optional("epsilon1", T::kFloat, F(1e-30)),
               Optional("epsilon2", T::kFloat, F(1e-3)),
               Optional("dtype_momentum", T::kString, S("float32"), "'float32' or 'bfloat16'."),
               Optional("factor_map", T::kAny, None(), "Not supported: use logical_factor_rules."),
               Optional("logical_factor_rules", T::kAny, None(),
                        "@adafactor.standard_logical_factor_rules() or a dict from logical axis "
                        "name to 'row', 'column', 'batch' or 'none'."),
               Optional("weight_decay_rate_lr_exponent", T::kOptionalFloat, None()),
               Optional("global_norm_clip_threshold", T::kOptionalFloat, None()),
               Optional("max_parameter_scale", T::kOptionalFloat, None()),
               Optional("skip_nan_updates", T::kOptionalBool, B(false))},
              "The Adafactor optimizer (t5x's own implementation)."});
  r.Register({"t5x.adafactor.standard_logical_factor_rules", {},
              "Factorization rules by logical axis name."});
  {
    // optax.adamw's signature; t5x.optimizers.adamw wraps it (OptaxWrapper).
    auto adamw_params = [] {
      return std::vector<ParamSpec>{
          Required("learning_rate", T::kAny,
                   "A float or @utils.create_learning_rate_scheduler()."),
          Optional("b1", T::kFloat, F(0.9)),
          Optional("b2", T::kFloat, F(0.999)),
          Optional("eps", T::kFloat, F(1e-8)),
          Optional("eps_root", T::kFloat, F(0.0)),
          Optional("mu_dtype", T::kOptionalString, None(), "None, 'float32' or 'bfloat16'."),
          Optional("weight_decay", T::kFloat, F(1e-4)),
          Optional("mask", T::kAny, None(), "Only None (decay every parameter)."),
          Optional("nesterov", T::kBool, B(false))};
    };
    r.Register({"t5x.optimizers.adamw", adamw_params(),
                "optax.adamw wrapped as a t5x optimizer (OptaxWrapper)."});
    r.Register({"optax.adamw", adamw_params(),
                "The optax AdamW transformation, for optimizers.chain."});
  }
  r.Register({"t5x.optimizers.chain",
              {Required("transformations", T::kList,
                        "[@optax.clip_by_global_norm(), @optax.adamw()]")},
              "A chain of optax transformations wrapped as a t5x optimizer."});
  r.Register({"optax.clip_by_global_norm", {Required("max_norm", T::kFloat)},
              "Scales all updates down when their global L2 norm exceeds max_norm."});
  r.Register({"optax.clip", {Required("max_delta", T::kFloat)},
              "Clips every update element to [-max_delta, max_delta]."});
  r.Register({"t5x.partitioning.PjitPartitioner",
              {Optional("num_partitions", T::kOptionalInt, None()),
               Optional("model_parallel_submesh", T::kAny, None()),
               Optional("logical_axis_rules", T::kAny, None())},
              "Partitions the model and data over the device mesh."});
  r.Register({"t5x.partitioning.standard_logical_axis_rules",
              {Optional("activation_partitioning_dims", T::kInt, I(1)),
               Optional("parameter_partitioning_dims", T::kInt, I(1))},
              "Default mapping of logical axes to mesh axes."});
  r.Register({"t5x.utils.DatasetConfig",
              {Required("mixture_or_task_name", T::kString),
               Required("task_feature_lengths", T::kDict),
               Required("split", T::kString),
               Required("batch_size", T::kInt),
               Required("shuffle", T::kBool),
               Required("seed", T::kOptionalInt),
               Optional("use_cached", T::kBool, B(false)),
               Optional("pack", T::kBool, B(false)),
               Optional("use_custom_packing_ops", T::kBool, B(false),
                        "No effect in t5xx: it has one packer (seqio's trim_and_pack), whose "
                        "output the custom ops equal."),
               Optional("module", T::kOptionalString, None()),
               Optional("use_memory_cache", T::kBool, B(true),
                        "No effect in t5xx: train-eval streams are rebuilt per evaluation."),
               Optional("trim_output_features", T::kBool, B(true),
                        "Cut each output feature to its task feature length after "
                        "preprocessing (seqio's default); False makes an over-long feature "
                        "an error.")},
              "Which seqio task/mixture to read and how to batch it."});
  r.Register({"t5x.utils.CheckpointConfig",
              {Optional("save", T::kOptionalReference, None()),
               Optional("restore", T::kOptionalReference, None())},
              "Checkpoint saving and restoring options."});
  r.Register({"t5x.utils.SaveCheckpointConfig",
              {Optional("period", T::kOptionalInt, None()),
               Optional("dtype", T::kString, S("float32")),
               Optional("keep", T::kOptionalInt, None()),
               Optional("save_dataset", T::kBool, B(false))},
              "When and how to save checkpoints."});
  r.Register({"t5x.trainer.Trainer",
              {Optional("num_microbatches", T::kOptionalInt, None()),
               Required("learning_rate_fn", T::kReference)},
              "Runs train and eval steps."});
  r.Register({"t5x.utils.create_learning_rate_scheduler",
              {Optional("factors", T::kString, S("constant * linear_warmup * rsqrt_decay")),
               Optional("base_learning_rate", T::kFloat, F(0.5)),
               Optional("warmup_steps", T::kInt, I(1000)),
               Optional("decay_factor", T::kFloat, F(0.5)),
               Optional("steps_per_decay", T::kInt, I(20000)),
               Optional("steps_per_cycle", T::kInt, I(100000)),
               Optional("step_offset", T::kInt, I(0)),
               Optional("min_learning_rate", T::kFloat, F(1e-8))},
              "Learning rate as a product of named factors."});
  r.Register({"t5x.gin_utils.summarize_gin_config", {},
              "Writes the operative config to the model dir and summaries."});
  r.Register({"__main__.train",
              {Required("model", T::kReference),
               Required("model_dir", T::kString),
               Required("train_dataset_cfg", T::kReference),
               Optional("train_eval_dataset_cfg", T::kOptionalReference, None()),
               Required("checkpoint_cfg", T::kReference),
               Required("partitioner", T::kReference),
               Required("trainer_cls", T::kReference),
               Required("total_steps", T::kInt),
               Optional("eval_steps", T::kInt, I(10)),
               Optional("eval_period", T::kOptionalInt, None()),
               Optional("stats_period", T::kOptionalInt, None()),
               Optional("random_seed", T::kOptionalInt, None()),
               Optional("use_hardware_rng", T::kBool, B(false)),
               Optional("summarize_config_fn", T::kOptionalReference, None()),
               Optional("relative_steps", T::kOptionalInt, None(),
                        "Train this many steps beyond the start step; when set, total_steps "
                        "is ignored (t5x)."),
               Optional("run_eval_before_training", T::kBool, B(false),
                        "Run the train-eval once at the start step, before training."),
               Optional("actions", T::kOptionalDict, None(),
                        "{'TRAIN': [...], 'TRAIN_EVAL': [...]}: trainer.EarlyStoppingAction() / "
                        "trainer.TerminateOnNanAction() run after each summary."),
               Optional("concurrent_metrics", T::kBool, B(true),
                        "t5x computes metrics asynchronously when True and then skips TRAIN "
                        "actions; t5xx requires False when TRAIN actions are given.")},
              "The train entry point (t5x/train.py's train)."});
  r.Register({"t5x.trainer.EarlyStoppingAction",
              {Required("metric", T::kList, "(task, metric name), e.g. ('my_task', 'loss')."),
               Required("mode", T::kString, "'min' or 'max'."),
               Optional("patience", T::kInt, I(3)),
               Optional("atol", T::kFloat, F(0.0)),
               Optional("rtol", T::kFloat, F(0.0))},
              "Stops training when a metric has not improved over `patience` summaries."});
  r.Register({"t5x.trainer.TerminateOnNanAction",
              {Required("task", T::kString), Optional("metric", T::kString, S("loss"))},
              "Stops training when a metric is NaN or infinite."});
}

}  // namespace t5xx::gin
