// See evaluator.h.
#include "t5xx/data/pipeline/array_json.h"
#include "t5xx/run/inference/evaluator.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/evaluation/evaluation.h"
#include "t5xx/run/inference/inference.h"
#include "t5xx/trainer/summary_writer.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/json_text.h"

namespace t5xx::run {
namespace {

using json = nlohmann::json;

// seqio's Evaluator default seed.
constexpr uint64_t kEvaluatorSeed = 42;

// A postprocessed value as seqio's JSONLogger writes it (a dict as an
// object, a tuple as a list).
json ValueJson(const seqio::PostprocessedValue& v) {
  return std::visit(
      [](const auto& x) {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, seqio::ValueDict>) {
          json out = json::object();
          for (const auto& [k, e] : x.items) {
            out[k] = std::visit([](const auto& y) { return json(y); }, e);
          }
          return out;
        } else if constexpr (std::is_same_v<std::decay_t<decltype(x)>,
                                            seqio::metrics::RankClassificationTarget>) {
          // t5's tuple (idx, is_correct, weight, len(targets)).
          return json::array({x.idx, x.is_correct, x.weight, x.target_length});
        } else {
          return json(x);
        }
      },
      v);
}

// A task example as seqio's TensorAndNumpyEncoder writes it: text as text,
// token arrays of up to 32 ids as lists, longer ones as its summary string.
json ExampleJson(const seqio::Example& ex) {
  json out = json::object();
  for (const auto& [k, v] : ex) {
    if (const auto* s = std::get_if<std::string>(&v)) {
      out[k] = *s;
      continue;
    }
    if (const auto* a = std::get_if<seqio::Array>(&v)) {
      out[k] = seqio::ArrayToNestedJson(*a);
      continue;
    }
    const seqio::Tokens& t = std::get<seqio::Tokens>(v);
    if (t.size() <= 32) {
      out[k] = t;
      continue;
    }
    auto list = [&](size_t from, size_t to) {
      std::string s;
      for (size_t i = from; i < to; ++i) s += (i > from ? ", " : "") + std::to_string(t[i]);
      return s;
    };
    out[k] = "ndarray(shape=(" + std::to_string(t.size()) + ",), dtype=int32); summary: " +
             list(0, 5) + " ... " + list(t.size() - 5, t.size());
  }
  return out;
}

}  // namespace

InferenceEvaluator::InferenceEvaluator(const DatasetConfig& d, const std::string& scope,
                                       const EvaluatorConfig& config, std::string log_dir,
                                       bool write_logs)
    : scope_(scope),
      batch_size_(d.batch_size),
      config_(config),
      log_dir_(std::move(log_dir)),
      write_logs_(write_logs) {
  const std::string what = "the " + scope + " dataset (" + scope +
                           "/utils.DatasetConfig: task '" + d.mixture_or_task_name +
                           "', split '" + d.split + "')";
  // seqio's Evaluator: the tasks of the mixture (or the task) that have the
  // split and at least one metric.
  for (const seqio::TaskPtr& task : seqio::GetMixtureOrTask(d.mixture_or_task_name)->tasks()) {
    const std::vector<std::string> splits = task->splits();
    if (std::find(splits.begin(), splits.end(), d.split) == splits.end()) continue;
    if (!task->has_metric_fns()) continue;
    TaskData t;
    t.task = task;
    try {
      seqio::DatasetPtr ds = task->GetDataset(
          d.lengths_from_data ? seqio::FeatureLengths{} : d.task_feature_lengths, d.split,
          d.shuffle, d.seed ? static_cast<uint64_t>(*d.seed) : kEvaluatorSeed, {},
          /*num_epochs=*/1, d.trim_output_features, d.use_cached);
      t.examples = seqio::Collect(
          *ds, config.num_examples ? static_cast<size_t>(*config.num_examples) : SIZE_MAX);
    } catch (const Error& e) {
      throw Error("while reading " + what + ": " + e.what());
    }
    if (t.examples.empty()) continue;
    std::vector<std::string> features;
    for (const auto& [name, f] : task->output_features()) features.push_back(name);
    t.lengths = d.lengths_from_data ? LongestLengths(t.examples, features) : d.task_feature_lengths;
    tasks_.push_back(std::move(t));
  }
  if (tasks_.empty()) {
    no_tasks_reason_ = what + " has no task with examples in split '" + d.split +
                       "' and metric_fns to evaluate; bind seqio.Task.metric_fns (e.g. "
                       "[@t5.evaluation.metrics.sequence_accuracy]) or choose another split";
  }
}

InferenceEvaluator::~InferenceEvaluator() = default;

bool InferenceEvaluator::scores() const {
  for (const TaskData& t : tasks_) {
    if (!t.task->score_metric_fns().empty()) return true;
  }
  return false;
}

std::vector<std::string> InferenceEvaluator::task_names() const {
  std::vector<std::string> names;
  for (const TaskData& t : tasks_) names.push_back(t.task->name());
  return names;
}

size_t InferenceEvaluator::num_examples(const std::string& task) const {
  for (const TaskData& t : tasks_) {
    if (t.task->name() == task) return t.examples.size();
  }
  return 0;
}

std::map<std::string, seqio::metrics::Metrics> InferenceEvaluator::Evaluate(
    int64_t step, const models::BaseTransformerModel& model, const models::ParamStore& params,
    const ModelConfig& model_config, std::ostream& console, const InferenceReplicas& replicas) {
  std::map<std::string, seqio::metrics::Metrics> all;
  for (const TaskData& t : tasks_) {
    const auto t0 = std::chrono::steady_clock::now();
    seqio::metrics::Metrics metrics;
    TaskOutputs out;
    // seqio's Evaluator: predict metric_fns get the decodes, score
    // metric_fns the log-likelihoods of the targets (t5x's score_batch).
    if (!t.task->predict_metric_fns().empty()) {
      // t5x passes PRNGKey(0) to the evaluator's predict_fn.
      const std::vector<ExampleInference> inferences =
          InferExamples(model, params, model_config, t.examples, t.lengths, batch_size_,
                        InferMode::kPredict, /*seed=*/0, replicas);
      const seqio::VocabularyPtr& vocab = t.task->output_features().at("targets").vocabulary;
      out.outputs.reserve(inferences.size());
      for (const ExampleInference& e : inferences) out.outputs.push_back(vocab->Decode(e.tokens));
      metrics = seqio::EvaluatePredictions(*t.task, t.examples, out.outputs);
    }
    if (!t.task->score_metric_fns().empty()) {
      const std::vector<ExampleInference> inferences =
          InferExamples(model, params, model_config, t.examples, t.lengths, batch_size_,
                        InferMode::kScore, /*seed=*/0, replicas);
      out.scores.reserve(inferences.size());
      for (const ExampleInference& e : inferences) out.scores.push_back(e.scores.at(0));
      seqio::MergeMetrics(*t.task, seqio::EvaluateScores(*t.task, t.examples, out.scores),
                          metrics);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (config_.console_logger) {
      console << "[" << scope_ << " " << t.task->name() << "] step " << step;
      for (const auto& [k, v] : metrics) console << " | " << k << " " << v;
      console << " | " << t.examples.size() << " examples "
              << (out.outputs.empty() ? "scored" : out.scores.empty() ? "decoded"
                                                                      : "decoded and scored")
              << " in " << std::fixed << std::setprecision(1) << seconds << " s"
              << std::defaultfloat << std::setprecision(6) << std::endl;
    }
    if (write_logs_) Log(step, t, metrics, out);
    all[t.task->name()] = metrics;
  }
  return all;
}

std::vector<std::string> InferenceEvaluator::MetricNames(const std::string& task) const {
  std::vector<std::string> names;
  for (const TaskData& t : tasks_) {
    if (t.task->name() != task) continue;
    seqio::metrics::Metrics m;
    if (!t.task->predict_metric_fns().empty()) {
      std::vector<std::string> targets;
      for (const seqio::Example& ex : t.examples) {
        targets.push_back(seqio::DecodedTarget(*t.task, ex));
      }
      m = seqio::EvaluatePredictions(*t.task, t.examples, targets);
    }
    if (!t.task->score_metric_fns().empty()) {
      // Every target scored 0: the keys do not depend on the scores.
      seqio::MergeMetrics(*t.task,
                          seqio::EvaluateScores(*t.task, t.examples,
                                                std::vector<double>(t.examples.size(), 0.0)),
                          m);
    }
    for (const auto& [k, v] : m) names.push_back(k);
  }
  return names;
}

void InferenceEvaluator::Log(int64_t step, const TaskData& t,
                             const seqio::metrics::Metrics& metrics, const TaskOutputs& out) {
  const std::string& name = t.task->name();
  std::filesystem::create_directories(log_dir_);
  if (config_.tensorboard_logger) {
    auto& w = writers_[name];
    if (!w) w = std::make_unique<trainer::SummaryWriter>(log_dir_ + "/" + name);
    for (const auto& [k, v] : metrics) w->Scalar("eval/" + k, static_cast<float>(v), step);
    w->Flush();
  }
  if (!config_.json_logger) return;
  json line = json::object();
  line["step"] = step;
  for (const auto& [k, v] : metrics) line[k] = v;
  const std::string metrics_path = log_dir_ + "/" + name + "-metrics.jsonl";
  const std::string before =
      std::filesystem::exists(metrics_path) ? seqio::ReadFileToString(metrics_path) : "";
  seqio::WriteStringToFileAtomic(metrics_path, before + DumpJson(line) + "\n");
  if (config_.json_write_n_results && *config_.json_write_n_results == 0) return;
  const size_t count = t.examples.size();
  const size_t n = config_.json_write_n_results
                       ? std::min(count, static_cast<size_t>(*config_.json_write_n_results))
                       : count;
  const seqio::PostprocessFn& post = t.task->postprocess_fn();
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    const seqio::Example& ex = t.examples[i];
    const std::string target = seqio::DecodedTarget(*t.task, ex);
    json j = json::object();
    j["input"] = ExampleJson(ex);
    j["target"] = post ? ValueJson(post(target, ex, true)) : json(target);
    if (!out.outputs.empty()) {
      j["output"] = out.outputs[i];
      j["prediction"] = post ? ValueJson(post(out.outputs[i], ex, false)) : json(out.outputs[i]);
    }
    if (!out.scores.empty()) j["score"] = out.scores[i];
    text += DumpJson(j) + "\n";
  }
  char step_name[32];
  std::snprintf(step_name, sizeof(step_name), "%06lld", static_cast<long long>(step));
  seqio::WriteStringToFileAtomic(log_dir_ + "/" + name + "-" + step_name + ".jsonl", text);
}

}  // namespace t5xx::run
