// See train_setup.h.
#include "t5xx/run/train_setup.h"

#include "t5xx/catalog/t5_catalog.h"
#include "t5xx/config/reading.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/demo/demo_tasks.h"
#include "t5xx/seqio_gin/seqio_gin.h"
#include "t5xx/storage/remote_copy.h"

namespace t5xx::run {

std::optional<std::string> RegisterTasks(gin::Config* config, const RunOptions& options) {
  // t5's task catalog, when a module that registers it is imported: seqio's
  // --module_import, a gin `import t5.data.mixtures`, or
  // MIXTURE_OR_TASK_MODULE (t5x's gins bind DatasetConfig.module to it).
  std::vector<std::string> modules = options.module_imports;
  if (config) {
    for (const std::string& m : config->ImportedModules()) modules.push_back(m);
    if (std::optional<gin::Value> v = config->MacroValue("MIXTURE_OR_TASK_MODULE");
        v && v->kind() == gin::Value::Kind::kString) {
      modules.push_back(v->AsString());
    }
  }
  // Its names, for errors about them whether or not it is imported.
  static const bool named = [] {
    std::vector<std::string> names = catalog::T5CatalogTaskNames();
    for (const std::string& m : catalog::T5CatalogMixtureNames()) names.push_back(m);
    seqio::SetModuleProviderNames("t5.data.mixtures", std::move(names));
    return true;
  }();
  (void)named;
  for (const std::string& m : modules) {
    if (!catalog::IsT5CatalogModule(m)) continue;
    catalog::RegisterT5Catalog(seqio::TaskRegistry::Global(), seqio::MixtureRegistry::Global(),
                               {options.data_dir, options.skip_bad_records});
    break;
  }
  std::optional<std::string> demo_problem = seqio::RegisterDemoTasks(
      options.data_dir, seqio::TaskRegistry::Global(), options.skip_bad_records);
  if (config) {
    seqio_gin::GinTaskOptions gin_tasks;
    gin_tasks.data_dir = options.data_dir;
    gin_tasks.skip_bad_records = options.skip_bad_records;
    gin_tasks.demo_task_names = seqio::DemoTaskNames();
    seqio_gin::RegisterGinTasks(*config, gin_tasks, seqio::TaskRegistry::Global(),
                                seqio::MixtureRegistry::Global());
  }
  return demo_problem;
}

LoadedTrainConfig NewTrainConfig() {
  LoadedTrainConfig out;
  out.registry = std::make_unique<gin::Registry>();
  RegisterConfigurables(*out.registry);
  out.config = std::make_unique<gin::Config>(out.registry.get());
  return out;
}

void LoadTrainConfig(LoadedTrainConfig& loaded, RunOptions options, const std::string& command,
                     std::ostream& notes) {
  loaded.options = std::move(options);
  const RunOptions& o = loaded.options;
  SetRemoteCopyDataDir(o.data_dir);  // gs:// paths bound in gin: their copies there
  // What the command calls: t5x's train() (infer(), evaluate()) and the
  // gin-defined tasks and mixtures. `t5xx config` validates what its files
  // configure: t5x's runs/infer.gin binds infer(), runs/eval.gin
  // evaluate(), the others train().
  loaded.command = command == "infer" || command == "eval" ? command : "train";
  if (command == "config" && !loaded.config->Binds("__main__.train")) {
    const bool infer = loaded.config->Binds("__main__.infer");
    const bool eval = loaded.config->Binds("__main__.evaluate");
    if (infer != eval) loaded.command = infer ? "infer" : "eval";
  }
  if (loaded.command == "infer") {
    loaded.config->Finalize({"__main__.infer", "t5xx.seqio.register"});
    loaded.infer = ReadInferSetup(*loaded.config);
  } else if (loaded.command == "eval") {
    loaded.config->Finalize({"__main__.evaluate", "t5xx.seqio.register"});
    loaded.eval = ReadEvalSetup(*loaded.config);
  } else {
    loaded.config->Finalize({"__main__.train", "t5xx.seqio.register"});
    loaded.setup = ReadTrainSetup(*loaded.config);
  }
  loaded.demo_problem = RegisterTasks(loaded.config.get(), o);
  gin::RequireAllBindingsRead(*loaded.config, command, notes);
}

}  // namespace t5xx::run
