// t5x's train() and what it calls besides the model and the data --
// __main__.train, t5x.trainer.{Trainer, EarlyStoppingAction,
// TerminateOnNanAction}, t5x.partitioning.{PjitPartitioner,
// standard_logical_axis_rules}, t5x.utils.{CheckpointConfig,
// SaveCheckpointConfig}, t5x.gin_utils.summarize_gin_config -- their
// configurables with t5x's defaults, and ReadTrainSetup (train_setup.h),
// which reads the whole run.
#include <algorithm>

#include "t5xx/checkpoints/bucket_model_dir.h"
#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/run/configurables/gin_checkpointer.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/seqio_gin/seqio_gin.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/util/error.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/util/names.h"

namespace t5xx::run {
namespace {

using gin::Value;

constexpr char kTrain[] = "__main__.train";
constexpr char kTrainer[] = "t5x.trainer.Trainer";
constexpr char kPartitioner[] = "t5x.partitioning.PjitPartitioner";
constexpr char kAxisRules[] = "t5x.partitioning.standard_logical_axis_rules";
constexpr char kPromptAxisRules[] = "prompt_tuning.train.partitioning.standard_logical_axis_rules";
constexpr char kCheckpointConfig[] = "t5x.utils.CheckpointConfig";
constexpr char kSaveConfig[] = "t5x.utils.SaveCheckpointConfig";
constexpr char kEarlyStopping[] = "t5x.trainer.EarlyStoppingAction";
constexpr char kTerminateOnNan[] = "t5x.trainer.TerminateOnNanAction";

}  // namespace

const char kRestoreConfig[] = "t5x.utils.RestoreCheckpointConfig";

void ReadPartitioner(gin::Config& c, const std::string& root, int64_t* num_partitions,
                     partitioning::LogicalAxisRules* out_rules, bool* reshard_after_forward) {
  const std::string scope = gin::ExpectReference(c.Query(root, "partitioner"), kPartitioner);
  const Value np = c.Query(kPartitioner, "num_partitions", scope);
  *num_partitions = np.is_none() ? 1 : gin::AtLeast(np, 1);
  if (reshard_after_forward) {
    *reshard_after_forward = c.Query(kPartitioner, "reshard_after_forward", scope).AsBool();
  }
  partitioning::LogicalAxisRules& rules_out = *out_rules;
  const Value sub = c.Query(kPartitioner, "model_parallel_submesh", scope);
  if (!sub.is_none()) {
    // t5x's default_mesh: a submesh (x, y, z, cores) takes precedence over
    // num_partitions; its devices form the 'model' axis. t5xx's processes
    // have no TPU topology: only its size counts.
    T5XX_CHECK((sub.kind() == Value::Kind::kTuple || sub.kind() == Value::Kind::kList) &&
                   sub.AsList().size() == 4,
               sub.location().ToString() + ": " + std::string(kPartitioner) +
                   ".model_parallel_submesh = " + sub.ToGinString() +
                   " must be a 4-tuple (x, y, z, cores) of positive ints, or None");
    int64_t size = 1;
    for (const Value& d : sub.AsList()) size *= gin::AtLeast(d, 1);
    *num_partitions = size;
  }
  // A literal rule list, as t5x's docs write them: [('batch', 'data'),
  // ('embed', None), ...], appended to rules_out.
  auto append_rules = [&rules_out](const Value& rules) {
    for (const Value& rule : rules.AsList()) {
      const std::vector<Value>& pair = rule.AsList();
      T5XX_CHECK(pair.size() == 2,
                 rule.location().ToString() + ": a logical axis rule is a pair (logical axis, "
                 "'data' / 'model' / None), got " + rule.ToGinString());
      std::optional<std::string> mesh;
      if (!pair[1].is_none()) {
        mesh = pair[1].AsString();
        T5XX_CHECK(*mesh == "data" || *mesh == "model",
                   pair[1].location().ToString() + ": mesh axis '" + *mesh +
                       "' in logical_axis_rules; the mesh axes are 'data' and 'model'");
      }
      rules_out.emplace_back(pair[0].AsString(), mesh);
    }
  };
  const Value rules = c.Query(kPartitioner, "logical_axis_rules", scope);
  if (rules.is_none()) {
    rules_out = partitioning::StandardLogicalAxisRules();
  } else if (rules.kind() == Value::Kind::kList || rules.kind() == Value::Kind::kTuple) {
    rules_out.clear();
    append_rules(rules);
  } else {
    const std::string rs = gin::ExpectReference(rules, kAxisRules, true, scope);
    rules_out = partitioning::StandardLogicalAxisRules(
        static_cast<int>(c.Query(kAxisRules, "activation_partitioning_dims", rs).AsInt()),
        static_cast<int>(c.Query(kAxisRules, "parameter_partitioning_dims", rs).AsInt()));
    // t5x appends additional_rules; prompt-tuning's are its replicated axes.
    const Value more = c.Query(kAxisRules, "additional_rules", rs);
    if (more.kind() == Value::Kind::kReference) {
      gin::ExpectReference(more, kPromptAxisRules, true, rs);
      for (const char* axis : {"prompt", "prompt_embed"}) rules_out.emplace_back(axis, std::nullopt);
    } else if (!more.is_none()) {
      append_rules(more);
    }
  }
}

RestoreCheckpointConfig ReadRestoreConfig(gin::Config& c, const std::string& rs,
                                          bool allow_all, bool allow_no_path) {
  auto q = [&](const char* p) { return c.Query(kRestoreConfig, p, rs); };
  RestoreCheckpointConfig r;
  const Value path = q("path");
  r.where = gin::Where(path);
  if (path.kind() == Value::Kind::kString) {
    r.paths = {path.AsString()};
  } else {
    T5XX_CHECK(path.kind() == Value::Kind::kList || path.kind() == Value::Kind::kTuple,
               gin::Where(path) + " = " + path.ToGinString() +
                   ": expected a checkpoint path or a list of them (e.g. "
                   "INITIAL_CHECKPOINT_PATH = '/ckpts/t5_small/checkpoint_1000000')");
    r.paths = gin::StringList(path);
  }
  // t5x's train: "`path` is an empty (non-`str`) sequence, so there is
  // nothing to restore" (runs/pretrain.gin: path = []); infer and eval
  // restore what it names.
  T5XX_CHECK(!r.paths.empty() || (allow_no_path && path.kind() != Value::Kind::kString),
             gin::Where(path) + " is empty; give a checkpoint path (an empty list means no "
                                "restore only in train)");
  const Value mode = q("mode");
  r.mode = mode.AsString();
  for (std::string& p : r.paths) {
    T5XX_CHECK(!p.empty(), gin::Where(path) + " holds an empty path; give a checkpoint path");
    std::error_code ec;
    if (r.mode == "latest" && IsRemotePath(p) &&
        !(!RemoteCopyDataDir().empty() && std::filesystem::exists(RemoteCopyPath(p, RemoteCopyDataDir()), ec))) {
      // Only the newest committed checkpoint is fetched, not the directory.
      const std::optional<std::string> latest = checkpoints::LatestCheckpointCopy(p);
      if (latest) {
        p = *latest;
      } else {  // none: an empty local directory ("no checkpoints found")
        p = RemoteCopyPath(p, ObjectCacheDir() + "/" + p.substr(0, 2));
        std::filesystem::create_directories(p, ec);
      }
      continue;
    }
    p = LocalCopyIfAny(p);  // gs://, s3://: the --data_dir copy or the bucket (storage/remote_copy.h)
  }
  T5XX_CHECK(r.mode == "specific" || r.mode == "latest" || r.mode == "all",
             gin::Where(mode) + " = " + mode.ToGinString() +
                 ": must be 'specific', 'latest' or 'all' (t5x raises ValueError)");
  gin::Refuse(r.mode == "all" && !allow_all, mode,
              "'all' restores every checkpoint in turn, which t5x does for eval only; use "
              "'specific' or 'latest'");
  gin::Refuse(r.mode == "specific" && r.paths.size() > 1 && !allow_all, path,
              "train and infer restore one checkpoint; give one path");
  const Value dtype = q("dtype");
  if (!dtype.is_none()) {
    const std::string d = dtype.AsString();
    T5XX_CHECK(d == "float32" || d == "bfloat16" || d == "float16",
               gin::Where(dtype) + " = " + dtype.ToGinString() +
                   ": must be None, 'float32', 'bfloat16' or 'float16' (t5x raises ValueError)");
    gin::Refuse(d == "float16", dtype, "use 'float32' or 'bfloat16'");
    r.options.dtype = d;
  }
  r.restore_dataset = q("restore_dataset").AsBool();
  r.options.strict = q("strict").AsBool();
  r.options.fallback_to_scratch = q("fallback_to_scratch").AsBool();
  const Value map = q("assignment_map");
  if (!map.is_none()) {
    for (const Value& pair : map.AsList()) {
      const bool ok = (pair.kind() == Value::Kind::kList || pair.kind() == Value::Kind::kTuple) &&
                      pair.AsList().size() == 2 &&
                      pair.AsList()[0].kind() == Value::Kind::kString &&
                      (pair.AsList()[1].kind() == Value::Kind::kString ||
                       pair.AsList()[1].is_none());
      T5XX_CHECK(ok, gin::Where(map) + ": expected a list of (regex, replacement or None) "
                                       "pairs, e.g. [(r'state/.*', None)], got " +
                         pair.ToGinString());
      const Value& repl = pair.AsList()[1];
      r.options.assignment_map.emplace_back(
          pair.AsList()[0].AsString(),
          repl.is_none() ? std::nullopt : std::optional<std::string>(repl.AsString()));
    }
  }
  const Value fns = q("state_transformation_fns");
  gin::Refuse(!fns.is_none() && !fns.AsList().empty(), fns,
              "use assignment_map to rename or drop keys");
  ReadCheckpointerCls(c, kRestoreConfig, rs);
  return r;
}

namespace {

// utils.CheckpointConfig, read into `s`.
void ReadCheckpointConfig(gin::Config& c, TrainSetup& s) {
  const std::string cs = gin::ExpectReference(c.Query(kTrain, "checkpoint_cfg"), kCheckpointConfig);
  const Value restore = c.Query(kCheckpointConfig, "restore", cs);
  if (!restore.is_none()) {
    s.restore = ReadRestoreConfig(c, gin::ExpectReference(restore, kRestoreConfig, true, cs),
                                  /*allow_all=*/false, /*allow_no_path=*/true);
    if (s.restore->paths.empty()) s.restore.reset();  // path = []: start from scratch
  }
  const Value save = c.Query(kCheckpointConfig, "save", cs);
  s.save_checkpoints = !save.is_none();
  if (save.is_none()) return;
  const std::string ss = gin::ExpectReference(save, kSaveConfig, true, cs);
  s.checkpoint_period = gin::NoneOrAtLeast(c.Query(kSaveConfig, "period", ss), 1);
  const Value dtype = c.Query(kSaveConfig, "dtype", ss);
  if (!dtype.is_none()) {
    const std::string d = dtype.AsString();
    T5XX_CHECK(d == "float32" || d == "bfloat16",
               gin::Where(dtype) + " = " + dtype.ToGinString() +
                   ": must be None, 'float32' or 'bfloat16' (t5x raises ValueError)");
    s.save_dtype = d == "bfloat16" ? trainer::SaveDType::kBFloat16 : trainer::SaveDType::kFloat32;
  }
  // t5x: keep = None keeps every checkpoint (0 does too; t5xx asks for None).
  s.checkpoint_keep = gin::NoneOrAtLeast(c.Query(kSaveConfig, "keep", ss), 1);
  s.keep_dataset_checkpoints =
      gin::NoneOrAtLeast(c.Query(kSaveConfig, "keep_dataset_checkpoints", ss), 1);
  const Value steps = c.Query(kSaveConfig, "checkpoint_steps", ss);
  if (!steps.is_none()) {
    for (const Value& v : steps.AsList()) {
      T5XX_CHECK(v.kind() == Value::Kind::kInt && v.AsInt() >= 0,
                 gin::Where(steps) + " = " + steps.ToGinString() +
                     ": expected a list of steps >= 0, e.g. [1000, 5000]");
      s.checkpoint_steps.push_back(v.AsInt());
    }
  }
  // save_dataset: t5xx always stores the data position (a few KB of JSON per
  // process), so True and False both resume exactly; read so it is valid.
  c.Query(kSaveConfig, "save_dataset", ss).AsBool();
  const Value fns = c.Query(kSaveConfig, "state_transformation_fns", ss);
  gin::Refuse(!fns.is_none() && !fns.AsList().empty(), fns, "remove it");
  ReadSaveCheckpointerCls(c, ss, c.Query(kTrain, "use_orbax").AsBool(), s);
}

// One of train.actions' @trainer.EarlyStoppingAction() /
// @trainer.TerminateOnNanAction().
trainer::ActionConfig ReadAction(gin::Config& c, const Value& a) {
  const std::string scope = gin::CallScope("", a);
  trainer::ActionConfig ac;
  if (a.reference_name() == kTerminateOnNan) {
    auto q = [&](const char* p) { return c.Query(kTerminateOnNan, p, scope); };
    ac.kind = trainer::ActionConfig::Kind::kTerminateOnNan;
    ac.gin_name = JoinName(scope, "trainer.TerminateOnNanAction");
    ac.task = q("task").AsString();
    ac.metric = q("metric").AsString();
    return ac;
  }
  auto q = [&](const char* p) { return c.Query(kEarlyStopping, p, scope); };
  ac.kind = trainer::ActionConfig::Kind::kEarlyStopping;
  ac.gin_name = JoinName(scope, "trainer.EarlyStoppingAction");
  const Value metric = q("metric");
  const std::vector<Value>& pair = metric.AsList();
  T5XX_CHECK(pair.size() == 2, gin::Where(metric) + " = " + metric.ToGinString() +
                                   ": expected (task, metric name), e.g. ('my_task', 'loss'), "
                                   "or ('train', 'loss') for TRAIN actions");
  ac.task = pair[0].AsString();
  ac.metric = pair[1].AsString();
  const Value m = q("mode");
  ac.mode = m.AsString();
  T5XX_CHECK(ac.mode == "min" || ac.mode == "max",
             gin::Where(m) + " = " + m.ToGinString() + ": use 'min' or 'max'");
  ac.patience = gin::AtLeast(q("patience"), 1);
  const Value atol = q("atol"), rtol = q("rtol");
  ac.atol = atol.AsFloat();
  ac.rtol = rtol.AsFloat();
  T5XX_CHECK(ac.atol >= 0, gin::Where(atol) + " must be >= 0, got " + atol.ToGinString());
  T5XX_CHECK(ac.rtol >= 0, gin::Where(rtol) + " must be >= 0, got " + rtol.ToGinString());
  return ac;
}

// train.actions = {'TRAIN': [...], 'TRAIN_EVAL': [...]} (t5x's ActionMode
// names) and concurrent_metrics, read into `s`.
void ReadActions(gin::Config& c, TrainSetup& s) {
  const Value actions = c.Query(kTrain, "actions");
  if (!actions.is_none()) {
    for (const auto& [key, list] : actions.AsDict()) {
      const std::string mode = key.AsString();
      T5XX_CHECK(mode == "TRAIN" || mode == "TRAIN_EVAL" || mode == "INFER_EVAL",
                 gin::Where(actions) + ": actions keys must be one of 'TRAIN', 'TRAIN_EVAL', "
                                       "'INFER_EVAL' (t5x's ActionMode), got '" + mode + "'");
      for (const Value& a : list.AsList()) {
        T5XX_CHECK(a.kind() == Value::Kind::kReference && a.reference_evaluated() &&
                       (a.reference_name() == kEarlyStopping ||
                        a.reference_name() == kTerminateOnNan),
                   gin::Where(actions) + ": expected lists of @trainer.EarlyStoppingAction() or "
                                         "@trainer.TerminateOnNanAction(), got " +
                       a.ToGinString());
        (mode == "TRAIN"        ? s.train_actions
         : mode == "TRAIN_EVAL" ? s.train_eval_actions
                                : s.infer_eval_actions)
            .push_back(ReadAction(c, a));
      }
    }
  }
  const Value concurrent = c.Query(kTrain, "concurrent_metrics");
  for (const auto& [mode, list] : {std::pair{"TRAIN", &s.train_actions},
                                   std::pair{"INFER_EVAL", &s.infer_eval_actions}}) {
    T5XX_CHECK(list->empty() || !concurrent.AsBool(),
               gin::Where(concurrent) + " = True, but actions['" + mode + "'] is set: t5x runs " +
                   mode + " actions only with concurrent_metrics = False (and otherwise ignores "
                   "them with a warning); set train.concurrent_metrics = False");
  }
}

// The loop's steps and periods, read into `s`.
void ReadLoop(gin::Config& c, TrainSetup& s) {
  // total_steps = 0 trains nothing: t5x's test_train_eval_t5_tiny.gin runs
  // only the evaluation before training that way.
  s.total_steps = gin::AtLeast(c.Query(kTrain, "total_steps"), 0);
  // t5x: when relative_steps is set, total_steps = start step + relative_steps.
  s.relative_steps = gin::NoneOrAtLeast(c.Query(kTrain, "relative_steps"), 1);
  s.eval_steps = gin::AtLeast(c.Query(kTrain, "eval_steps"), 1);
  // eval_period = 0 is None: no periodic evaluation (t5x tests
  // `if eval_period`).
  const Value eval_period = c.Query(kTrain, "eval_period");
  s.eval_period = eval_period.kind() == Value::Kind::kInt && eval_period.AsInt() == 0
                      ? std::nullopt
                      : gin::NoneOrAtLeast(eval_period, 1);
  // That eval_period and the checkpoint period are multiples of each other
  // is the loop's check (trainer::CheckTrainLoopConfig, run by
  // ValidateTrainRun), as are the other cross-setting checks.
  s.run_eval_before_training = c.Query(kTrain, "run_eval_before_training").AsBool();
  s.use_orbax = c.Query(kTrain, "use_orbax").AsBool();
}

}  // namespace

void RegisterTrainConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  r.Register({kPartitioner,
              {Optional("num_partitions", T::kOptionalInt, None()),
               Optional("model_parallel_submesh", T::kAny, None()),
               Optional("logical_axis_rules", T::kAny, None()),
               Optional("reshard_after_forward", T::kBool, B(true),
                        "t5xx only (FSDP's name): under ZeRO-3 (parameter_partitioning_dims = "
                        "2), free each gathered weight after its forward use and gather it "
                        "again for the backward pass; False keeps it (one all-gather less, "
                        "every layer's whole weights held until the backward pass).")},
              "Partitions the model and data over the device mesh."});
  r.Register({kAxisRules,
              {Optional("activation_partitioning_dims", T::kInt, I(1)),
               Optional("parameter_partitioning_dims", T::kInt, I(1)),
               Optional("additional_rules", T::kAny, None(),
                        "Rules appended: a list of (axis, mesh axis) pairs or "
                        "@prompt_partitioning.standard_logical_axis_rules().")},
              "Default mapping of logical axes to mesh axes."});
  r.Register({kPromptAxisRules, {}, "prompt-tuning's rules: 'prompt', 'prompt_embed' replicated."});
  r.Register({kCheckpointConfig,
              {Optional("save", T::kOptionalReference, None()),
               Optional("restore", T::kOptionalReference, None())},
              "Checkpoint saving and restoring options."});
  r.Register({kSaveConfig,
              {Optional("period", T::kOptionalInt, None()),
               Optional("dtype", T::kOptionalString, S("float32"),
                        "'float32' or 'bfloat16': the dtype parameters are saved in."),
               Optional("checkpoint_steps", T::kOptionalList, None(),
                        "Steps to save at besides every `period`."),
               Optional("keep", T::kOptionalInt, None()),
               Optional("keep_dataset_checkpoints", T::kOptionalInt, None()),
               Optional("save_dataset", T::kBool, B(false),
                        "t5xx always saves the data position (a few KB), so resuming is exact "
                        "either way."),
               Optional("checkpointer_cls", T::kOptionalReference, None()),
               Optional("checkpoint_manager_cls", T::kOptionalReference, None(),
                        "t5x's OrbaxCheckpointManagerInterface (its default), the writer when "
                        "train.use_orbax = True."),
               Optional("state_transformation_fns", T::kOptionalList, None())},
              "When and how to save checkpoints."});
  r.Register({kRestoreConfig,
              {Required("path", T::kAny, "A checkpoint directory (mode 'specific') or a "
                                         "directory of checkpoint_<N> (mode 'latest')."),
               Optional("mode", T::kString, S("latest")),
               Optional("assignment_map", T::kOptionalList, None(),
                        "[(model key regex, checkpoint key or None)], keys '/'-joined."),
               Optional("strict", T::kBool, B(true),
                        "Whether to restore all optimizer parameters from the checkpoint."),
               Optional("fallback_to_scratch", T::kBool, B(false)),
               Optional("dtype", T::kOptionalString, None()),
               Optional("restore_dataset", T::kBool, B(false)),
               Optional("checkpointer_cls", T::kOptionalReference, None()),
               Optional("checkpoint_manager_cls", T::kOptionalReference, None(),
                        "t5x's OrbaxCheckpointManagerInterface (its default); t5xx reads "
                        "either layout."),
               Optional("state_transformation_fns", T::kOptionalList, None())},
              "Which checkpoint to start from, and how."});
  RegisterCheckpointerConfigurables(r);
  r.Register({kTrainer,
              {Optional("num_microbatches", T::kOptionalInt, None()),
               Required("learning_rate_fn", T::kReference)},
              "Runs train and eval steps."});
  r.Register({kSummarizeGinConfig, {}, "Writes the operative config to the model dir and summaries."});
  r.Register({kTrain,
              {Required("model", T::kReference),
               Required("model_dir", T::kString),
               Required("train_dataset_cfg", T::kReference),
               Optional("train_eval_dataset_cfg", T::kOptionalReference, None()),
               Optional("infer_eval_dataset_cfg", T::kOptionalReference, None(),
                        "Decode this dataset and score it with its tasks' metric_fns every "
                        "eval_period (seqio.Evaluator)."),
               Optional("inference_evaluator_cls", T::kReference,
                        Value::Reference("seqio.Evaluator", "", false)),
               Required("checkpoint_cfg", T::kReference),
               Required("partitioner", T::kReference),
               Required("trainer_cls", T::kReference),
               Required("total_steps", T::kInt),
               Optional("eval_steps", T::kInt, I(10)),
               Optional("eval_period", T::kOptionalInt, None()),
               Optional("stats_period", T::kOptionalInt, None()),
               Optional("data_order", T::kString, S("per_shard"),
                        "t5xx only. 'per_shard' (seqio's and t5x's): each data replica reads its "
                        "own shard of the train data; a restart with another data-axis size "
                        "starts the data again. 'global': every replica reads the global batch "
                        "and keeps its rows, so every data-axis size trains on the same global "
                        "batches and a checkpoint's data position resumes on any of them (each "
                        "replica does the input pipeline's work for the whole batch)."),
               Optional("random_seed", T::kOptionalInt, None()),
               Optional("use_hardware_rng", T::kBool, B(false),
                        "No effect in t5xx: every draw comes from random_seed, the same for "
                        "every layout (t5x's hardware RNG changes with the sharding)."),
               Optional("summarize_config_fn", T::kOptionalReference, None()),
               Optional("relative_steps", T::kOptionalInt, None(),
                        "Train this many steps beyond the start step; when set, total_steps "
                        "is ignored (t5x)."),
               Optional("run_eval_before_training", T::kBool, B(false),
                        "Run the train-eval once at the start step, before training."),
               Optional("actions", T::kOptionalDict, None(),
                        "{'TRAIN': [...], 'TRAIN_EVAL': [...]}: trainer.EarlyStoppingAction() / "
                        "trainer.TerminateOnNanAction() run after each summary."),
               Optional("use_orbax", T::kBool, B(false),
                        "Save checkpoints in Orbax's layout (OCDBT + zarr under "
                        "checkpoint_<N>/state/) as t5x does by default; False (t5xx's default) "
                        "writes t5x's legacy layout, which t5x restores too. Restoring reads "
                        "either layout whatever this says."),
               Optional("concurrent_metrics", T::kBool, B(true),
                        "t5x computes metrics asynchronously when True and then skips TRAIN "
                        "actions; t5xx requires False when TRAIN actions are given.")},
              "The train entry point (t5x/train.py's train)."});
  r.Register({kEarlyStopping,
              {Required("metric", T::kList, "(task, metric name), e.g. ('my_task', 'loss')."),
               Required("mode", T::kString, "'min' or 'max'."),
               Optional("patience", T::kInt, I(3)),
               Optional("atol", T::kFloat, F(0.0)),
               Optional("rtol", T::kFloat, F(0.0))},
              "Stops training when a metric has not improved over `patience` summaries."});
  r.Register({kTerminateOnNan,
              {Required("task", T::kString), Optional("metric", T::kString, S("loss"))},
              "Stops training when a metric is NaN or infinite."});
}

void RegisterConfigurables(gin::Registry& registry) {
  RegisterModelConfigurables(registry);
  RegisterOptimizerConfigurables(registry);
  RegisterDatasetConfigurables(registry);
  RegisterTrainConfigurables(registry);
  RegisterDecodingConfigurables(registry);
  RegisterInferEvalConfigurables(registry);
  seqio_gin::RegisterSeqioConfigurables(registry);
}

TrainSetup ReadTrainSetup(gin::Config& c) {
  TrainSetup s;
  s.model_dir = c.Query(kTrain, "model_dir").AsString();
  T5XX_CHECK(!s.model_dir.empty(),
             "train.model_dir (MODEL_DIR) is empty; pass --gin.MODEL_DIR=/path");
  std::string model_name, model_scope;
  s.model = ReadModel(c, kTrain, &model_name, &model_scope);
  s.optimizer = ReadOptimizer(c, model_name, model_scope);

  // trainer.Trainer and its schedule.
  const std::string trainer_scope =
      gin::ExpectReference(c.Query(kTrain, "trainer_cls"), kTrainer, /*evaluated=*/false);
  const Value mb = c.Query(kTrainer, "num_microbatches", trainer_scope);
  s.num_microbatches = gin::NoneOrAtLeast(mb, 1);
  s.lr = ReadLearningRateScheduler(
      c, gin::ExpectReference(c.Query(kTrainer, "learning_rate_fn", trainer_scope),
                              kLearningRateScheduler, true, trainer_scope));

  ReadPartitioner(c, kTrain, &s.num_partitions, &s.logical_axis_rules,
                  &s.reshard_after_forward);

  s.train_dataset = ReadDatasetConfig(
      c, gin::ExpectReference(c.Query(kTrain, "train_dataset_cfg"), kDatasetConfig));
  const int64_t k = s.num_microbatches.value_or(1);
  T5XX_CHECK(s.train_dataset.batch_size % k == 0,
             (s.num_microbatches ? gin::Where(mb) : "trainer.Trainer.num_microbatches") + " = " +
                 std::to_string(k) + " does not divide the train batch size " +
                 std::to_string(s.train_dataset.batch_size) +
                 " (train/utils.DatasetConfig.batch_size); choose a divisor");
  const Value ev = c.Query(kTrain, "train_eval_dataset_cfg");
  if (!ev.is_none()) {
    s.train_eval_dataset = ReadDatasetConfig(c, gin::ExpectReference(ev, kDatasetConfig));
  }
  const Value ie = c.Query(kTrain, "infer_eval_dataset_cfg");
  // A parameter of t5x's train, read (and its binding used) whether or not
  // there is an inference evaluation.
  const Value evaluator_cls = c.Query(kTrain, "inference_evaluator_cls");
  if (ie.is_none()) gin::ExpectReference(evaluator_cls, "seqio.Evaluator", /*evaluated=*/false);
  if (!ie.is_none()) {
    s.infer_eval_dataset =
        ReadDatasetConfig(c, gin::ExpectReference(ie, kDatasetConfig), /*allow_none_lengths=*/true);
    s.evaluator = ReadEvaluatorConfig(c, c.Query(kTrain, "inference_evaluator_cls"));
  }

  ReadCheckpointConfig(c, s);
  ReadLoop(c, s);
  ReadActions(c, s);
  s.stats_period = gin::NoneOrAtLeast(c.Query(kTrain, "stats_period"), 1);
  const Value order = c.Query(kTrain, "data_order");
  T5XX_CHECK(order.AsString() == "per_shard" || order.AsString() == "global",
             gin::Where(order) + " = " + order.ToGinString() +
                 " is not a data order; use 'per_shard' (seqio's) or 'global'");
  s.global_data_order = order.AsString() == "global";
  const Value seed = c.Query(kTrain, "random_seed");
  s.random_seed = seed.is_none() ? 0 : gin::AtLeast(seed, 0);
  // No effect (documented): t5x's hardware RNG trades reproducibility
  // across shardings for speed; t5xx's draws come from random_seed alone,
  // equal for every layout, either way.
  c.Query(kTrain, "use_hardware_rng").AsBool();
  const Value summarize = c.Query(kTrain, "summarize_config_fn");
  if (!summarize.is_none()) gin::ExpectReference(summarize, kSummarizeGinConfig, /*evaluated=*/false);
  return s;
}

}  // namespace t5xx::run
