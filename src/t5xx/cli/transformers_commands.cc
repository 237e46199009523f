// `t5xx export` and `t5xx import`: t5x checkpoints to and from Hugging Face
// Transformers model directories (run/transformers/; docs/
// transformers_export.md, docs/transformers_import.md).
#include <iostream>

#include "t5xx/cli/commands.h"
#include "t5xx/config/flags.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/run/transformers/export.h"
#include "t5xx/run/transformers/import.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {

int ExportCommand(const std::vector<std::string>& args) {
  run::LoadedTrainConfig loaded = run::NewTrainConfig();
  const std::vector<std::string> rest = gin::ParseGinFlags(args, *loaded.config);
  std::map<std::string, std::string> flags =
      ParseFlags(rest, {"checkpoint_path", "output_dir", "data_dir"}, "export");
  T5XX_CHECK(!loaded.config->parsed_files().empty() && flags.count("checkpoint_path") &&
                 flags.count("output_dir"),
             "t5xx export needs the model's gin file, the checkpoint and a new directory: "
             "t5xx export --gin_file=models/t5_1_1/small.gin "
             "--checkpoint_path=MODEL_DIR/checkpoint_N --output_dir=DIR");
  const run::ModelConfig model = run::ReadModelMacro(*loaded.config);
  const std::string data_dir =
      flags.count("data_dir") ? flags["data_dir"] : seqio::DefaultDataDir();
  const run::TransformersExport r = run::ExportToTransformers(
      model, flags["checkpoint_path"], flags["output_dir"], data_dir);
  std::cout << "[export] " << flags["checkpoint_path"] << " (step " << r.step << ", "
            << r.parameters << " parameters) -> " << flags["output_dir"] << ":";
  for (const std::string& f : r.files) std::cout << " " << f;
  std::cout << "\n[done] load it with transformers.T5ForConditionalGeneration.from_pretrained('"
            << flags["output_dir"] << "')" << std::endl;
  return 0;
}

int ImportCommand(const std::vector<std::string>& args) {
  std::map<std::string, std::string> flags =
      ParseFlags(args, {"hf_model_dir", "output_dir"}, "import");
  T5XX_CHECK(flags.count("hf_model_dir") && flags.count("output_dir"),
             "t5xx import needs a Transformers model directory and a new directory: "
             "t5xx import --hf_model_dir=DIR --output_dir=DIR");
  const run::TransformersImport r =
      run::ImportFromTransformers(flags["hf_model_dir"], flags["output_dir"]);
  std::cout << "[import] " << flags["hf_model_dir"] << "/" << r.weights << " (" << r.parameters
            << " parameters) -> " << r.checkpoint_dir << "\n[done] model gin file: "
            << r.gin_file << " (t5xx infer --gin_file=" << r.gin_file
            << " --gin_file=runs/infer.gin --gin.CHECKPOINT_PATH=\"'" << r.checkpoint_dir
            << "'\" ...)" << std::endl;
  return 0;
}

}  // namespace t5xx::cli
