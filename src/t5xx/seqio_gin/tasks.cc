// gin-defined seqio Tasks and Mixtures: the configurables seqio.Task,
// seqio.Feature, seqio.Mixture, seqio.mixing_rate_num_examples,
// tf.data.Dataset.sample_from_datasets and t5xx.seqio.register, how each
// task and mixture is built from them, and RegisterGinTasks /
// RegisterSeqioConfigurables (seqio_gin.h).
#include <algorithm>
#include <iostream>
#include <optional>

#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/data/dataset_providers/mixing_rates.h"
#include "t5xx/seqio_gin/builders.h"
#include "t5xx/seqio_gin/seqio_gin.h"

namespace t5xx::seqio_gin {
namespace {

using gin::Value;

constexpr char kTask[] = "seqio.Task";
constexpr char kMixture[] = "seqio.Mixture";
constexpr char kSampleFromDatasets[] = "tf.data.Dataset.sample_from_datasets";
constexpr char kFeature[] = "seqio.Feature";
constexpr char kRegister[] = "t5xx.seqio.register";
constexpr char kNumExamplesRate[] = "seqio.mixing_rate_num_examples";

void RegisterTaskConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  r.Register({kFeature,
              {Required("vocabulary", T::kReference),
               Optional("add_eos", T::kBool, B(true), "append_eos(_after_trim) acts on it."),
               Optional("required", T::kBool, B(true), "The task fails when it is missing.")},
              "An output feature of a seqio Task (output_features of seqio.Task)."});
  r.Register({kTask,
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
  r.Register({kMixture,
              {Required("name", T::kString),
               Required("tasks", T::kList, "Task/mixture names or (name, rate) tuples."),
               Optional("default_rate", T::kAny, None(),
                        "A number, @seqio.mixing_rate_num_examples or None (every entry "
                        "then gives its rate)."),
               Optional("sample_fn", T::kOptionalReference, None(),
                        "None = seqio's default, sample_from_datasets with "
                        "stop_on_empty_dataset=True (the mixture ends when a drawn task runs "
                        "dry); @tf.data.Dataset.sample_from_datasets takes its "
                        "stop_on_empty_dataset binding (TF's default False: keep sampling the "
                        "other tasks).")},
              "A seqio Mixture defined in gin; list it in t5xx.seqio.register.mixtures."});
  r.Register({kNumExamplesRate,
              {Optional("maximum", T::kOptionalFloat, None(),
                        "Clip after scaling, before the temperature (None or 0: no clip)."),
               Optional("scale", T::kFloat, F(1.0)),
               Optional("temperature", T::kFloat, F(1.0), "rate ** (1 / temperature)."),
               Optional("fallback_to_num_input_examples", T::kBool, B(true),
                        "seqio's fallback for an uncached task; t5xx sources do not count "
                        "their examples, so an uncached task is an error either way."),
               Optional("split", T::kString, S("train"))},
              "A mixing rate: the number of examples in the task's cache (stats.<split>.json "
              "of `t5xx cache_tasks`); write @seqio.mixing_rate_num_examples (no \"()\") as a "
              "seqio.Mixture default_rate or entry rate."});
  r.Register({kSampleFromDatasets,
              {Optional("stop_on_empty_dataset", T::kBool, B(false),
                        "True: stop when a drawn dataset is empty; False (TF's default): drop "
                        "it and renormalise the others' rates.")},
              "How a seqio.Mixture samples its tasks (seqio.Mixture.sample_fn)."});
  r.Register({kRegister,
              {Optional("tasks", T::kList, Value::List({}), "[@my_task/seqio.Task(), ...]"),
               Optional("mixtures", T::kList, Value::List({}), "[@my_mix/seqio.Mixture(), ...]")},
              "The gin-defined tasks and mixtures that t5xx adds to seqio's registries at "
              "start-up, in order (a mixture after the tasks and mixtures it names)."});
}

seqio::TaskPtr BuildTask(BuildContext& ctx, const Value& v) {
  gin::ExpectOneOf(v, {kTask}, "a task");
  gin::Config& c = ctx.config;
  const std::string s = gin::CallScope("", v);
  const std::string name = c.Query(kTask, "name", s).AsString();
  seqio::DataSourcePtr source = BuildSource(ctx, c.Query(kTask, "source", s), s);
  std::vector<seqio::Preprocessor> steps;
  std::vector<std::string> step_names;  // errors name each step so
  std::vector<seqio::PreprocessorListEntry> entries;  // the list as written
  const Value pre = c.Query(kTask, "preprocessors", s);
  for (const auto& p : pre.AsList()) {
    if (!IsCachePlaceholder(p)) {
      steps.push_back(BuildPreprocessor(ctx, p, s));
      step_names.push_back(p.reference_name() + ", bound at " + gin::WhereShort(p));
    }
    entries.push_back(PreprocessorListEntryOf(ctx, p, s));
  }
  const std::optional<seqio::CacheStep> cache_step =
      At(pre, [&] { return seqio::FindCacheStep(name, entries, std::cerr); });
  seqio::OutputFeatures features;
  const Value of = c.Query(kTask, "output_features", s);
  for (const auto& [k, fv] : of.AsDict()) {
    gin::ExpectOneOf(fv, {kFeature}, "an output feature");
    const std::string fs = gin::CallScope(s, fv);
    seqio::Feature f;
    f.vocabulary = BuildVocabulary(ctx, c.Query(kFeature, "vocabulary", fs), fs);
    f.add_eos = c.Query(kFeature, "add_eos", fs).AsBool();
    f.required = c.Query(kFeature, "required", fs).AsBool();
    features[k.AsString()] = f;
  }
  const Value sbs = c.Query(kTask, "shuffle_buffer_size", s);
  seqio::PostprocessFn post = BuildPostprocessor(ctx, c.Query(kTask, "postprocess_fn", s), s);
  // seqio splits metric_fns by signature: (targets, scores) are score
  // metric_fns, the rest predict metric_fns.
  seqio::TaskMetricFns metric_fns;
  const Value mfs = c.Query(kTask, "metric_fns", s);
  for (const auto& m : mfs.AsList()) {
    if (IsScoreMetric(m)) {
      metric_fns.score.push_back(BuildScoreMetric(ctx, m, s));
    } else {
      metric_fns.predict.push_back(BuildMetric(ctx, m, s));
    }
  }
  return At(v, [&] {
    return std::make_shared<seqio::Task>(name, std::move(source), std::move(steps),
                                         std::move(features), sbs.is_none() ? 0 : sbs.AsInt(),
                                         std::move(post), std::move(metric_fns),
                                         std::move(step_names), cache_step);
  });
}

// A Mixture rate: a number, or @seqio.mixing_rate_num_examples.
seqio::MixtureRate BuildRate(BuildContext& ctx, const Value& v, const std::string& outer) {
  if (v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kFloat) return v.AsFloat();
  T5XX_CHECK(v.kind() == Value::Kind::kReference && v.reference_name() == kNumExamplesRate,
             gin::WhereShort(v) + ": a mixing rate is a number or @" +
                 std::string(kNumExamplesRate) + ", got " + v.ToGinString());
  T5XX_CHECK(!v.reference_evaluated(),
             gin::WhereShort(v) + ": write @" + std::string(kNumExamplesRate) +
                 " without \"()\": the mixture calls it with each task");
  gin::Config& c = ctx.config;
  const std::string s = gin::CallScope(outer, v);
  seqio::MixingRateNumExamplesOptions o;
  const Value maximum = c.Query(kNumExamplesRate, "maximum", s);
  if (!maximum.is_none()) o.maximum = maximum.AsFloat();
  o.scale = c.Query(kNumExamplesRate, "scale", s).AsFloat();
  o.temperature = c.Query(kNumExamplesRate, "temperature", s).AsFloat();
  o.fallback_to_num_input_examples =
      c.Query(kNumExamplesRate, "fallback_to_num_input_examples", s).AsBool();
  o.split = c.Query(kNumExamplesRate, "split", s).AsString();
  return At(v, [&] { return seqio::MixingRateNumExamplesRate(o); });
}

seqio::MixturePtr BuildMixture(BuildContext& ctx, const Value& v, const seqio::TaskRegistry& tasks,
                               const seqio::MixtureRegistry& mixtures) {
  gin::ExpectOneOf(v, {kMixture}, "a mixture");
  gin::Config& c = ctx.config;
  const std::string s = gin::CallScope("", v);
  const std::string name = c.Query(kMixture, "name", s).AsString();
  std::vector<seqio::MixtureEntry> entries;
  const Value list = c.Query(kMixture, "tasks", s);
  for (const auto& e : list.AsList()) {
    if (e.kind() == Value::Kind::kString) {
      entries.emplace_back(e.AsString());
      continue;
    }
    T5XX_CHECK((e.kind() == Value::Kind::kTuple || e.kind() == Value::Kind::kList) &&
                   e.AsList().size() == 2,
               gin::WhereShort(e) + ": a mixture entry is a name or a (name, rate) tuple, got " +
                   e.ToGinString());
    entries.emplace_back(e.AsList()[0].AsString(), BuildRate(ctx, e.AsList()[1], s));
  }
  const Value dr = c.Query(kMixture, "default_rate", s);
  std::optional<seqio::MixtureRate> default_rate;
  if (!dr.is_none()) default_rate = BuildRate(ctx, dr, s);
  // seqio's sample_fn: None = sample_from_datasets(stop_on_empty_dataset=True).
  bool stop_on_empty = true;
  const Value sample_fn = c.Query(kMixture, "sample_fn", s);
  if (!sample_fn.is_none()) {
    gin::ExpectOneOf(sample_fn, {kSampleFromDatasets}, "a sample_fn");
    stop_on_empty = c.Query(kSampleFromDatasets, "stop_on_empty_dataset",
                            gin::CallScope(s, sample_fn))
                        .AsBool();
  }
  return At(v, [&] {
    return std::make_shared<seqio::Mixture>(name, std::move(entries), std::move(default_rate), tasks,
                                            mixtures, stop_on_empty);
  });
}

}  // namespace

void RegisterSeqioConfigurables(gin::Registry& registry) {
  RegisterTaskConfigurables(registry);
  RegisterSourceConfigurables(registry);
  RegisterEvaluationConfigurables(registry);
  RegisterPreprocessorConfigurables(registry, GinPreprocessors());
}

GinTaskNames RegisterGinTasks(gin::Config& config, const GinTaskOptions& options,
                              seqio::TaskRegistry& tasks, seqio::MixtureRegistry& mixtures) {
  GinTaskNames out;
  BuildContext ctx{config, options.data_dir, options.skip_bad_records, {}};
  auto check_name = [&](const Value& v, const std::string& name, bool task) {
    const auto& demo = options.demo_task_names;
    T5XX_CHECK(!task || std::find(demo.begin(), demo.end(), name) == demo.end(),
               gin::WhereShort(v) + ": the task name '" + name +
                   "' is t5xx's demo task; give the gin task another name");
    T5XX_CHECK(!tasks.Has(name) && !mixtures.Has(name),
               gin::WhereShort(v) + ": a task or mixture named '" + name +
                   "' is already registered");
  };
  if (config.IsBound(kRegister, "tasks")) {
    const Value list = config.Query(kRegister, "tasks");
    for (const auto& v : list.AsList()) {
      seqio::TaskPtr t = BuildTask(ctx, v);
      check_name(v, t->name(), /*task=*/true);
      tasks.Add(t);
      out.tasks.push_back(t->name());
    }
  }
  if (config.IsBound(kRegister, "mixtures")) {
    const Value list = config.Query(kRegister, "mixtures");
    for (const auto& v : list.AsList()) {
      seqio::MixturePtr m = BuildMixture(ctx, v, tasks, mixtures);
      check_name(v, m->name(), /*task=*/false);
      mixtures.Add(m);
      out.mixtures.push_back(m->name());
    }
  }
  return out;
}

}  // namespace t5xx::seqio_gin
