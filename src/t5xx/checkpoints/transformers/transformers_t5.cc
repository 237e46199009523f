// See transformers_t5.h.
#include "t5xx/checkpoints/transformers/transformers_t5.h"

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace t5xx::checkpoints {
namespace {

// The attention projections: t5x's module names and Transformers'.
const std::vector<std::pair<const char*, const char*>> kAttentionProjections = {
    {"query", "q"}, {"key", "k"}, {"value", "v"}, {"out", "o"}};

void AddAttentionNames(std::vector<TransformersT5Name>& out, const std::string& t5x,
                       const std::string& hf) {
  for (const auto& [a, b] : kAttentionProjections) {
    out.push_back({t5x + "." + a + ".kernel", hf + "." + b + ".weight", true});
  }
}

void AddMlpNames(std::vector<TransformersT5Name>& out, const std::string& t5x,
                 const std::string& hf, bool gated) {
  for (const char* wi : gated ? std::vector<const char*>{"wi_0", "wi_1"}
                              : std::vector<const char*>{"wi"}) {
    out.push_back({t5x + "." + wi + ".kernel", hf + "." + wi + ".weight", true});
  }
  out.push_back({t5x + ".wo.kernel", hf + ".wo.weight", true});
}

}  // namespace

std::vector<TransformersT5Name> TransformersT5Names(const TransformersT5Layout& l) {
  std::vector<TransformersT5Name> out;
  out.push_back({"token_embedder.embedding", "shared.weight", false});
  out.push_back({"encoder.relpos_bias.rel_embedding",
                 "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", true});
  for (int64_t i = 0; i < l.num_encoder_layers; ++i) {
    const std::string t = "encoder.layers_" + std::to_string(i);
    const std::string h = "encoder.block." + std::to_string(i);
    out.push_back({t + ".pre_attention_layer_norm.scale", h + ".layer.0.layer_norm.weight"});
    AddAttentionNames(out, t + ".attention", h + ".layer.0.SelfAttention");
    out.push_back({t + ".pre_mlp_layer_norm.scale", h + ".layer.1.layer_norm.weight"});
    AddMlpNames(out, t + ".mlp", h + ".layer.1.DenseReluDense", l.gated);
  }
  out.push_back({"encoder.encoder_norm.scale", "encoder.final_layer_norm.weight"});
  out.push_back({"decoder.relpos_bias.rel_embedding",
                 "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", true});
  for (int64_t i = 0; i < l.num_decoder_layers; ++i) {
    const std::string t = "decoder.layers_" + std::to_string(i);
    const std::string h = "decoder.block." + std::to_string(i);
    out.push_back({t + ".pre_self_attention_layer_norm.scale", h + ".layer.0.layer_norm.weight"});
    AddAttentionNames(out, t + ".self_attention", h + ".layer.0.SelfAttention");
    out.push_back({t + ".pre_cross_attention_layer_norm.scale", h + ".layer.1.layer_norm.weight"});
    AddAttentionNames(out, t + ".encoder_decoder_attention", h + ".layer.1.EncDecAttention");
    out.push_back({t + ".pre_mlp_layer_norm.scale", h + ".layer.2.layer_norm.weight"});
    AddMlpNames(out, t + ".mlp", h + ".layer.2.DenseReluDense", l.gated);
  }
  out.push_back({"decoder.decoder_norm.scale", "decoder.final_layer_norm.weight"});
  if (!l.tied) out.push_back({"decoder.logits_dense.kernel", "lm_head.weight", true});
  return out;
}

std::vector<std::string> TransformersT5TiedCopies(bool tied) {
  std::vector<std::string> out = {"encoder.embed_tokens.weight", "decoder.embed_tokens.weight"};
  if (tied) out.push_back("lm_head.weight");
  return out;
}

std::optional<std::vector<float>> Float32FromBytes(const std::vector<uint8_t>& bytes,
                                                   const std::string& dtype) {
  if (!IsFloatDType(dtype)) return std::nullopt;
  std::vector<float> out;
  if (dtype == "F32") {
    out.resize(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
  } else if (dtype == "F64") {
    out.resize(bytes.size() / 8);
    for (size_t i = 0; i < out.size(); ++i) {
      double d;
      std::memcpy(&d, bytes.data() + 8 * i, 8);
      out[i] = static_cast<float>(d);
    }
  } else if (dtype == "BF16" || dtype == "F16") {
    out.resize(bytes.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) {
      const uint32_t h = bytes[2 * i] | (uint32_t{bytes[2 * i + 1]} << 8);
      uint32_t bits;
      if (dtype == "BF16") {
        bits = h << 16;
      } else {  // IEEE half: sign, 5-bit exponent, 10-bit mantissa
        const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
        if (exp == 0x1f) {
          bits = sign | 0x7f800000u | (man << 13);
        } else if (exp != 0) {
          bits = sign | ((exp + 112) << 23) | (man << 13);
        } else {  // zero or subnormal: man * 2^-24
          const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
          std::memcpy(&bits, &v, 4);
          bits |= sign;
        }
      }
      std::memcpy(&out[i], &bits, 4);
    }
  } else {
    return std::nullopt;
  }
  return out;
}

std::vector<int64_t> TransformersT5Shape(const TransformersT5Config& c, const TransformersT5Name& n) {
  const int64_t qkv = c.num_heads * c.d_kv;
  const std::string& h = n.hf;
  auto ends = [&](const std::string& s) {
    return h.size() >= s.size() && h.compare(h.size() - s.size(), s.size(), s) == 0;
  };
  if (h == "shared.weight" || h == "lm_head.weight") return {c.vocab_size, c.d_model};
  if (ends("relative_attention_bias.weight")) return {c.relative_attention_num_buckets, c.num_heads};
  if (ends("layer_norm.weight")) return {c.d_model};
  if (ends(".o.weight")) return {c.d_model, qkv};
  if (ends(".q.weight") || ends(".k.weight") || ends(".v.weight")) return {qkv, c.d_model};
  if (ends(".wo.weight")) return {c.d_model, c.d_ff};
  return {c.d_ff, c.d_model};  // wi, wi_0, wi_1
}

TransformersT5Layout TransformersT5LayoutOf(const TransformersT5Config& c) {
  return {c.num_layers, c.num_decoder_layers,
          MlpActivationsFromFeedForwardProj(c.feed_forward_proj, "feed_forward_proj").size() == 2,
          c.tie_word_embeddings};
}

bool IsFloatDType(const std::string& dtype) {
  return dtype == "F32" || dtype == "BF16" || dtype == "F16" || dtype == "F64";
}

std::vector<float> Transposed2D(const std::vector<float>& a, int64_t rows, int64_t cols) {
  std::vector<float> out(a.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) out[j * rows + i] = a[i * cols + j];
  }
  return out;
}

std::vector<std::string> MlpActivationsFromFeedForwardProj(const std::string& proj,
                                                           const std::string& where) {
  const bool gated = proj.rfind("gated-", 0) == 0;
  const std::string act = gated ? proj.substr(6) : proj;
  std::string t5x_act;
  if (act == "relu") t5x_act = "relu";
  // Transformers maps "gated-gelu" to gelu_new (the tanh approximation).
  if (act == "gelu_new" || (gated && act == "gelu")) t5x_act = "gelu";
  T5XX_CHECK(!t5x_act.empty(),
             where + ": feed_forward_proj '" + proj +
                 "' has no t5x counterpart; t5xx has 'relu', 'gated-relu', 'gated-gelu' and "
                 "'gelu_new' (t5x's GELU is the tanh approximation, Transformers' gelu_new; its "
                 "exact 'gelu' and other activations are not in t5x's network)");
  if (gated) return {t5x_act, "linear"};
  return {t5x_act};
}

std::string FeedForwardProjFromMlpActivations(const std::vector<std::string>& a) {
  const bool gated = a.size() == 2 && a[1] == "linear";
  const bool ok = (a.size() == 1 || gated) && (a[0] == "relu" || a[0] == "gelu");
  std::string listed;
  for (const auto& s : a) listed += (listed.empty() ? "'" : ", '") + s + "'";
  T5XX_CHECK(ok, "mlp_activations (" + listed +
                     ") have no Transformers T5 counterpart: it has one activation ('relu' or "
                     "'gelu') or one and 'linear' (a gated MLP)");
  if (gated) return a[0] == "gelu" ? "gated-gelu" : "gated-relu";
  return a[0] == "gelu" ? "gelu_new" : "relu";
}

std::string TransformersT5ConfigJson(const TransformersT5Config& c) {
  nlohmann::ordered_json j;
  j["architectures"] = {c.model_type == "mt5" ? "MT5ForConditionalGeneration"
                                              : "T5ForConditionalGeneration"};
  j["model_type"] = c.model_type;
  j["vocab_size"] = c.vocab_size;
  j["d_model"] = c.d_model;
  j["d_kv"] = c.d_kv;
  j["d_ff"] = c.d_ff;
  j["num_heads"] = c.num_heads;
  j["num_layers"] = c.num_layers;
  j["num_decoder_layers"] = c.num_decoder_layers;
  j["relative_attention_num_buckets"] = c.relative_attention_num_buckets;
  j["relative_attention_max_distance"] = c.relative_attention_max_distance;
  j["dropout_rate"] = c.dropout_rate;
  j["layer_norm_epsilon"] = 1e-6;
  j["feed_forward_proj"] = c.feed_forward_proj;
  // What Transformers' T5Config derives from it (save_pretrained writes both).
  const auto acts = MlpActivationsFromFeedForwardProj(c.feed_forward_proj, "feed_forward_proj");
  j["dense_act_fn"] = acts[0] == "gelu" ? "gelu_new" : "relu";
  j["is_gated_act"] = acts.size() == 2;
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["is_encoder_decoder"] = true;
  j["decoder_start_token_id"] = c.decoder_start_token_id;
  j["pad_token_id"] = c.pad_token_id;
  j["eos_token_id"] = c.eos_token_id;
  j["initializer_factor"] = 1.0;
  j["use_cache"] = true;
  j["torch_dtype"] = "float32";
  return j.dump(2) + "\n";
}

TransformersT5Config ReadTransformersT5Config(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(seqio::ReadFileToString(path, size_t{1} << 24));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not JSON: " + e.what());
  }
  T5XX_CHECK(j.is_object(), path + ": not a JSON object (a Transformers config.json)");
  std::vector<std::string> errors;
  // A string field's value; its JSON text when it is not a string.
  auto text = [&](const char* key, const std::string& fallback) {
    if (!j.contains(key)) return fallback;
    return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
  };
  const std::string type = text("model_type", "");
  if (type != "t5" && type != "mt5") {
    errors.push_back("model_type " + (j.contains("model_type") && j["model_type"].is_string()
                                           ? "'" + type + "'"
                                           : type.empty() ? std::string("(missing)") : type) +
                     " is not one t5xx has: 't5' (T5.1.0, T5.1.1, ByT5) or 'mt5'" +
                     (type == "umt5" ? " (umT5's per-layer position biases are not imported yet)"
                                     : ""));
  }
  if (j.contains("architectures")) {
    bool ok = j["architectures"].is_array() && !j["architectures"].empty();
    for (const auto& a : j["architectures"]) {
      ok = ok && a.is_string() &&
           (a == "T5ForConditionalGeneration" || a == "MT5ForConditionalGeneration");
    }
    if (!ok) {
      errors.push_back("architectures " + j["architectures"].dump() +
                       ": t5xx imports T5ForConditionalGeneration / "
                       "MT5ForConditionalGeneration (an encoder-decoder with its LM head)");
    }
  }
  if (!errors.empty()) {  // another model: its sizes would only add noise
    std::string msg = path + ": not a Transformers T5 config t5xx can import:";
    for (const auto& e : errors) msg += "\n  " + e;
    throw Error(msg);
  }
  TransformersT5Config c;
  c.model_type = type;
  auto size = [&](const char* key, int64_t* out, bool required, int64_t minimum) {
    if (!j.contains(key)) {
      if (required) errors.push_back(std::string(key) + " is missing");
      return;
    }
    if (!j[key].is_number_integer() || j[key].get<int64_t>() < minimum ||
        j[key].get<int64_t>() > (int64_t{1} << 31)) {
      errors.push_back(std::string(key) + " = " + j[key].dump() + " is not an integer >= " +
                       std::to_string(minimum));
      return;
    }
    *out = j[key].get<int64_t>();
  };
  size("vocab_size", &c.vocab_size, true, 1);
  size("d_model", &c.d_model, true, 1);
  size("d_kv", &c.d_kv, true, 1);
  size("d_ff", &c.d_ff, true, 1);
  size("num_heads", &c.num_heads, true, 1);
  size("num_layers", &c.num_layers, true, 1);
  c.num_decoder_layers = c.num_layers;
  size("num_decoder_layers", &c.num_decoder_layers, false, 1);
  size("relative_attention_num_buckets", &c.relative_attention_num_buckets, false, 1);
  size("relative_attention_max_distance", &c.relative_attention_max_distance, false, 1);
  size("decoder_start_token_id", &c.decoder_start_token_id, false, 0);
  size("pad_token_id", &c.pad_token_id, false, 0);
  size("eos_token_id", &c.eos_token_id, false, 0);
  if (c.decoder_start_token_id != 0 || c.pad_token_id != 0 || c.eos_token_id != 1) {
    errors.push_back("decoder_start_token_id " + std::to_string(c.decoder_start_token_id) +
                     ", pad_token_id " + std::to_string(c.pad_token_id) + ", eos_token_id " +
                     std::to_string(c.eos_token_id) +
                     ": t5x's models start decoding with 0, pad with 0 and end with 1");
  }
  if (j.contains("layer_norm_epsilon") &&
      (!j["layer_norm_epsilon"].is_number() ||
       std::abs(j["layer_norm_epsilon"].get<double>() - 1e-6) > 1e-12)) {
    errors.push_back("layer_norm_epsilon = " + j["layer_norm_epsilon"].dump() +
                     ": t5x's network uses 1e-6");
  }
  if (j.contains("is_encoder_decoder") && j["is_encoder_decoder"] != true) {
    errors.push_back("is_encoder_decoder is not true: t5xx imports encoder-decoder T5 models");
  }
  if (j.contains("dropout_rate") && j["dropout_rate"].is_number()) {
    c.dropout_rate = j["dropout_rate"].get<double>();
  }
  if (j.contains("tie_word_embeddings")) {
    if (j["tie_word_embeddings"].is_boolean()) {
      c.tie_word_embeddings = j["tie_word_embeddings"].get<bool>();
    } else {
      errors.push_back("tie_word_embeddings is not true or false");
    }
  } else {
    c.tie_word_embeddings = type != "mt5";  // Transformers' defaults
  }
  c.feed_forward_proj = text("feed_forward_proj", type == "mt5" ? "gated-gelu" : "relu");
  try {
    const auto acts = MlpActivationsFromFeedForwardProj(c.feed_forward_proj, "feed_forward_proj");
    // Transformers' T5Config derives dense_act_fn and is_gated_act from
    // feed_forward_proj, but values stored in config.json win: they must
    // agree with it.
    const std::string act = acts[0] == "gelu" ? "gelu_new" : "relu";
    if (j.contains("dense_act_fn") &&
        !(j["dense_act_fn"] == act || (act == "gelu_new" && j["dense_act_fn"] == "gelu_pytorch_tanh"))) {
      errors.push_back("dense_act_fn = " + j["dense_act_fn"].dump() + " disagrees with feed_forward_proj '" +
                       c.feed_forward_proj + "' (which makes it \"" + act +
                       "\"); Transformers uses dense_act_fn, which t5x's network does not have");
    }
    if (j.contains("is_gated_act") && j["is_gated_act"] != (acts.size() == 2)) {
      errors.push_back("is_gated_act = " + j["is_gated_act"].dump() +
                       " disagrees with feed_forward_proj '" + c.feed_forward_proj + "'");
    }
  } catch (const Error& e) {
    errors.push_back(e.what());
  }
  if (!errors.empty()) {
    std::string msg = path + ": not a Transformers T5 config t5xx can import:";
    for (const auto& e : errors) msg += "\n  " + e;
    throw Error(msg);
  }
  return c;
}

}  // namespace t5xx::checkpoints
