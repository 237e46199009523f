// See transformers_files.h.
#include "t5xx/run/transformers/transformers_files.h"

#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/data/vocabularies/byte_vocabulary.h"
#include "t5xx/data/vocabularies/sentencepiece_vocabulary.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/storage/staged_output.h"
#include "t5xx/storage/storage.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::run {
namespace fs = std::filesystem;

std::string CheckOutputDir(const std::string& dir, const std::string& flag) {
  T5XX_CHECK(!dir.empty(), flag + " is required");
  if (storage::IsObjectStoreUrl(dir)) {
    // Written in its staging directory, uploaded by the command once whole
    // (storage/staged_output.h).
    T5XX_CHECK(storage::ListDirectory(dir).empty(),
               flag + "=" + dir + " already holds objects; give a new one (nothing is overwritten)");
    const std::string local = storage::StagedOutputPath(dir, flag);
    std::error_code ec;
    fs::remove_all(local, ec);  // an earlier attempt's files
    T5XX_CHECK(!ec, flag + "=" + dir + ": cannot empty its staging directory " + local + ": " + ec.message());
    return local;
  }
  fs::path p = fs::absolute(dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "out/" and "out/." are "out"
  std::error_code ec;
  if (fs::exists(fs::symlink_status(p, ec))) {
    T5XX_CHECK(fs::is_directory(p, ec) && fs::is_empty(p, ec),
               flag + "=" + dir + " exists and is not an empty directory; give a new one "
               "(nothing is overwritten)");
  }
  for (fs::path a = p.parent_path(); !a.empty() && a != a.root_path(); a = a.parent_path()) {
    if (fs::exists(a, ec)) {
      T5XX_CHECK(fs::is_directory(a, ec),
                 flag + "=" + dir + ": " + a.string() + " is not a directory");
      break;
    }
  }
  return p.string();
}

void WriteOutputDir(const std::string& out, const std::string& flag,
                    const std::function<void(const std::string& tmp)>& write) {
  const std::string tmp = out + ".tmp-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  T5XX_CHECK(!ec, flag + "=" + out + " cannot be written: creating " + tmp + ": " + ec.message());
  try {
    write(tmp);
    if (fs::exists(out, ec)) fs::remove(out, ec);  // empty (CheckOutputDir)
    fs::rename(tmp, out, ec);
    T5XX_CHECK(!ec, flag + "=" + out + ": cannot rename " + tmp + " to it: " + ec.message());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

void CheckVocabularyFits(const VocabularyConfig& v, const std::string& sentencepiece_path,
                         int64_t vocab_size, const std::string& where) {
  int64_t ids = 0;
  std::string what;
  if (v.byte) {
    ids = seqio::ByteVocabulary(static_cast<int32_t>(v.extra_ids)).vocab_size();
    what = "ByT5's 259 byte ids";
  } else {
    T5XX_CHECK(fs::is_regular_file(sentencepiece_path),
               where + ": the SentencePiece model " + sentencepiece_path + " does not exist");
    const seqio::SentencePieceVocabulary spm(sentencepiece_path,
                                             static_cast<int32_t>(v.extra_ids));
    ids = spm.vocab_size();
    what = std::to_string(ids - v.extra_ids) + " pieces of " + sentencepiece_path;
  }
  T5XX_CHECK(ids <= vocab_size,
             where + ": the vocabulary has " + std::to_string(ids) + " ids (" + what + " + " +
                 std::to_string(v.extra_ids) + " extra_ids) but the model has vocab_size " +
                 std::to_string(vocab_size) +
                 " rows; ids past them would index outside the embedding (fewer extra_ids, or "
                 "the tokenizer the model was trained with)");
}

TokenizerFiles TokenizerFilesOf(const VocabularyConfig& v, const std::string& data_dir,
                                int64_t vocab_size) {
  TokenizerFiles out;
  nlohmann::ordered_json cfg;
  cfg["tokenizer_class"] = v.byte ? "ByT5Tokenizer" : "T5Tokenizer";
  cfg["extra_ids"] = v.extra_ids;
  cfg["eos_token"] = "</s>";
  cfg["unk_token"] = "<unk>";
  cfg["pad_token"] = "<pad>";
  if (!v.byte) {
    // seqio encodes with the model as it is (no special handling of text
    // after special tokens): Transformers' legacy behaviour.
    cfg["legacy"] = true;
    std::string path = v.sentencepiece_model_file;
    if (IsRemotePath(path)) {  // t5x's gins: gs://t5-data/vocabs/...
      std::optional<std::string> local;
      try {
        local = ReadableCopy(path, data_dir);
      } catch (const Error& e) {
        throw Error("cannot read the model's vocabulary (seqio.SentencePieceVocabulary."
                    "sentencepiece_model_file = '" + path + "'): " + e.what());
      }
      T5XX_CHECK(local.has_value(),
                 MissingRemoteCopyMessage(path, data_dir, "the model's vocabulary "
                                                          "(seqio.SentencePieceVocabulary.sentencepiece_model_file)"));
      path = *local;
    } else {
      T5XX_CHECK(path.find("://") == std::string::npos,
                 "the model's vocabulary is '" + path +
                     "': t5xx reads local paths, gs:// and s3://; copy it here and bind "
                     "seqio.SentencePieceVocabulary.sentencepiece_model_file to the copy");
    }
    if (!path.empty() && path[0] != '/') path = data_dir + "/" + path;
    T5XX_CHECK(fs::is_regular_file(path),
               "the model's vocabulary file '" + path +
                   "' (seqio.SentencePieceVocabulary.sentencepiece_model_file = '" +
                   v.sentencepiece_model_file + "'" +
                   (v.sentencepiece_model_file == path ? "" : ", under --data_dir") +
                   ") does not exist; bind the file the model was trained with");
    CheckVocabularyFits(v, path, vocab_size,
                        "the model's vocabulary (seqio.SentencePieceVocabulary."
                        "sentencepiece_model_file = '" + v.sentencepiece_model_file + "')");
    const std::vector<uint8_t> model =
        checkpoints::ReadFile(path, "the model's SentencePiece model");
    out.files.emplace_back("spiece.model", std::string(model.begin(), model.end()));
  } else {
    CheckVocabularyFits(v, "", vocab_size, "the model's seqio.ByteVocabulary");
  }
  out.files.emplace_back("tokenizer_config.json", cfg.dump(2) + "\n");
  nlohmann::ordered_json special = {{"eos_token", "</s>"}, {"unk_token", "<unk>"},
                                    {"pad_token", "<pad>"}};
  out.files.emplace_back("special_tokens_map.json", special.dump(2) + "\n");
  return out;
}

VocabularyConfig VocabularyOfTokenizerFiles(const std::string& hf_dir) {
  nlohmann::json cfg = nlohmann::json::object();
  const std::string cfg_path = hf_dir + "/tokenizer_config.json";
  if (fs::exists(cfg_path)) {
    try {
      cfg = nlohmann::json::parse(seqio::ReadFileToString(cfg_path, size_t{1} << 26));
    } catch (const nlohmann::json::exception& e) {
      throw Error(cfg_path + ": not JSON: " + e.what());
    }
    T5XX_CHECK(cfg.is_object(), cfg_path + ": not a JSON object");
  }
  const std::string cls =
      cfg.contains("tokenizer_class") && cfg["tokenizer_class"].is_string()
          ? cfg["tokenizer_class"].get<std::string>()
          : "";
  VocabularyConfig v;
  auto extra_ids = [&](int64_t fallback) {
    if (cfg.contains("extra_ids")) {
      T5XX_CHECK(cfg["extra_ids"].is_number_integer() && cfg["extra_ids"].get<int64_t>() >= 0 &&
                     cfg["extra_ids"].get<int64_t>() <= (int64_t{1} << 24),
                 cfg_path + ": extra_ids = " + cfg["extra_ids"].dump() +
                     " is not a count of sentinel ids");
      return cfg["extra_ids"].get<int64_t>();
    }
    return fallback;  // the tokenizer class's default
  };
  if (cls == "ByT5Tokenizer") {
    v.byte = true;
    v.extra_ids = extra_ids(125);
    return v;
  }
  const std::string spm = hf_dir + "/spiece.model";
  T5XX_CHECK(fs::is_regular_file(spm) && (cls.empty() || cls == "T5Tokenizer" ||
                                          cls == "T5TokenizerFast" || cls == "MT5Tokenizer" ||
                                          cls == "MT5TokenizerFast"),
             hf_dir + ": no tokenizer t5x can use: t5x's vocabularies are SentencePiece "
             "(spiece.model, tokenizer_class T5Tokenizer) or bytes (ByT5Tokenizer); found " +
                 (cls.empty() ? std::string("no tokenizer_class") : "tokenizer_class '" + cls + "'") +
                 (fs::is_regular_file(spm) ? "" : " and no spiece.model") +
                 (fs::exists(hf_dir + "/tokenizer.json") ? " (a tokenizer.json alone is not enough)"
                                                          : ""));
  v.sentencepiece_model_file = spm;
  v.extra_ids = extra_ids(100);
  return v;
}

}  // namespace t5xx::run
