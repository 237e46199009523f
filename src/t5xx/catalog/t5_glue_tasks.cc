// t5/data/tasks.py's GLUE, SuperGLUE, WSC and DPR tasks, with glue_utils.py's
// text preprocessor per TFDS config (its postprocess_fn and metrics:
// postprocessors.h glue_postprocess_fn, metric_fns.h glue_metric).
#include <optional>

#include "t5xx/catalog/catalog_builder.h"
#include "t5xx/data/dataset_providers/postprocessors.h"

namespace t5xx::catalog::internal {
namespace {

using nlohmann::json;
namespace mf = seqio::metric_fns;
namespace pp = seqio::postprocessors;

// A TFDS builder config of glue or super_glue: its name and label classes
// (TFDS 4.9's label_classes; none for stsb and ReCoRD, whose labels are
// not classes).
struct Config {
  std::string name;
  std::vector<std::string> labels;
};

// glue_utils.get_glue_text_preprocessor.
Step TextPreprocessor(const Config& c) {
  if (c.name == "stsb") return {"t5.data.preprocessors.stsb"};
  if (c.name == "record") return {"t5.data.preprocessors.record"};
  std::string benchmark = c.name;
  if (c.name.find("mnli") != std::string::npos || c.name == "ax") benchmark = "mnli";
  if (c.name == "axb" || c.name == "axg") benchmark = "rte";
  json feature_names = nullptr;
  if (c.name == "multirc") feature_names = {"question", "answer", "paragraph"};
  if (c.name == "wic") feature_names = {"sentence1", "sentence2", "word"};
  return {"t5.data.preprocessors.glue",
          {{"benchmark_name", benchmark}, {"label_names", c.labels},
           {"feature_names", feature_names}}};
}

std::vector<Step> Tokenized(std::vector<Step> steps) {
  steps.push_back({"seqio.preprocessors.tokenize"});
  steps.push_back({kPlaceholder});
  steps.push_back({"seqio.preprocessors.append_eos_after_trim"});
  return steps;
}

}  // namespace

void AddGlueTasks(CatalogBuilder& b) {
  const seqio::OutputFeatures& features = b.default_output_features();
  const std::vector<std::string> nli3 = {"entailment", "neutral", "contradiction"};
  const std::vector<std::string> nli2 = {"entailment", "not_entailment"};
  const std::vector<Config> glue = {
      {"cola", {"unacceptable", "acceptable"}}, {"sst2", {"negative", "positive"}},
      {"mrpc", {"not_equivalent", "equivalent"}}, {"qqp", {"not_duplicate", "duplicate"}},
      {"stsb", {}}, {"mnli", nli3}, {"mnli_mismatched", nli3}, {"mnli_matched", nli3},
      {"qnli", nli2}, {"rte", nli2}, {"wnli", {"not_entailment", "entailment"}}, {"ax", nli3}};
  for (const Config& c : glue) {
    b.AddTask({"glue_" + c.name + "_v002", "glue/" + c.name + ":1.0.0",
               c.name == "ax" ? std::vector<std::string>{"test"} : std::vector<std::string>{},
               Tokenized({TextPreprocessor(c)}), features, pp::glue_postprocess_fn(c.name, c.labels),
               mf::glue_metric(c.name)});
  }

  const std::vector<std::string> boolean = {"False", "True"};
  const std::vector<Config> super_glue = {
      {"boolq", boolean}, {"cb", {"entailment", "contradiction", "neutral"}},
      {"copa", {"choice1", "choice2"}}, {"multirc", boolean}, {"record", boolean},
      {"rte", nli2}, {"wic", boolean}, {"axb", nli2}, {"axg", nli2}};
  for (const Config& c : super_glue) {
    std::vector<Step> steps;
    if (c.name == "axb") {
      steps.push_back({"t5.data.preprocessors.rekey",
                       {{"key_map", {{"premise", "sentence1"}, {"hypothesis", "sentence2"},
                                     {"label", "label"}, {"idx", "idx"}}}}});
    }
    steps.push_back(TextPreprocessor(c));
    const std::string name = "super_glue_" + c.name + "_v102";
    b.AddTask({name, "super_glue/" + c.name + ":1.0.2",
               c.name == "axb" || c.name == "axg" ? std::vector<std::string>{"test"}
                                                  : std::vector<std::string>{},
               Tokenized(std::move(steps)), features, pp::glue_postprocess_fn(c.name, c.labels),
               mf::super_glue_metric(c.name)});
    b.AddTaskWithSentinels(name, 1);
  }

  b.AddTask({"dpr_v001_simple", "definite_pronoun_resolution:1.1.0", {},
             Tokenized({{"t5.data.preprocessors.definite_pronoun_resolution_simple"}}), features,
             nullptr, {mf::accuracy()}});
  b.AddTaskWithSentinels("dpr_v001_simple", 1);
  b.AddTask({"super_glue_wsc_v102_simple_train", "super_glue/wsc.fixed:1.0.2", {"train"},
             Tokenized({{"t5.data.preprocessors.wsc_simple", {{"correct_referent_only", true}}}}),
             features, nullptr, {}});
  b.AddTaskWithSentinels("super_glue_wsc_v102_simple_train", 1);
  b.AddTask({"super_glue_wsc_v102_simple_eval", "super_glue/wsc.fixed:1.0.2",
             {"validation", "test"},
             Tokenized({{"t5.data.preprocessors.wsc_simple", {{"correct_referent_only", false}}}}),
             features, pp::wsc_simple(), {mf::accuracy()}});
  b.AddTaskWithSentinels("super_glue_wsc_v102_simple_eval", 1);
  b.AddTask({"glue_wnli_v002_simple_eval", "glue/wnli:1.0.0", {"validation", "test"},
             Tokenized({{"t5.data.preprocessors.wnli_simple"}}), features, pp::wsc_simple(),
             {mf::accuracy()}});
}

}  // namespace t5xx::catalog::internal
