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

metrics::Metrics EvaluatePredictions(const Task& task, const std::vector<Example>& examples,
                                     const std::vector<std::string>& predictions) {
  const std::string where = "evaluating task '" + task.name() + "': ";
  T5XX_CHECK(!task.metric_fns().empty(),
        where + "the task has no metric_fns; bind seqio.Task.metric_fns, e.g. "
                "[@t5.evaluation.metrics.accuracy]");
  T5XX_CHECK(examples.size() == predictions.size(),
        where + std::to_string(examples.size()) + " examples but " +
            std::to_string(predictions.size()) + " predictions; give one prediction per example");
  T5XX_CHECK(!examples.empty(), where + "no examples to score");
  const PostprocessFn& post = task.postprocess_fn();
  std::vector<PostprocessedValue> targets, preds;
  targets.reserve(examples.size());
  preds.reserve(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    const std::string target = DecodedTarget(task, examples[i]);
    if (post) {
      targets.push_back(post(target, examples[i], /*is_target=*/true));
      preds.push_back(post(predictions[i], examples[i], /*is_target=*/false));
    } else {
      targets.emplace_back(target);
      preds.emplace_back(predictions[i]);
    }
  }
  metrics::Metrics out;
  for (const MetricFn& fn : task.metric_fns()) {
    metrics::Metrics m;
    try {
      m = fn(targets, preds);
    } catch (const Error& e) {
      throw Error(where + e.what());
    }
    for (auto& [k, v] : m) {
      T5XX_CHECK(!out.count(k), where + "two metric_fns both return '" + k +
                               "'; a metric may appear in only one of them");
      out[k] = v;
    }
  }
  return out;
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
