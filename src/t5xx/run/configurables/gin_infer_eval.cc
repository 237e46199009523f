// The configurables of t5x's infer() and evaluate() (t5x/infer.py,
// t5x/eval.py; gin roots __main__.infer and __main__.evaluate, as t5x's
// runs/infer.gin and runs/eval.gin bind them) and of seqio.Evaluator and
// its loggers, with t5x's and seqio's defaults, and how InferSetup and
// EvalSetup are read from them.
#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/storage/staged_output.h"
#include "t5xx/storage/url.h"
#include "t5xx/util/error.h"

namespace t5xx::run {
namespace {

using gin::Value;

constexpr char kInfer[] = "__main__.infer";
constexpr char kEvaluate[] = "__main__.evaluate";
constexpr char kEvaluator[] = "seqio.Evaluator";
constexpr char kJsonLogger[] = "seqio.JSONLogger";
constexpr char kTensorBoardLogger[] = "seqio.TensorBoardLogger";
constexpr char kPyLoggingLogger[] = "seqio.PyLoggingLogger";
constexpr char kWriteInferences[] = "__main__.write_inferences_to_file";

}  // namespace

void RegisterInferEvalConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  gin::ParamSpec mode = Optional("mode", T::kString, S("predict"),
                                 "'predict', 'score' or 'predict_with_aux'.");
  mode.allowed_strings = {"predict", "score", "predict_with_aux"};
  r.Register({kInfer,
              {mode, Required("model", T::kReference), Required("dataset_cfg", T::kReference),
               Required("restore_checkpoint_cfg", T::kReference),
               Required("partitioner", T::kReference), Required("output_dir", T::kString),
               Optional("checkpoint_period", T::kInt, I(100),
                        "Batches per chunk: each finished chunk is written and never "
                        "recomputed when the run is restarted."),
               Optional("shard_id", T::kInt, I(0), "This job's part of the dataset."),
               Optional("num_shards", T::kInt, I(1), "Jobs the dataset is split across."),
               Optional("merge_chunked_results", T::kBool, B(true),
                        "Merge the chunks into <task>-<mode>.jsonl-NNNNN-of-NNNNN."),
               Optional("write_fn", T::kReference, Value::Reference(kWriteInferences, "", false),
                        "infer.write_inferences_to_file (its output_ids adds the tokens)."),
               Optional("checkpoint_ds_iter", T::kBool, B(true),
                        "t5xx: chunks are skipped by position either way."),
               Optional("fallback_init_rng", T::kOptionalInt, None()),
               Optional("file_extension", T::kString, S("jsonl")),
               Optional("use_orbax", T::kBool, B(true),
                        "t5xx reads Orbax's and t5x's legacy checkpoints alike, whatever this "
                        "says.")},
              "The inference entry point (t5x/infer.py's infer)."});
  r.Register({kWriteInferences,
              {Optional("output_ids", T::kBool, B(false),
                        "Also write the predicted token ids (prediction_tokens)."),
               Optional("include_all_inputs", T::kBool, B(false))},
              "Writes inferences as JSON lines (t5x/infer.py)."});
  r.Register({kEvaluate,
              {Required("model", T::kReference), Required("dataset_cfg", T::kReference),
               Required("restore_checkpoint_cfg", T::kReference),
               Required("partitioner", T::kReference), Required("output_dir", T::kString),
               Optional("inference_evaluator_cls", T::kReference,
                        Value::Reference(kEvaluator, "", false)),
               Optional("summarize_config_fn", T::kOptionalReference, None()),
               Optional("train_eval_dataset_cfg", T::kOptionalReference, None()),
               Optional("fallback_init_rng", T::kOptionalInt, None()),
               Optional("use_orbax", T::kBool, B(true),
                        "t5xx reads Orbax's and t5x's legacy checkpoints alike, whatever this "
                        "says.")},
              "The evaluation entry point (t5x/eval.py's evaluate)."});
  r.Register({kEvaluator,
              {Optional("logger_cls", T::kList,
                        Value::List({Value::Reference(kPyLoggingLogger, "", false),
                                     Value::Reference(kTensorBoardLogger, "", false),
                                     Value::Reference(kJsonLogger, "", false)})),
               Optional("num_examples", T::kOptionalInt, None(),
                        "Evaluate the first num_examples examples of each task (None: all)."),
               Optional("use_memory_cache", T::kBool, B(true),
                        "t5xx always keeps the evaluation examples in memory.")},
              "Decodes each task's split and computes its metric_fns (seqio/evaluation.py)."});
  r.Register({kJsonLogger,
              {Optional("write_n_results", T::kOptionalInt, None(),
                        "Inferences written per step (None: all).")},
              "<task>-metrics.jsonl and <task>-<step>.jsonl in the log dir."});
  r.Register({kTensorBoardLogger, {}, "eval/<metric> summaries under <log dir>/<task>/."});
  r.Register({kPyLoggingLogger, {}, "Prints each metric."});
}

EvaluatorConfig ReadEvaluatorConfig(gin::Config& c, const Value& evaluator_cls) {
  const std::string s = gin::ExpectReference(evaluator_cls, kEvaluator, /*evaluated=*/false);
  EvaluatorConfig e;
  e.num_examples = gin::NoneOrAtLeast(c.Query(kEvaluator, "num_examples", s), 1);
  c.Query(kEvaluator, "use_memory_cache", s).AsBool();
  const Value loggers = c.Query(kEvaluator, "logger_cls", s);
  e.json_logger = e.tensorboard_logger = e.console_logger = false;
  for (const Value& l : loggers.AsList()) {
    const std::string& kind =
        gin::ExpectOneOf(l, {kJsonLogger, kTensorBoardLogger, kPyLoggingLogger}, "a logger_cls");
    T5XX_CHECK(!l.reference_evaluated(),
               gin::Where(loggers) + ": logger_cls takes classes, @" +
                   kind.substr(kind.find('.') + 1) + " (without the parentheses)");
    if (kind == kJsonLogger) {
      e.json_logger = true;
      e.json_write_n_results = gin::NoneOrAtLeast(
          c.Query(kJsonLogger, "write_n_results", gin::CallScope(s, l)), 0);
    } else if (kind == kTensorBoardLogger) {
      e.tensorboard_logger = true;
    } else {
      e.console_logger = true;
    }
  }
  return e;
}

namespace {

// infer's / evaluate's fallback_init_rng: parameters the checkpoint lacks
// (e.g. a prompt, prompt-tuning's prompt_eval.gin) keep their
// initialisation, made with t5xx's generator seeded with it (JAX's PRNG
// makes other values; a prompt from prompts.from_array is the file's either
// way). Sets the restore's fallback_to_scratch.
std::optional<int64_t> FallbackInitRng(gin::Config& c, const char* fn,
                                       RestoreCheckpointConfig& restore) {
  const Value rng = c.Query(fn, "fallback_init_rng");
  const std::string short_fn = std::string(fn).substr(std::string(fn).rfind('.') + 1);
  T5XX_CHECK(!rng.is_none() || !restore.options.fallback_to_scratch,
             "utils.RestoreCheckpointConfig.fallback_to_scratch = True needs " + short_fn +
                 ".fallback_init_rng to initialise what the checkpoint lacks (t5x raises "
                 "\"An `init_rng` must be provided with `fallback_to_scratch`\"); bind "
                 "--gin." + short_fn + ".fallback_init_rng=0 (prompt-tuning's prompt_" +
                 (short_fn == "evaluate" ? "eval" : "infer") +
                 ".gin does), or fallback_to_scratch = False");
  if (rng.is_none()) return std::nullopt;
  restore.options.fallback_to_scratch = true;
  return gin::AtLeast(rng, 0);
}

}  // namespace

InferSetup ReadInferSetup(gin::Config& c) {
  InferSetup s;
  s.mode = c.Query(kInfer, "mode").AsString();
  std::string model_name, model_scope;
  s.model = ReadModel(c, kInfer, &model_name, &model_scope);
  // Read (and so checked) as t5x builds the model with it, though inference
  // never uses the optimizer.
  ReadOptimizer(c, model_name, model_scope);
  s.output_dir = c.Query(kInfer, "output_dir").AsString();
  T5XX_CHECK(!s.output_dir.empty(),
             "infer.output_dir (INFER_OUTPUT_DIR) is empty; pass --gin.INFER_OUTPUT_DIR=\"'/path'\"");
  s.output_dir = storage::StagedOutputPath(s.output_dir, "infer.output_dir (INFER_OUTPUT_DIR)");
  s.dataset = ReadDatasetConfig(
      c, gin::ExpectReference(c.Query(kInfer, "dataset_cfg"), kDatasetConfig));
  s.restore = ReadRestoreConfig(
      c, gin::ExpectReference(c.Query(kInfer, "restore_checkpoint_cfg"), kRestoreConfig),
      /*allow_all=*/false);
  ReadPartitioner(c, kInfer, &s.num_partitions, &s.logical_axis_rules);
  s.checkpoint_period = gin::AtLeast(c.Query(kInfer, "checkpoint_period"), 1);
  const Value shard_id = c.Query(kInfer, "shard_id"), num_shards = c.Query(kInfer, "num_shards");
  s.num_shards = gin::AtLeast(num_shards, 1);
  s.shard_id = gin::AtLeast(shard_id, 0);
  T5XX_CHECK(s.shard_id < s.num_shards,
             gin::Where(shard_id) + " = " + shard_id.ToGinString() + " must be below " +
                 gin::Where(num_shards) + " = " + num_shards.ToGinString());
  s.merge_chunked_results = c.Query(kInfer, "merge_chunked_results").AsBool();
  const Value write_fn = c.Query(kInfer, "write_fn");
  const std::string ws = gin::ExpectReference(write_fn, kWriteInferences, /*evaluated=*/false);
  s.output_ids = c.Query(kWriteInferences, "output_ids", ws).AsBool();
  const Value all_inputs = c.Query(kWriteInferences, "include_all_inputs", ws);
  gin::Refuse(all_inputs.AsBool(), all_inputs,
              "t5xx writes the *_pretokenized inputs; set include_all_inputs = False");
  c.Query(kInfer, "checkpoint_ds_iter").AsBool();
  c.Query(kInfer, "use_orbax").AsBool();  // either layout is read
  s.fallback_init_rng = FallbackInitRng(c, kInfer, s.restore);
  const Value ext = c.Query(kInfer, "file_extension");
  T5XX_CHECK(!ext.AsString().empty() && ext.AsString().find('/') == std::string::npos,
             gin::Where(ext) + " = " + ext.ToGinString() + " must be a plain file extension");
  s.file_extension = ext.AsString();
  return s;
}

EvalSetup ReadEvalSetup(gin::Config& c) {
  EvalSetup s;
  std::string model_name, model_scope;
  s.model = ReadModel(c, kEvaluate, &model_name, &model_scope);
  ReadOptimizer(c, model_name, model_scope);  // checked, unused (as infer)
  s.output_dir = c.Query(kEvaluate, "output_dir").AsString();
  T5XX_CHECK(!s.output_dir.empty(),
             "evaluate.output_dir (EVAL_OUTPUT_DIR) is empty; pass "
             "--gin.EVAL_OUTPUT_DIR=\"'/path'\"");
  s.output_dir = storage::StagedOutputPath(s.output_dir, "evaluate.output_dir (EVAL_OUTPUT_DIR)");
  s.dataset = ReadDatasetConfig(
      c, gin::ExpectReference(c.Query(kEvaluate, "dataset_cfg"), kDatasetConfig),
      /*allow_none_lengths=*/true);
  s.restore = ReadRestoreConfig(
      c, gin::ExpectReference(c.Query(kEvaluate, "restore_checkpoint_cfg"), kRestoreConfig),
      /*allow_all=*/true);
  ReadPartitioner(c, kEvaluate, &s.num_partitions, &s.logical_axis_rules);
  s.evaluator = ReadEvaluatorConfig(c, c.Query(kEvaluate, "inference_evaluator_cls"));
  const Value summarize = c.Query(kEvaluate, "summarize_config_fn");
  if (!summarize.is_none()) gin::ExpectReference(summarize, kSummarizeGinConfig, /*evaluated=*/false);
  const Value te = c.Query(kEvaluate, "train_eval_dataset_cfg");
  gin::Refuse(!te.is_none(), te,
              "t5xx eval runs the inference evaluation; teacher-forced metrics come from "
              "train's train_eval_dataset_cfg");
  c.Query(kEvaluate, "use_orbax").AsBool();  // either layout is read
  s.fallback_init_rng = FallbackInitRng(c, kEvaluate, s.restore);
  return s;
}

}  // namespace t5xx::run
