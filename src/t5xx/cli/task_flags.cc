// The task-defining flags of `t5xx data` and `t5xx cache_tasks`
// (task_flags.h).
#include "t5xx/cli/task_flags.h"

#include <iostream>
#include <sstream>

#include "t5xx/catalog/t5_catalog.h"
#include "t5xx/cli/commands.h"
#include "t5xx/config/flags.h"
#include "t5xx/config/reading.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/storage/remote_copy.h"

namespace t5xx::cli {

run::LoadedTrainConfig TakeGinTaskFlags(std::vector<std::string>* args) {
  bool has_gin = false;
  for (const auto& a : *args) has_gin = has_gin || a.rfind("--gin", 0) == 0;
  run::LoadedTrainConfig gin;  // only the registry and the config
  if (has_gin) {
    gin = run::NewTrainConfig();
    *args = gin::ParseGinFlags(*args, *gin.config);
  }
  return gin;
}

std::optional<std::string> RegisterFlagTasks(run::LoadedTrainConfig& gin,
                                             std::map<std::string, std::string>& flags,
                                             const std::string& command) {
  run::RunOptions options;
  options.data_dir = flags.count("data_dir") ? flags["data_dir"] : seqio::DefaultDataDir();
  SetRemoteCopyDataDir(options.data_dir);
  options.skip_bad_records =
      flags.count("skip_bad_records") &&
      ParseBoolFlag("t5xx " + command, "skip_bad_records", flags["skip_bad_records"]);
  // seqio's --module_import=M (comma-separated here): t5.data.mixtures
  // registers t5's catalog.
  if (flags.count("module_import")) {
    std::stringstream ss(flags["module_import"]);
    for (std::string m; std::getline(ss, m, ',');) {
      T5XX_CHECK(catalog::IsT5CatalogModule(m),
                 "t5xx " + command + ": --module_import=" + m + ": t5xx has no Python modules; "
                 "the ones it knows stand for t5's task catalog: t5.data.mixtures, t5.data.tasks");
      options.module_imports.push_back(m);
    }
  }
  // Tasks and mixtures only: no model is built, so a model file's unset
  // %gin.REQUIRED (DROPOUT_RATE) is no error here (t5x's gin would refuse it,
  // but t5x has no such command).
  if (gin.config) gin.config->Finalize({"t5xx.seqio.register"}, /*require_overrides=*/false);
  std::optional<std::string> demo_problem = run::RegisterTasks(gin.config.get(), options);
  if (gin.config) gin::RequireAllBindingsRead(*gin.config, command, std::cerr);
  return demo_problem;
}

}  // namespace t5xx::cli
