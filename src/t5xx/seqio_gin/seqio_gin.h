// The gin-to-seqio bridge: seqio Tasks and Mixtures defined in gin files
// (docs/gin.md, "Tasks and mixtures in gin"). It declares seqio's
// configurables (seqio.Task, seqio.Mixture, seqio.Feature, the data sources,
// vocabularies, preprocessors, t5's postprocessors and metrics,
// t5xx.seqio.register) and builds the objects they describe from a
// finalized gin::Config into seqio's registries, explicitly at start-up (no
// static initializers). The data layer knows nothing of gin and the gin
// engine knows no seqio name: this library joins them.
#pragma once

#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/dataset_providers/task.h"
#include "t5xx/data/preprocessors/preprocessor_registry.h"

namespace t5xx::seqio_gin {

// Adds every seqio configurable gin tasks may use (the list above, and each
// preprocessor of GinPreprocessors() under its Python name with one
// parameter per argument, so `my_task/seqio.preprocessors.rekey.key_map =
// {...}` is checked by gin). Throws t5xx::Error if one is already present.
void RegisterSeqioConfigurables(gin::Registry& registry);

// The preprocessors gin tasks may name: seqio's RegisterSeqioPreprocessors.
const seqio::PreprocessorRegistry& GinPreprocessors();

struct GinTaskOptions {
  // A relative SentencePiece model file is looked up in the current
  // directory, then here.
  std::string data_dir;
  // The default of file sources whose gin `skip_bad_records` is None (the
  // CLI's --skip_bad_records flag).
  bool skip_bad_records = false;
  // Names a gin task may not take (t5xx's demo tasks), even when they are
  // not registered.
  std::vector<std::string> demo_task_names;
};

struct GinTaskNames {
  std::vector<std::string> tasks;
  std::vector<std::string> mixtures;
};

// Builds the tasks and mixtures listed in t5xx.seqio.register.tasks /
// .mixtures (if bound) and adds them to the registries, in order. Throws
// t5xx::Error naming the gin file:line of the offending value (unknown
// source/vocabulary/preprocessor kind, bad arguments, a name that is already
// registered or a demo task's, ...).
GinTaskNames RegisterGinTasks(gin::Config& config, const GinTaskOptions& options,
                              seqio::TaskRegistry& tasks, seqio::MixtureRegistry& mixtures);

}  // namespace t5xx::seqio_gin
