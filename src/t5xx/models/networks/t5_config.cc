// T5Config -- the implementation of t5_config.h.
#include "t5xx/models/networks/t5_config.h"

#include "t5xx/util/error.h"

namespace t5xx::models {

void ValidateNetworkFields(const std::string& gin_name,
                           const std::vector<std::pair<const char*, int64_t>>& positive,
                           const std::string& dtype, double dropout_rate,
                           const std::vector<std::string>& mlp_activations,
                           const std::string& remat_policy, const FieldLocator& where) {
  auto at = [&where](const char* field) { return where ? where(field) + ": " : std::string(); };
  for (const auto& [field, v] : positive) {
    T5XX_CHECK(v > 0, at(field) + gin_name + "." + field + " must be positive, got " +
                          std::to_string(v));
    // Token ids are int32, and a dimension past 2^24 makes tensor sizes
    // (products of two or three dimensions) overflow before any memory
    // check can refuse them; no model is within orders of magnitude of it.
    const int64_t limit = std::string(field) == "vocab_size" ? int64_t{2147483647}
                                                             : int64_t{1} << 24;
    T5XX_CHECK(v <= limit, at(field) + gin_name + "." + field + " = " + std::to_string(v) +
                               " is too large (at most " + std::to_string(limit) + ")");
  }
  T5XX_CHECK(dtype == "float32" || dtype == "bfloat16",
        at("dtype") + gin_name + ".dtype = '" + dtype +
            "' is not supported: the activation dtype must be 'float32' or 'bfloat16' (t5x's "
            "mixed precision; parameters stay float32); set " + gin_name +
            ".dtype = 'bfloat16' or 'float32'");
  T5XX_CHECK(dropout_rate >= 0.0 && dropout_rate < 1.0,
        at("dropout_rate") + gin_name + ".dropout_rate must be in [0, 1), got " + std::to_string(dropout_rate));
  T5XX_CHECK(!mlp_activations.empty(),
        at("mlp_activations") + gin_name + ".mlp_activations must name at least one activation");
  T5XX_CHECK(remat_policy == "none" || remat_policy == "minimal" || remat_policy == "full",
        at("remat_policy") + gin_name + ".remat_policy = '" + remat_policy +
            "' is not one of t5x's remat policies; use 'none', 'minimal' (keep the weight "
            "matmuls' outputs, recompute the rest) or 'full' (recompute each layer in the "
            "backward pass)");
  for (const auto& a : mlp_activations) {
    T5XX_CHECK(a == "gelu" || a == "relu" || a == "linear",
          at("mlp_activations") + gin_name + ".mlp_activations: unknown activation '" + a +
              "' (known: 'gelu', 'relu', 'linear')");
  }
}

void T5Config::Validate(const FieldLocator& where) const {
  ValidateNetworkFields("network.T5Config",
                        {{"vocab_size", vocab_size},
                         {"emb_dim", emb_dim},
                         {"num_heads", num_heads},
                         {"num_encoder_layers", num_encoder_layers},
                         {"num_decoder_layers", num_decoder_layers},
                         {"head_dim", head_dim},
                         {"mlp_dim", mlp_dim}},
                        dtype, dropout_rate, mlp_activations, remat_policy, where);
  // (No gin field of T5Config: network.Transformer.prompt sets these.)
  const std::string at = "the prompt (network.Transformer.prompt): ";
  T5XX_CHECK(prompt_length >= 0, at + "the prompt length is " + std::to_string(prompt_length) +
                                     "; it must be at least 1 (or 0: no prompt)");
  T5XX_CHECK(prompt_init_values.empty() ||
                 static_cast<int64_t>(prompt_init_values.size()) == prompt_length * emb_dim,
             at + "the prompt's initial value has " + std::to_string(prompt_init_values.size()) +
                 " numbers, not prompt_length x emb_dim = " + std::to_string(prompt_length) +
                 " x " + std::to_string(emb_dim));
}

T5Config T5_1_1Config(const std::string& size) {
  T5Config c;
  // T5.1.1's gated GELU; t5x's T5.1.1 gin files leave DROPOUT_RATE to the
  // run (%gin.REQUIRED), so the preset takes 0 as pretraining does.
  c.mlp_activations = {"gelu", "linear"};
  c.dropout_rate = 0.0;
  auto set = [&c](int64_t emb, int64_t heads, int64_t layers, int64_t mlp) {
    c.emb_dim = emb;
    c.num_heads = heads;
    c.num_encoder_layers = layers;
    c.num_decoder_layers = layers;
    c.head_dim = 64;
    c.mlp_dim = mlp;
  };
  if (size == "tiny") {
    set(128, 4, 2, 256);
    c.head_dim = 32;
  } else if (size == "small") {
    set(512, 6, 8, 1024);
  } else if (size == "base") {
    set(768, 12, 12, 2048);
  } else if (size == "large") {
    set(1024, 16, 24, 2816);
  } else if (size == "xl") {
    set(2048, 32, 24, 5120);
  } else if (size == "xxl") {
    set(4096, 64, 24, 10240);
  } else {
    throw Error("unknown T5.1.1 size '" + size +
                "' (known: tiny, small, base, large, xl, xxl)");
  }
  return c;
}

}  // namespace t5xx::models
