#include "t5xx/models/t5_config.h"

#include "t5xx/util/error.h"

namespace t5xx::models {

namespace {
void Positive(int64_t v, const char* field) {
  Check(v > 0, std::string("network.T5Config.") + field +
                   " must be positive, got " + std::to_string(v));
}
}  // namespace

void T5Config::Validate() const {
  Positive(vocab_size, "vocab_size");
  Positive(emb_dim, "emb_dim");
  Positive(num_heads, "num_heads");
  Positive(num_encoder_layers, "num_encoder_layers");
  Positive(num_decoder_layers, "num_decoder_layers");
  Positive(head_dim, "head_dim");
  Positive(mlp_dim, "mlp_dim");
  Check(dtype == "float32" || dtype == "bfloat16",
        "network.T5Config.dtype = '" + dtype +
            "' is not supported: the activation dtype must be 'float32' or "
            "'bfloat16' (t5x's mixed precision; parameters stay float32); set "
            "network.T5Config.dtype = 'bfloat16' or 'float32'");
  Check(dropout_rate >= 0.0 && dropout_rate < 1.0,
        "network.T5Config.dropout_rate must be in [0, 1), got " +
            std::to_string(dropout_rate));
  Check(!mlp_activations.empty(),
        "network.T5Config.mlp_activations must name at least one activation");
  Check(remat_policy == "none" || remat_policy == "full",
        "network.T5Config.remat_policy = '" + remat_policy +
            "' is unknown; use 'none' or 'full' (recompute each layer in the backward pass)");
  for (const auto& a : mlp_activations) {
    Check(a == "gelu" || a == "relu" || a == "linear",
          "network.T5Config.mlp_activations: unknown activation '" + a +
              "' (known: 'gelu', 'relu', 'linear')");
  }
}

T5Config T5_1_1Config(const std::string& size) {
  T5Config c;
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
