// See export.h.
#include "t5xx/run/transformers/export.h"

#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/checkpoints/transformers/safetensors.h"
#include "t5xx/checkpoints/transformers/transformers_t5.h"
#include "t5xx/run/configurables/gin_readers.h"
#include "t5xx/run/transformers/transformers_files.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::run {
namespace fs = std::filesystem;
namespace ck = checkpoints;

ModelConfig ReadModelMacro(gin::Config& config) {
  config.Finalize({}, /*require_overrides=*/false);
  const std::optional<gin::Value> dropout = config.MacroValue("DROPOUT_RATE");
  if (dropout && dropout->kind() == gin::Value::Kind::kRequired) {
    config.AddBinding("DROPOUT_RATE = 0.0", "<t5xx: the dropout of an exported model>");
    config.Finalize({}, /*require_overrides=*/false);
  }
  const std::optional<gin::Value> model = config.MacroValue("MODEL");
  T5XX_CHECK(model.has_value(),
             "no gin file defines MODEL: give the model's gin file, e.g. "
             "--gin_file=models/t5_1_1/base.gin (with the sizes and vocabulary the checkpoint "
             "was trained with)");
  std::string name, scope;
  return ReadModelValue(config, *model, &name, &scope);
}

namespace {

ck::TransformersT5Config HfConfigOf(const models::T5Config& t) {
  ck::TransformersT5Config h;
  h.model_type = "t5";
  h.vocab_size = t.vocab_size;
  h.d_model = t.emb_dim;
  h.d_kv = t.head_dim;
  h.d_ff = t.mlp_dim;
  h.num_heads = t.num_heads;
  h.num_layers = t.num_encoder_layers;
  h.num_decoder_layers = t.num_decoder_layers;
  h.relative_attention_num_buckets = t.relative_attention_num_buckets;
  h.relative_attention_max_distance = t.relative_attention_max_distance;
  h.dropout_rate = t.dropout_rate;
  h.feed_forward_proj = ck::FeedForwardProjFromMlpActivations(t.mlp_activations);
  h.tie_word_embeddings = t.logits_via_embedding;
  return h;
}

}  // namespace

TransformersExport ExportToTransformers(const ModelConfig& model, const std::string& checkpoint_dir,
                                        const std::string& output_dir,
                                        const std::string& data_dir) {
  T5XX_CHECK(model.kind == ModelKind::kEncoderDecoder,
             "t5xx export writes encoder-decoder T5 models (models.EncoderDecoderModel); "
             "Transformers' T5 has no decoder-only counterpart of t5x's DecoderOnlyModel");
  const models::T5Config& t = model.t5_config;
  T5XX_CHECK(!t.relpos_per_layer,
             "t5xx export writes Transformers' T5 (model_type 't5' / 'mt5'), whose encoder and "
             "decoder each share one relative position table; this model is t5x's scalable_t5 "
             "network (as umT5), with a table per layer (<stack>.layers_<i>.relpos_bias), which "
             "is Transformers' UMT5 (model_type 'umt5') -- not written by t5xx export yet. The "
             "way out: put the checkpoint in t5x's scanned layout (t5xx convert_checkpoint "
             "--scan_layers=true --checkpoint_path=... --output_dir=..., unless it was trained "
             "with scan_layers = True) and convert that with Transformers' own "
             "models/umt5/convert_umt5_checkpoint_to_pytorch.py --scalable_attention (it needs t5x "
             "and flax in its Python)");
  const ck::TransformersT5Config hf = HfConfigOf(t);
  const std::string out_dir = CheckOutputDir(output_dir, "--output_dir");
  const TokenizerFiles tokenizer = TokenizerFilesOf(model.output_vocabulary, data_dir, t.vocab_size);

  ck::CheckpointReader reader(checkpoint_dir);
  const std::vector<ck::TransformersT5Name> names =
      ck::TransformersT5Names(ck::TransformersT5LayoutOf(hf));
  // Every problem with the checkpoint's arrays at once.
  std::vector<std::string> problems;
  std::set<std::string> known;
  for (const ck::TransformersT5Name& n : names) {
    const std::string path = "target." + n.t5x;
    known.insert(path);
    auto it = reader.arrays().find(path);
    std::vector<int64_t> want = ck::TransformersT5Shape(hf, n);
    if (n.transpose) std::swap(want[0], want[1]);
    if (it == reader.arrays().end()) {
      problems.push_back("no array " + path + " (the gin files' model has it)");
    } else if (it->second.shape != want) {
      problems.push_back(path + " is " + ck::ShapeString(it->second.shape) + ", the model's is " +
                         ck::ShapeString(want));
    } else if (it->second.dtype != ck::DType::kFloat32 &&
               it->second.dtype != ck::DType::kBFloat16) {
      problems.push_back(path + " is " + ck::DTypeName(it->second.dtype) +
                         ", not float32 or bfloat16");
    }
  }
  for (const auto& [path, entry] : reader.arrays()) {
    if (path.rfind("target.", 0) == 0 && !known.count(path)) {
      problems.push_back(path + " is not a parameter of the gin files' model");
    }
  }
  if (!problems.empty()) {
    std::string msg = checkpoint_dir + " does not hold the parameters of the gin files' model (" +
                      std::to_string(t.num_encoder_layers) + "+" +
                      std::to_string(t.num_decoder_layers) + " layers, emb_dim " +
                      std::to_string(t.emb_dim) + "); give the model files it was trained with:";
    for (size_t i = 0; i < problems.size() && i < 20; ++i) msg += "\n  " + problems[i];
    if (problems.size() > 20) msg += "\n  ... and " + std::to_string(problems.size() - 20) + " more";
    throw Error(msg);
  }

  TransformersExport out;
  out.step = reader.step();
  std::vector<std::vector<float>> values;
  values.reserve(names.size());
  std::vector<ck::SafetensorsTensor> tensors;
  for (const ck::TransformersT5Name& n : names) {
    const ck::LoadedArray a = reader.Read("target." + n.t5x);
    std::vector<float> v =
        *ck::Float32FromBytes(a.bytes, a.dtype == ck::DType::kBFloat16 ? "BF16" : "F32");
    std::vector<int64_t> shape = a.shape;
    if (n.transpose) {
      v = ck::Transposed2D(v, shape[0], shape[1]);
      std::swap(shape[0], shape[1]);
    }
    out.parameters += static_cast<int64_t>(v.size());
    values.push_back(std::move(v));
    tensors.push_back({n.hf, "F32", shape, values.back().data()});
  }

  WriteOutputDir(out_dir, "--output_dir", [&](const std::string& tmp) {
    seqio::WriteStringToFileAtomic(tmp + "/config.json", ck::TransformersT5ConfigJson(hf));
    seqio::WriteStringToFileAtomic(tmp + "/generation_config.json",
                                   "{\n  \"decoder_start_token_id\": 0,\n  \"eos_token_id\": 1,\n"
                                   "  \"pad_token_id\": 0\n}\n");
    ck::WriteSafetensors(tmp + "/model.safetensors", tensors, {{"format", "pt"}});
    out.files = {"config.json", "generation_config.json", "model.safetensors"};
    for (const auto& [name, content] : tokenizer.files) {
      seqio::WriteStringToFileAtomic(tmp + "/" + name, content);
      out.files.push_back(name);
    }
  });
  return out;
}

}  // namespace t5xx::run
