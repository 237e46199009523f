// How catalog/ builds t5's tasks: a task written as t5/data/tasks.py writes
// it -- a TFDS name and splits, the preprocessors by their Python names
// with their keyword arguments (made through seqio's PreprocessorRegistry,
// so each step is the one gin-defined tasks get), the placeholder where
// seqio.CacheDatasetPlaceholder() sits, output features, postprocess_fn and
// metric_fns. Internal to catalog/. Framework-free: no libtorch.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/catalog/t5_catalog.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"

namespace t5xx::catalog::internal {

// One entry of a task's preprocessors list: a registered preprocessor
// ("t5.data.preprocessors.squad") with its keyword arguments, or
// kPlaceholder (seqio.CacheDatasetPlaceholder()).
struct Step {
  std::string name;
  nlohmann::json kwargs = nlohmann::json::object();
};
inline constexpr char kPlaceholder[] = "seqio.CacheDatasetPlaceholder";

struct TaskSpec {
  std::string name;
  std::string tfds_name;
  std::vector<std::string> splits;  // empty: seqio's splits=None (every split)
  std::vector<Step> steps;
  seqio::OutputFeatures output_features;
  seqio::PostprocessFn postprocess_fn;  // empty: none
  std::vector<seqio::MetricFn> metric_fns;
};

class CatalogBuilder {
 public:
  CatalogBuilder(seqio::TaskRegistry& tasks, const T5CatalogOptions& options);

  // t5's DEFAULT_OUTPUT_FEATURES: "inputs" (add_eos, not required) and
  // "targets" (add_eos, required), both the default vocabulary.
  const seqio::OutputFeatures& default_output_features() const { return default_features_; }
  // SentencePiece vocabulary at `gs_path` (its local copy; see
  // t5_catalog.h), made once per path; a vocabulary that names the missing
  // copy on first use when there is none.
  seqio::VocabularyPtr Vocabulary(const std::string& gs_path, int extra_ids);

  // Builds and registers the task (steps through the preprocessor
  // registry). With num_sentinels > 0 it registers
  // seqio.experimental.add_task_with_sentinels(spec.name, num_sentinels)'s
  // variant instead (task_sentinels.h): "_<n>_sentinel" in the name, the
  // sentinel steps, a postprocess_fn that first removes the sentinels.
  // Throws t5xx::Error naming the task for an unknown step or bad
  // arguments, or a name already taken.
  void AddTask(const TaskSpec& spec, int num_sentinels = 0);
  // The sentinel variant of a task added before.
  void AddTaskWithSentinels(const std::string& name, int num_sentinels = 1);

 private:
  seqio::TaskRegistry& tasks_;
  T5CatalogOptions options_;
  seqio::PreprocessorRegistry preprocessors_;
  std::map<std::string, seqio::VocabularyPtr> vocabularies_;
  seqio::OutputFeatures default_features_;
  std::map<std::string, TaskSpec> specs_;  // as added, for the sentinel variants
};

// t5/data/tasks.py, by theme (one file each).
void AddPretrainingTasks(CatalogBuilder& b);  // c4_*, wikipedia, prefix-LM objectives, full LM
void AddGlueTasks(CatalogBuilder& b);         // GLUE, SuperGLUE, WSC/DPR simple
void AddGenerationTasks(CatalogBuilder& b);   // CNN/DailyMail, WMT, SQuAD, TriviaQA
// t5/data/mixtures.py.
void AddT5Mixtures(const seqio::TaskRegistry& tasks, seqio::MixtureRegistry& mixtures);

// t5's default vocabulary paths (t5/data/utils.py DEFAULT_SPM_PATH, and the
// one tasks.py names for the prefix-LM objective and full-LM tasks).
inline constexpr char kDefaultSpmPath[] = "gs://t5-data/vocabs/cc_all.32000/sentencepiece.model";
inline constexpr int kDefaultExtraIds = 100;
inline constexpr char kSpm100ExtraPath[] =
    "gs://t5-data/vocabs/cc_all.32000.100extra/sentencepiece.model";

}  // namespace t5xx::catalog::internal
