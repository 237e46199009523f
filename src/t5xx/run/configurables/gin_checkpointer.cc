// See gin_checkpointer.h. Behaviour source: t5x/utils.py
// (SaveCheckpointConfig, _get_extra_kwargs: only a functools.partial of
// SaveBestCheckpointer hands its settings to the Orbax manager, which gin's
// @checkpoints.SaveBestCheckpointer is not) and t5x/checkpoints.py
// (Checkpointer, SaveBestCheckpointer, OrbaxCheckpointManagerInterface).
#include "t5xx/run/configurables/gin_checkpointer.h"

#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/run/configurables/gin_prompt.h"
#include "t5xx/util/error.h"

namespace t5xx::run {
namespace {

using gin::Value;

constexpr char kSaveConfig[] = "t5x.utils.SaveCheckpointConfig";
constexpr char kCheckpointer[] = "t5x.checkpoints.Checkpointer";
constexpr char kSaveBest[] = "t5x.checkpoints.SaveBestCheckpointer";
constexpr char kOrbaxManager[] = "t5x.checkpoints.OrbaxCheckpointManagerInterface";

// metric_name_to_monitor, metric_mode, keep_checkpoints_without_metrics and
// force_keep_period of `configurable` (SaveBestCheckpointer or the Orbax
// manager) into a SaveBestConfig.
checkpoints::SaveBestConfig ReadMetricSettings(gin::Config& c, const char* configurable,
                                               const std::string& scope) {
  auto q = [&](const char* p) { return c.Query(configurable, p, scope); };
  checkpoints::SaveBestConfig b;
  const Value name = q("metric_name_to_monitor");
  b.metric_name_to_monitor = name.AsString();
  const Value mode = q("metric_mode");
  b.metric_mode = mode.AsString();
  T5XX_CHECK(b.metric_mode == "max" || b.metric_mode == "min",
             gin::Where(mode) + " = " + mode.ToGinString() +
                 ": must be 'max' or 'min' (t5x raises ValueError: Unsupported `metric_mode`)");
  T5XX_CHECK(b.metric_name_to_monitor.find('/') != std::string::npos,
             gin::Where(name) + " = " + name.ToGinString() +
                 ": must be '{run}/{tag}', e.g. 'train/loss' or "
                 "'inference_eval/<task>/eval/<metric>' (t5x reads the run's TensorBoard summaries)");
  b.keep_checkpoints_without_metrics = q("keep_checkpoints_without_metrics").AsBool();
  b.force_keep_period = gin::NoneOrAtLeast(q("force_keep_period"), 1);
  return b;
}

}  // namespace

std::string ReadCheckpointerCls(gin::Config& c, const char* configurable,
                                const std::string& scope) {
  // t5x's checkpoint manager (train.use_orbax = True): only its own,
  // OrbaxCheckpointManagerInterface, whose layout t5xx writes then.
  const Value manager = c.Query(configurable, "checkpoint_manager_cls", scope);
  if (!manager.is_none()) gin::ExpectReference(manager, kOrbaxManager, /*evaluated=*/false, scope);
  const Value cls = c.Query(configurable, "checkpointer_cls", scope);
  if (cls.is_none()) return scope;
  return gin::ExpectReference(cls, kCheckpointer, /*evaluated=*/false, scope);
}

void ReadSaveCheckpointerCls(gin::Config& c, const std::string& ss, bool use_orbax,
                             TrainSetup& s) {
  const Value cls = c.Query(kSaveConfig, "checkpointer_cls", ss);
  if (!cls.is_none() && cls.kind() == Value::Kind::kReference && cls.reference_name() == kSaveBest) {
    const std::string scope = gin::ExpectReference(cls, kSaveBest, /*evaluated=*/false, ss);
    // t5x with use_orbax builds OrbaxCheckpointManagerInterface without
    // SaveBestCheckpointer's settings (utils._get_extra_kwargs takes them
    // only from a functools.partial): they would be silently dropped.
    gin::Refuse(use_orbax, cls,
                "with train.use_orbax = True t5x does not hand SaveBestCheckpointer's settings "
                "to its Orbax checkpoint manager; bind them on "
                "checkpoints.OrbaxCheckpointManagerInterface (metric_name_to_monitor, "
                "metric_mode, keep_checkpoints_without_metrics, force_keep_period) and drop "
                "checkpointer_cls");
    s.save_best = ReadMetricSettings(c, kSaveBest, scope);
    s.force_keep_period = s.save_best->force_keep_period;
    return;
  }
  if (ReadPromptCheckpointer(c, cls, ss, &s.numpy_save_paths)) {
    // t5x's Orbax manager does not call checkpointer_cls.
    gin::Refuse(use_orbax, cls,
                "prompt_utils.Checkpointer's numpy saves are made by t5x's legacy checkpointer; "
                "with train.use_orbax = True t5x would not make them: set use_orbax = False");
    return;
  }
  const std::string cls_scope = ReadCheckpointerCls(c, kSaveConfig, ss);
  const Value period = c.Query(kCheckpointer, "force_keep_period", cls_scope);
  if (!use_orbax) {
    s.force_keep_period = gin::NoneOrAtLeast(period, 1);
    return;
  }
  // Orbax: the manager's own arguments decide (t5x passes keep and period
  // from the SaveCheckpointConfig; the rest are its gin bindings); a
  // Checkpointer.force_keep_period binding is kept as before.
  const Value manager = c.Query(kSaveConfig, "checkpoint_manager_cls", ss);
  const std::string ms = manager.is_none()
                             ? ss
                             : gin::ExpectReference(manager, kOrbaxManager, false, ss);
  const Value metric = c.Query(kOrbaxManager, "metric_name_to_monitor", ms);
  if (metric.is_none()) {
    s.force_keep_period = gin::NoneOrAtLeast(
        period.is_none() ? c.Query(kOrbaxManager, "force_keep_period", ms) : period, 1);
    return;
  }
  s.save_best = ReadMetricSettings(c, kOrbaxManager, ms);
  s.save_best->orbax = true;
  if (!s.save_best->force_keep_period) s.save_best->force_keep_period = gin::NoneOrAtLeast(period, 1);
  s.force_keep_period = s.save_best->force_keep_period;
}

void RegisterCheckpointerConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  r.Register({kOrbaxManager,
              {Optional("metric_name_to_monitor", T::kOptionalString, None(),
                        "'{run}/{tag}' of the run's summaries: keep the `keep` best by it "
                        "(Orbax's rules); None: the `keep` newest."),
               Optional("metric_mode", T::kString, S("max"), "'max' or 'min'."),
               Optional("keep_checkpoints_without_metrics", T::kBool, B(true),
                        "Never delete a checkpoint without a value of the metric."),
               Optional("force_keep_period", T::kOptionalInt, None(),
                        "Never delete a checkpoint whose step is a multiple of this.")},
              "t5x's Orbax checkpoint manager: checkpoints in Orbax's layout (OCDBT + zarr) "
              "when train.use_orbax = True."});
  r.Register({kCheckpointer,
              {Optional("force_keep_period", T::kOptionalInt, None(),
                        "`keep` never deletes a checkpoint whose step is a multiple of this.")},
              "t5x's legacy checkpointer (the format t5xx writes)."});
  r.Register({kSaveBest,
              {Optional("metric_name_to_monitor", T::kString, S("train/accuracy"),
                        "'{run}/{tag}' of the run's summaries, e.g. "
                        "'inference_eval/<task>/eval/accuracy'."),
               Optional("metric_mode", T::kString, S("max"), "'max' or 'min'."),
               Optional("keep_checkpoints_without_metrics", T::kBool, B(true),
                        "Never delete a checkpoint that has no value of the metric (False: "
                        "delete those first)."),
               Optional("force_keep_period", T::kOptionalInt, None(),
                        "Never delete a checkpoint whose step is a multiple of this.")},
              "t5x's checkpointer that keeps the `keep` best checkpoints by a metric, and the "
              "newest."});
}

}  // namespace t5xx::run
