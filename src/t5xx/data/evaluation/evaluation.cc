// Scoring a Task's predictions with its postprocessor and metrics (see
// evaluation.h).
#include "t5xx/data/evaluation/evaluation.h"

#include <utility>

#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_kind.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::seqio {

std::string DecodedTarget(const Task& task, const Example& example) {
  if (auto it = example.find("targets_pretokenized"); it != example.end()) {
    if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  }
  auto it = example.find("targets");
  const auto* ids = it == example.end() ? nullptr : std::get_if<Tokens>(&it->second);
  auto f = task.output_features().find("targets");
  T5XX_CHECK(ids && f != task.output_features().end() && f->second.vocabulary,
        "task '" + task.name() + "': an example to evaluate has neither 'targets_pretokenized' "
        "text nor 'targets' tokens with a vocabulary in the task's output_features");
  return f->second.vocabulary->Decode(*ids);
}

namespace {

std::string Where(const Task& task) { return "evaluating task '" + task.name() + "': "; }

// postprocess(DecodedTarget(task, ex), ex, is_target=true) of every example.
std::vector<PostprocessedValue> PostprocessedTargets(const Task& task,
                                                     const std::vector<Example>& examples) {
  const PostprocessFn& post = task.postprocess_fn();
  std::vector<PostprocessedValue> targets;
  targets.reserve(examples.size());
  for (const Example& ex : examples) {
    const std::string target = DecodedTarget(task, ex);
    if (post) {
      targets.push_back(post(target, ex, /*is_target=*/true));
    } else {
      targets.emplace_back(target);
    }
  }
  return targets;
}

// Runs every fn on (targets, x) and merges the results.
template <typename Fn, typename X>
metrics::Metrics RunMetrics(const Task& task, const std::vector<Fn>& fns,
                            const std::vector<PostprocessedValue>& targets, const X& x) {
  metrics::Metrics out;
  for (const Fn& fn : fns) {
    metrics::Metrics m;
    try {
      m = fn(targets, x);
    } catch (const Error& e) {
      throw Error(Where(task) + e.what());
    }
    MergeMetrics(task, m, out);
  }
  return out;
}

}  // namespace

void MergeMetrics(const Task& task, const metrics::Metrics& from, metrics::Metrics& into) {
  for (const auto& [k, v] : from) {
    T5XX_CHECK(!into.count(k), Where(task) + "two metric_fns both return '" + k +
                                   "'; a metric may appear in only one of them");
    into[k] = v;
  }
}

metrics::Metrics EvaluatePredictions(const Task& task, const std::vector<Example>& examples,
                                     const std::vector<std::string>& predictions) {
  const std::string where = Where(task);
  T5XX_CHECK(!task.predict_metric_fns().empty(),
             where + (task.score_metric_fns().empty()
                          ? "the task has no metric_fns; bind seqio.Task.metric_fns, e.g. "
                            "[@t5.evaluation.metrics.accuracy]"
                          : "the task's metric_fns all score the model's log-likelihoods "
                            "(score metric_fns), not predictions; `t5xx eval` computes them"));
  T5XX_CHECK(examples.size() == predictions.size(),
        where + std::to_string(examples.size()) + " examples but " +
            std::to_string(predictions.size()) + " predictions; give one prediction per example");
  T5XX_CHECK(!examples.empty(), where + "no examples to score");
  const PostprocessFn& post = task.postprocess_fn();
  std::vector<PostprocessedValue> preds;
  preds.reserve(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    if (post) {
      preds.push_back(post(predictions[i], examples[i], /*is_target=*/false));
    } else {
      preds.emplace_back(predictions[i]);
    }
  }
  return RunMetrics(task, task.predict_metric_fns(), PostprocessedTargets(task, examples), preds);
}

metrics::Metrics EvaluateScores(const Task& task, const std::vector<Example>& examples,
                                const std::vector<double>& scores) {
  const std::string where = Where(task);
  T5XX_CHECK(!task.score_metric_fns().empty(), where + "the task has no score metric_fns");
  T5XX_CHECK(examples.size() == scores.size(),
             where + std::to_string(examples.size()) + " examples but " +
                 std::to_string(scores.size()) + " scores; give one score per example");
  T5XX_CHECK(!examples.empty(), where + "no examples to score");
  return RunMetrics(task, task.score_metric_fns(), PostprocessedTargets(task, examples), scores);
}

std::vector<std::string> ReadPredictionsFile(const std::string& path) {
  const std::string why = NotARegularFile(path);
  T5XX_CHECK(why.empty(), "predictions file '" + path + "' " + why);
  LineReader reader(path);
  std::vector<std::string> predictions;
  for (std::string line; reader.Next(&line);) predictions.push_back(std::move(line));
  return predictions;
}

}  // namespace t5xx::seqio
