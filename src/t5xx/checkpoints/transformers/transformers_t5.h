// Hugging Face Transformers' T5 (T5ForConditionalGeneration, also mT5 and
// ByT5) beside t5x's T5 network: the one table of parameter names, and the
// model's config.json. Framework-free: `t5xx export` / `t5xx import`
// (run/transformers/) move the arrays; docs/transformers_export.md and
// docs/transformers_import.md show the table to users.
//
// Source of the mapping: Transformers' modeling_t5.py (module names, a
// torch Linear's weight is [out, in]) and t5x/examples/t5/network.py
// (DenseGeneral kernels are [in, out] with the heads joined; rel_embedding
// is [heads, buckets]); checked by tests/interop/transformers_test.sh
// against Transformers itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// The structure that decides the names.
struct TransformersT5Layout {
  int64_t num_encoder_layers = 0;
  int64_t num_decoder_layers = 0;
  bool gated = false;  // two MLP input projections (wi_0, wi_1) or one (wi)
  bool tied = false;   // logits through the embedding: no lm_head / logits_dense
};

// One parameter: t5x's path under `target` (dotted, as in a t5x checkpoint)
// and Transformers' state-dict name. `transpose`: a 2-D array stored
// transposed on the other side (dense kernels, rel_embedding).
struct TransformersT5Name {
  std::string t5x;
  std::string hf;
  bool transpose = false;
};

// Every parameter of the layout, encoder first, in a fixed order.
// "shared.weight" is the token embedding; Transformers' copies of it
// (encoder.embed_tokens.weight, decoder.embed_tokens.weight) are not listed
// (save_pretrained drops them; TransformersT5TiedCopies names them).
std::vector<TransformersT5Name> TransformersT5Names(const TransformersT5Layout& layout);
// The state-dict names that are the embedding again when present (with
// `tied`, also lm_head.weight, which torch.save keeps beside shared.weight).
std::vector<std::string> TransformersT5TiedCopies(bool tied);

// A floating array's raw little-endian bytes of safetensors dtype `dtype`
// ("F32", "BF16", "F16", "F64") as float32; nullopt for another dtype
// (integers are not parameters).
std::optional<std::vector<float>> Float32FromBytes(const std::vector<uint8_t>& bytes,
                                                   const std::string& dtype);

// The transpose of a row-major [rows, cols] matrix ([cols, rows]).
std::vector<float> Transposed2D(const std::vector<float>& a, int64_t rows, int64_t cols);

// config.json's fields t5xx reads and writes (Transformers' T5Config).
struct TransformersT5Config {
  std::string model_type = "t5";  // "t5" or "mt5"
  int64_t vocab_size = 0;
  int64_t d_model = 0;
  int64_t d_kv = 0;
  int64_t d_ff = 0;
  int64_t num_heads = 0;
  int64_t num_layers = 0;          // encoder layers
  int64_t num_decoder_layers = 0;  // Transformers' default: num_layers
  int64_t relative_attention_num_buckets = 32;
  int64_t relative_attention_max_distance = 128;
  double dropout_rate = 0.1;
  // "relu", "gated-gelu", "gated-relu", "gelu_new", ...: [gated-]<activation>.
  std::string feed_forward_proj = "relu";
  bool tie_word_embeddings = true;
  int64_t decoder_start_token_id = 0;
  int64_t pad_token_id = 0;
  int64_t eos_token_id = 1;
};

// The shape Transformers gives parameter `n` under config `c` (t5x's is
// its transpose when n.transpose).
std::vector<int64_t> TransformersT5Shape(const TransformersT5Config& c,
                                         const TransformersT5Name& n);

// The layout a config.json describes: its layer counts, gated MLP from
// feed_forward_proj, tied from tie_word_embeddings. Throws as
// MlpActivationsFromFeedForwardProj.
TransformersT5Layout TransformersT5LayoutOf(const TransformersT5Config& c);

// Whether Float32FromBytes converts safetensors dtype `dtype` (F32, BF16,
// F16, F64: the floating point ones).
bool IsFloatDType(const std::string& dtype);

// t5x's mlp_activations for feed_forward_proj: "relu" -> ('relu',),
// "gated-gelu" -> ('gelu', 'linear'), "gated-relu" -> ('relu', 'linear'),
// "gelu_new" -> ('gelu',) (t5x's gelu is the tanh approximation, which is
// Transformers' gelu_new; its "gelu" is the exact one, which t5x has not).
// Throws t5xx::Error naming `where` and what is supported otherwise.
std::vector<std::string> MlpActivationsFromFeedForwardProj(const std::string& proj,
                                                           const std::string& where);
// The inverse; throws t5xx::Error naming the activations for one with no
// Transformers counterpart (e.g. ('gelu', 'gelu')).
std::string FeedForwardProjFromMlpActivations(const std::vector<std::string>& activations);

// config.json's text (2-space indented) for `c`: architectures
// ["T5ForConditionalGeneration"], is_encoder_decoder, layer_norm_epsilon
// 1e-6 (fixed in t5x's network), torch_dtype float32.
std::string TransformersT5ConfigJson(const TransformersT5Config& c);
// Reads config.json at `path`. Throws t5xx::Error naming the file and key
// for another architecture or model_type (what t5xx has: model_type 't5'
// and 'mt5', T5ForConditionalGeneration), a missing or non-integer size,
// a layer_norm_epsilon other than 1e-6, a feed_forward_proj t5x has not.
TransformersT5Config ReadTransformersT5Config(const std::string& path);

}  // namespace t5xx::checkpoints
