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
#include "t5xx/storage/remote_copy.h"
#include "t5xx/storage/staged_output.h"
#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {

namespace {

constexpr char kExportUsage[] =
    "usage: t5xx export --gin_file=MODEL.gin [--gin.NAME=VALUE] [--gin_bindings=...]\n"
    "         [--gin_search_paths=a,b] --checkpoint_path=DIR/checkpoint_N --output_dir=NEW_DIR\n"
    "         [--data_dir=DIR]\n"
    "Writes the checkpoint's parameters as a Hugging Face Transformers T5 directory:\n"
    "config.json, generation_config.json, model.safetensors (float32) and the tokenizer\n"
    "files (spiece.model + T5Tokenizer config, or ByT5Tokenizer's). The gin files give\n"
    "the model (the macro MODEL: sizes, activations, vocabulary) the checkpoint was\n"
    "trained with; --data_dir is where a relative sentencepiece_model_file is found.\n"
    "--output_dir must be new or an empty directory; nothing is written on an error.\n"
    "See docs/transformers_export.md.\n";
constexpr char kImportUsage[] =
    "usage: t5xx import --hf_model_dir=DIR --output_dir=NEW_DIR\n"
    "Reads a Transformers T5/mT5/ByT5 directory (config.json; model.safetensors,\n"
    "model.safetensors.index.json with its shards, or pytorch_model.bin [.index.json];\n"
    "spiece.model or a ByT5Tokenizer config) and writes NEW_DIR/checkpoint_0 (t5x's\n"
    "layout, parameters only), NEW_DIR/model.gin (the model file for train, infer and\n"
    "eval) and NEW_DIR/spiece.model. --output_dir must be new or an empty directory;\n"
    "nothing is written on an error. See docs/transformers_import.md.\n";

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

// Names the required flags that are missing; throws with `usage` otherwise.
void RequireFlags(const std::map<std::string, std::string>& flags,
                  const std::vector<std::string>& required, bool has_gin_file,
                  const std::string& command, const char* usage) {
  std::string missing = has_gin_file ? "" : " --gin_file";
  for (const std::string& f : required) {
    if (!flags.count(f) || flags.at(f).empty()) missing += " --" + f;
  }
  T5XX_CHECK(missing.empty(), "t5xx " + command + ": missing" + missing + "\n" + usage);
}

// A gs:// or s3:// input directory, copied (--data_dir's mirror, else the
// object cache: storage/remote_copy.h); a local one as it is.
std::string LocalInput(const std::string& path, const std::string& data_dir, const std::string& flag) {
  if (!IsRemotePath(path)) return path;
  const std::optional<std::string> local = ReadableCopy(path, data_dir);
  T5XX_CHECK(local.has_value(), MissingRemoteCopyMessage(path, data_dir, flag, /*directory=*/true));
  return *local;
}

}  // namespace

int ExportCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::cout << kExportUsage;
    return 0;
  }
  run::LoadedTrainConfig loaded = run::NewTrainConfig();
  const std::vector<std::string> rest = gin::ParseGinFlags(args, *loaded.config);
  std::map<std::string, std::string> flags =
      ParseFlags(rest, {"checkpoint_path", "output_dir", "data_dir"}, "export");
  RequireFlags(flags, {"checkpoint_path", "output_dir"}, !loaded.config->parsed_files().empty(),
               "export", kExportUsage);
  const run::ModelConfig model = run::ReadModelMacro(*loaded.config);
  const std::string data_dir =
      flags.count("data_dir") ? flags["data_dir"] : seqio::DefaultDataDir();
  const run::TransformersExport r = run::ExportToTransformers(
      model, LocalInput(flags["checkpoint_path"], data_dir, "--checkpoint_path"), flags["output_dir"],
      data_dir);
  for (const std::string& line : storage::UploadStagedOutputs()) std::cout << "[export] " << line << "\n";
  std::cout << "[export] " << flags["checkpoint_path"] << " (step " << r.step << ", "
            << r.parameters << " parameters) -> " << flags["output_dir"] << ":";
  for (const std::string& f : r.files) std::cout << " " << f;
  if (storage::IsObjectStoreUrl(flags["output_dir"])) {  // Transformers reads local directories
    std::cout << "\n[done] copy it to a local directory ("
              << (flags["output_dir"].rfind("gs://", 0) == 0 ? "gsutil -m cp -r " : "aws s3 cp --recursive ")
              << flags["output_dir"] << " DIR) and load it with "
              << "transformers.T5ForConditionalGeneration.from_pretrained(DIR)" << std::endl;
    return 0;
  }
  std::cout << "\n[done] load it with transformers.T5ForConditionalGeneration.from_pretrained('"
            << flags["output_dir"] << "')" << std::endl;
  return 0;
}

int ImportCommand(const std::vector<std::string>& args) {
  if (WantsHelp(args)) {
    std::cout << kImportUsage;
    return 0;
  }
  std::map<std::string, std::string> flags =
      ParseFlags(args, {"hf_model_dir", "output_dir"}, "import");
  RequireFlags(flags, {"hf_model_dir", "output_dir"}, true, "import", kImportUsage);
  run::TransformersImport r = run::ImportFromTransformers(
      LocalInput(flags["hf_model_dir"], seqio::DefaultDataDir(), "--hf_model_dir"), flags["output_dir"]);
  const bool bucket = storage::IsObjectStoreUrl(flags["output_dir"]);
  if (bucket) {
    // The model gin names its vocabulary (and, in comments, its sources) by
    // the paths it was written with: in the bucket, by their URLs.
    const std::string text = storage::ReadFile(r.gin_file, "the imported model gin");
    storage::WriteFile(r.gin_file, WithUrls(text));
  }
  for (const std::string& line : storage::UploadStagedOutputs()) std::cout << "[import] " << line << "\n";
  std::cout << "[import] " << flags["hf_model_dir"] << "/" << r.weights << " (" << r.parameters
            << " parameters) -> " << WithUrls(r.checkpoint_dir) << "\n[done] model gin file: "
            << WithUrls(r.gin_file);
  if (bucket) {  // gin files are read from local paths
    std::cout << " (copy it here, then t5xx infer --gin_file=model.gin";
  } else {
    std::cout << " (t5xx infer --gin_file=" << r.gin_file;
  }
  std::cout << " --gin_file=runs/infer.gin --gin.CHECKPOINT_PATH=\"'" << WithUrls(r.checkpoint_dir)
            << "'\" ...)" << std::endl;
  return 0;
}

}  // namespace t5xx::cli
