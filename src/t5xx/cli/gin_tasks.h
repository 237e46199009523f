// seqio Tasks and Mixtures defined in gin files (docs/gin.md, "Tasks and
// mixtures in gin"). The data layer knows nothing of gin; this CLI-layer glue
// reads the seqio.Task / seqio.Mixture / data source / vocabulary bindings
// from a finalized gin::Config and adds the objects to seqio's registries,
// explicitly at start-up (no static initializers).
#pragma once

#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/data/mixture.h"
#include "t5xx/data/preprocessor_registry.h"
#include "t5xx/data/task.h"

namespace t5xx::cli {

// The preprocessors gin tasks may name: seqio's RegisterSeqioPreprocessors.
const seqio::PreprocessorRegistry& GinPreprocessors();

// Registers every preprocessor of `preprocessors` as a gin configurable under
// its Python name (seqio.preprocessors.rekey, ...), with one parameter per
// argument, so that `@my_task/seqio.preprocessors.rekey` and
// `my_task/seqio.preprocessors.rekey.key_map = {...}` are checked by gin.
void RegisterPreprocessorConfigurables(gin::Registry& registry,
                                       const seqio::PreprocessorRegistry& preprocessors =
                                           GinPreprocessors());

struct GinTaskNames {
  std::vector<std::string> tasks;
  std::vector<std::string> mixtures;
};

// Builds the tasks and mixtures listed in t5xx.seqio.register.tasks /
// .mixtures (if bound) and adds them to the registries, in order. A relative
// SentencePiece model file is looked up in the current directory, then under
// `data_dir`. Throws t5xx::Error naming the gin file:line of the offending
// value (unknown source/vocabulary/preprocessor kind, bad arguments, a task
// name that is already registered, ...). skip_bad_records is the default for
// file sources whose gin `skip_bad_records` is None (the CLI's
// --skip_bad_records flag).
GinTaskNames RegisterGinTasks(gin::Config& config, const std::string& data_dir,
                              seqio::TaskRegistry& tasks = seqio::TaskRegistry::Global(),
                              seqio::MixtureRegistry& mixtures = seqio::MixtureRegistry::Global(),
                              bool skip_bad_records = false);

// Throws t5xx::Error listing the bindings nothing read (t5x would ignore them).
void RequireAllBindingsRead(const gin::Config& config, const std::string& command);

}  // namespace t5xx::cli
