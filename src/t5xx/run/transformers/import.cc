// See import.h.
#include "t5xx/run/transformers/import.h"

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/checkpoints/file_io.h"
#include "t5xx/checkpoints/transformers/safetensors.h"
#include "t5xx/checkpoints/transformers/transformers_t5.h"
#include "t5xx/run/transformers/pytorch_state_dict.h"
#include "t5xx/run/transformers/transformers_files.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::run {
namespace fs = std::filesystem;
namespace ck = checkpoints;
namespace {

struct HfTensorInfo {
  std::string dtype;  // safetensors' spelling
  std::vector<int64_t> shape;
  std::string file;
};

// The weights of a save_pretrained directory, whichever files hold them.
class HfWeights {
 public:
  explicit HfWeights(const std::string& dir) {
    const std::vector<std::string> names = {"model.safetensors", "model.safetensors.index.json",
                                            "pytorch_model.bin", "pytorch_model.bin.index.json"};
    for (const std::string& n : names) {
      if (!fs::is_regular_file(dir + "/" + n)) continue;
      description_ = n;
      const bool indexed = n.find(".index.json") != std::string::npos;
      std::map<std::string, std::string> weight_map;
      for (const std::string& f : indexed ? IndexedFiles(dir, n, &weight_map)
                                          : std::vector<std::string>{n}) {
        T5XX_CHECK(fs::is_regular_file(dir + "/" + f),
                   dir + "/" + n + ": weight_map names " + f + ", which is not a file there");
        Open(dir + "/" + f, f);
      }
      if (indexed) CheckWeightMap(dir + "/" + n, weight_map);
      return;
    }
    throw Error(dir + ": no weights: expected one of model.safetensors, "
                "model.safetensors.index.json, pytorch_model.bin, pytorch_model.bin.index.json "
                "(what save_pretrained writes)");
  }
  const std::string& description() const { return description_; }
  const std::map<std::string, HfTensorInfo>& tensors() const { return info_; }

  std::vector<float> Read(const std::string& name) const {
    const HfTensorInfo& i = info_.at(name);
    if (auto t = torch_.find(name); t != torch_.end()) {
      const at::Tensor f = t->second.to(at::kFloat).contiguous();
      return std::vector<float>(f.data_ptr<float>(), f.data_ptr<float>() + f.numel());
    }
    const ck::SafetensorsReader& r = *readers_.at(reader_of_.at(name));
    return *ck::Float32FromBytes(r.Read(name), i.dtype);
  }

 private:
  // The shard files an index's weight_map names, each once, in order.
  // Every tensor where the index says, and the index naming every tensor.
  void CheckWeightMap(const std::string& index, const std::map<std::string, std::string>& map) const {
    for (const auto& [name, file] : map) {
      auto it = info_.find(name);
      T5XX_CHECK(it != info_.end() && it->second.file == file,
                 index + ": weight_map puts '" + name + "' in " + file + (it == info_.end()
                     ? ", which does not hold it" : ", but it is in " + it->second.file));
    }
    for (const auto& [name, info] : info_) {
      T5XX_CHECK(map.count(name), index + ": " + info.file + " holds '" + name +
                                      "', which weight_map does not name");
    }
  }

  static std::vector<std::string> IndexedFiles(const std::string& dir, const std::string& index,
                                               std::map<std::string, std::string>* weight_map) {
    const std::string path = dir + "/" + index;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(seqio::ReadFileToString(path, size_t{1} << 28));
    } catch (const nlohmann::json::exception& e) {
      throw Error(path + ": not JSON: " + e.what());
    }
    T5XX_CHECK(j.is_object() && j.contains("weight_map") && j["weight_map"].is_object(),
               path + ": no \"weight_map\" object");
    std::vector<std::string> files;
    for (const auto& [name, file] : j["weight_map"].items()) {
      T5XX_CHECK(file.is_string() && !file.get<std::string>().empty() &&
                     file.get<std::string>().find('/') == std::string::npos &&
                     file.get<std::string>() != "..",
                 path + ": weight_map['" + name + "'] = " + file.dump() +
                     " is not a file name in the directory");
      (*weight_map)[name] = file.get<std::string>();
      if (std::find(files.begin(), files.end(), file.get<std::string>()) == files.end()) {
        files.push_back(file.get<std::string>());
      }
    }
    return files;
  }

  void Open(const std::string& path, const std::string& file) {
    auto add = [&](const std::string& name, HfTensorInfo info) {
      auto [it, fresh] = info_.emplace(name, std::move(info));
      T5XX_CHECK(fresh, path + ": tensor '" + name + "' is also in " + it->second.file);
    };
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".bin") == 0) {
      for (auto& [name, t] : ReadPytorchStateDict(path)) {
        const auto s = t.scalar_type();
        const std::string dtype = s == at::kFloat     ? "F32"
                                  : s == at::kHalf    ? "F16"
                                  : s == at::kBFloat16 ? "BF16"
                                  : s == at::kDouble  ? "F64"
                                                      : std::string(c10::toString(s));
        add(name, {dtype, t.sizes().vec(), file});
        torch_[name] = t;
      }
      return;
    }
    readers_.push_back(std::make_unique<ck::SafetensorsReader>(path));
    for (const auto& [name, e] : readers_.back()->tensors()) {
      add(name, {e.dtype, e.shape, file});
      reader_of_[name] = readers_.size() - 1;
    }
  }

  std::string description_;
  std::map<std::string, HfTensorInfo> info_;
  std::vector<std::unique_ptr<ck::SafetensorsReader>> readers_;
  std::map<std::string, size_t> reader_of_;
  std::map<std::string, at::Tensor> torch_;
};

std::string ShapeText(const std::vector<int64_t>& s) { return ck::ShapeString(s); }

std::string ModelGin(const ck::TransformersT5Config& c, const VocabularyConfig& v,
                     const std::string& hf_dir, const std::string& out_dir) {
  const std::vector<std::string> acts =
      ck::MlpActivationsFromFeedForwardProj(c.feed_forward_proj, "feed_forward_proj");
  std::ostringstream g;
  g << "# Written by `t5xx import` from " << hf_dir << "\n# (Transformers model_type '"
    << c.model_type << "', feed_forward_proj '" << c.feed_forward_proj
    << "'). The model file of t5xx's runs, e.g.\n#   t5xx infer --gin_file=" << out_dir
    << "/model.gin --gin_file=runs/infer.gin \\\n#     --gin.CHECKPOINT_PATH=\"'" << out_dir
    << "/checkpoint_0'\" ...\n"
    << "# To finetune, restore it with utils.RestoreCheckpointConfig.strict = False (the\n"
    << "# checkpoint has no optimizer state).\n"
    << "from __gin__ import dynamic_registration\n\nimport seqio\n"
    << "from t5x.examples.t5 import network\n\n";
  if (v.byte) {
    g << "include 'models/byt5/base.gin'\n\nseqio.ByteVocabulary.extra_ids = " << v.extra_ids
      << "\n";
  } else {
    g << "include 'models/t5_1_1/base.gin'\n\n"
      << "seqio.SentencePieceVocabulary.sentencepiece_model_file = '" << out_dir
      << "/spiece.model'\nseqio.SentencePieceVocabulary.extra_ids = " << v.extra_ids << "\n";
  }
  g << "\nnetwork.T5Config:\n  vocab_size = " << c.vocab_size << "\n  emb_dim = " << c.d_model
    << "\n  num_heads = " << c.num_heads << "\n  num_encoder_layers = " << c.num_layers
    << "\n  num_decoder_layers = " << c.num_decoder_layers << "\n  head_dim = " << c.d_kv
    << "\n  mlp_dim = " << c.d_ff << "\n  mlp_activations = (";
  for (size_t i = 0; i < acts.size(); ++i) g << (i ? ", " : "") << "'" << acts[i] << "'";
  g << (acts.size() == 1 ? ",)" : ")") << "\n  logits_via_embedding = "
    << (c.tie_word_embeddings ? "True" : "False") << "\n";
  return g.str();
}

// Every problem of the weights against the table at once.
void CheckWeights(const std::string& hf_dir, const HfWeights& w, const ck::TransformersT5Config& c,
                  const std::vector<ck::TransformersT5Name>& names) {
  std::vector<std::string> problems;
  std::set<std::string> known;
  for (const ck::TransformersT5Name& n : names) {
    known.insert(n.hf);
    const std::vector<int64_t> want = ck::TransformersT5Shape(c, n);
    auto it = w.tensors().find(n.hf);
    if (it == w.tensors().end()) {
      problems.push_back("no tensor " + n.hf);
    } else if (it->second.shape != want) {
      problems.push_back(n.hf + " is " + ShapeText(it->second.shape) +
                         "; config.json's sizes make it " + ShapeText(want));
    } else if (!ck::IsFloatDType(it->second.dtype)) {
      problems.push_back(n.hf + " has dtype " + it->second.dtype +
                         " (floating point F32, F16, BF16 or F64 is supported)");
    }
  }
  for (const std::string& copy : ck::TransformersT5TiedCopies(c.tie_word_embeddings)) {
    auto it = w.tensors().find(copy);
    known.insert(copy);
    if (it != w.tensors().end() && it->second.shape != std::vector<int64_t>{c.vocab_size, c.d_model}) {
      problems.push_back(copy + " is " + ShapeText(it->second.shape) + ", not shared.weight's");
    }
  }
  for (const auto& [name, info] : w.tensors()) {
    if (!known.count(name)) {
      problems.push_back(name + " (in " + info.file + ") is not a parameter of a T5 model with "
                         "this config.json");
    }
  }
  if (problems.empty()) return;
  std::string msg = hf_dir + "/" + w.description() + ": the weights do not fit config.json (" +
                    std::to_string(problems.size()) +
                    (problems.size() == 1 ? " problem):" : " problems):");
  for (size_t i = 0; i < problems.size() && i < 20; ++i) msg += "\n  " + problems[i];
  if (problems.size() > 20) msg += "\n  ...";
  throw Error(msg);
}

}  // namespace

TransformersImport ImportFromTransformers(const std::string& hf_dir,
                                          const std::string& output_dir) {
  const std::string out_dir = CheckOutputDir(output_dir, "--output_dir");
  T5XX_CHECK(fs::is_directory(hf_dir), "--hf_model_dir=" + hf_dir + " is not a directory");
  const std::string config_path = hf_dir + "/config.json";
  T5XX_CHECK(fs::is_regular_file(config_path),
             hf_dir + ": no config.json (give a directory save_pretrained wrote)");
  const ck::TransformersT5Config c = ck::ReadTransformersT5Config(config_path);
  T5XX_CHECK(c.relative_attention_num_buckets == 32 && c.relative_attention_max_distance == 128,
             config_path + ": relative_attention_num_buckets = " +
                 std::to_string(c.relative_attention_num_buckets) +
                 ", relative_attention_max_distance = " +
                 std::to_string(c.relative_attention_max_distance) +
                 ": t5x's network fixes them at 32 and 128");
  const VocabularyConfig vocab = VocabularyOfTokenizerFiles(hf_dir);
  CheckVocabularyFits(vocab, vocab.sentencepiece_model_file, c.vocab_size,
                      hf_dir + ": the tokenizer (" +
                          (vocab.byte ? std::string("ByT5Tokenizer") : "spiece.model") +
                          ", tokenizer_config.json's extra_ids = " + std::to_string(vocab.extra_ids) +
                          ") does not fit config.json's vocab_size");
  const HfWeights weights(hf_dir);
  const std::vector<ck::TransformersT5Name> names =
      ck::TransformersT5Names(ck::TransformersT5LayoutOf(c));
  CheckWeights(hf_dir, weights, c, names);

  TransformersImport out;
  out.weights = weights.description();
  std::vector<std::vector<float>> values;
  values.reserve(names.size());
  std::vector<ck::ArrayRef> arrays;
  for (const ck::TransformersT5Name& n : names) {
    std::vector<float> v = weights.Read(n.hf);
    std::vector<int64_t> shape = weights.tensors().at(n.hf).shape;
    if (n.transpose) {
      v = ck::Transposed2D(v, shape[0], shape[1]);
      std::swap(shape[0], shape[1]);
    }
    out.parameters += static_cast<int64_t>(v.size());
    values.push_back(std::move(v));
    ck::ArrayRef ref;
    ref.path = "target." + n.t5x;
    ref.dtype = ck::DType::kFloat32;
    ref.shape = shape;
    ref.data = values.back().data();
    arrays.push_back(std::move(ref));
  }
  for (const std::string& copy : ck::TransformersT5TiedCopies(c.tie_word_embeddings)) {
    if (!weights.tensors().count(copy)) continue;
    T5XX_CHECK(weights.Read(copy) == values.front(),
               hf_dir + "/" + weights.description() + ": " + copy +
                   " differs from shared.weight" +
                   (copy == "lm_head.weight"
                        ? ": config.json's tie_word_embeddings is true (Transformers' default "
                          "for model_type 't5' when it is absent); set it to false if the "
                          "model has its own lm_head"
                        : "; Transformers' T5 uses shared.weight for both"));
  }

  WriteOutputDir(out_dir, "--output_dir", [&](const std::string& tmp) {
    ck::SaveCheckpoint(tmp, 0, arrays);
    if (!vocab.byte) fs::copy_file(vocab.sentencepiece_model_file, tmp + "/spiece.model");
    seqio::WriteStringToFileAtomic(tmp + "/model.gin", ModelGin(c, vocab, hf_dir, out_dir));
  });
  out.checkpoint_dir = out_dir + "/checkpoint_0";
  out.gin_file = out_dir + "/model.gin";
  return out;
}

}  // namespace t5xx::run
