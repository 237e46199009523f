// T5Config: the hyper-parameters of t5x's minimal T5 network
// (t5x/examples/t5/network.py, gin name t5x.examples.t5.network.T5Config).
#pragma once

#include <functional>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace t5xx::models {

// Where a network config field is set (e.g. the gin file:line binding it),
// for error messages; see ValidateNetworkFields.
using FieldLocator = std::function<std::string(const char* field)>;

// Defaults are t5x's T5Config defaults (network.py); gin is the source of
// truth for a run (run/configurables/gin_model.cc registers the same defaults), and
// T5_1_1Config gives T5.1.1's sizes with its gated GELU.
struct T5Config {
  int64_t vocab_size = 32128;  // rows of token_embedder / cols of logits_dense
  // Activation dtype, t5x's mixed precision: 'float32' or 'bfloat16'.
  // Parameters (and the optimizer state) stay float32 either way; with
  // 'bfloat16' embeddings, norms' outputs, projections, MLPs, attention and
  // dropout compute in bfloat16 (layers.h), the logits in float32.
  std::string dtype = "float32";
  int64_t emb_dim = 512;
  int64_t num_heads = 8;
  int64_t num_encoder_layers = 6;
  int64_t num_decoder_layers = 6;
  int64_t head_dim = 64;
  int64_t mlp_dim = 2048;
  // ('gelu', 'linear') = T5.1.1's gated GELU; ('relu',) = T5.1.0's ReLU MLP.
  std::vector<std::string> mlp_activations = {"relu"};
  double dropout_rate = 0.1;
  bool logits_via_embedding = false;
  // t5x's float32_attention_logits: compute the attention logits q.k^T, the
  // bias and the softmax in float32 even when dtype is 'bfloat16' (no effect
  // in float32).
  bool float32_attention_logits = false;
  // t5x's scalable_t5 network (t5x/examples/scalable_t5/network.py, umT5's):
  // every layer has its own relative position table,
  // <stack>.layers_<i>.relpos_bias.rel_embedding [heads, buckets], instead
  // of one per stack (<stack>.relpos_bias.rel_embedding). Set by the gin
  // configurable t5x.examples.scalable_t5.network.T5Config.
  bool relpos_per_layer = false;
  // scalable_t5's scan_layers / param_scan_axis: the network still runs one
  // layer at a time on per-layer parameters; these say that t5x keeps each
  // stack's parameters (and optimizer slots) stacked along a 'layers' axis
  // at param_scan_axis (checkpoints/t5x/scanned_layers.h), which checkpoints and
  // Adafactor's factoring follow (optim::ScannedLayers).
  bool scan_layers = false;
  int param_scan_axis = 1;
  // Relative position bias (fixed in t5x's network, exposed for tests).
  int64_t relative_attention_num_buckets = 32;
  int64_t relative_attention_max_distance = 128;
  // t5xx only (t5x's minimal network has no remat; flaxformer and MaxText call
  // it remat_policy, with t5x's scalable_t5 policy names): 'none' keeps every
  // activation; 'minimal' keeps each layer's input and its weight matmuls'
  // outputs and recomputes the rest (checkpoint_dots_with_no_batch_dims);
  // 'full' keeps only each layer's inputs and recomputes the layer in the
  // backward pass (remat.h).
  std::string remat_policy = "none";

  // Prompt tuning (google-research/prompt-tuning's prompts.Prompt with
  // train_prompts.Prompt's prefix_prompt, which its PromptEncoder adds to
  // flaxformer's encoder; t5x's own network has none): prompt_length > 0
  // adds the parameter "encoder.prompt.prompt.prompt" [prompt_length,
  // emb_dim] (axes prompt, prompt_embed), prepended to the embedded inputs
  // before the embedding dropout; the prompt's positions are valid in the
  // encoder's and the cross-attention's masks, and the relative positions
  // count them (the encoder's output is [B, prompt_length + Le, E]).
  // Packed inputs are refused, as prompt-tuning refuses them.
  int64_t prompt_length = 0;
  // Its initial value: prompt_init_values (prompt_length * emb_dim floats,
  // row-major) when given -- a prompt file (prompts.from_array) or rows of a
  // checkpoint's embedding (prompts.from_sample_of_embeddings) -- else flax's
  // initializers.uniform(prompt_init_scale): U[0, scale).
  std::vector<float> prompt_init_values;
  double prompt_init_scale = 0.01;

  // Throws t5xx::Error naming the field when a value is out of range or a
  // feature is not implemented (e.g. a dtype other than float32/bfloat16).
  // Throws as ValidateNetworkFields (which see for `where`).
  void Validate(const FieldLocator& where = nullptr) const;
};

// The checks T5Config and DecoderOnlyConfig share. `gin_name` (e.g.
// "network.T5Config") starts every message; `positive` lists (field, value)
// pairs that must be > 0 (and at most 2^24; vocab_size at most 2^31 - 1).
// Throws t5xx::Error naming the field and the fix, prefixed with
// where(field) + ": " when `where` is given (e.g. the gin file:line that
// binds it).
void ValidateNetworkFields(const std::string& gin_name,
                           const std::vector<std::pair<const char*, int64_t>>& positive,
                           const std::string& dtype, double dropout_rate,
                           const std::vector<std::string>& mlp_activations,
                           const std::string& remat_policy, const FieldLocator& where = nullptr);

// Presets with t5x's T5.1.1 dimensions (t5x/examples/t5/t5_1_1/*.gin);
// "tiny" is t5xx's own (emb 128, 4 heads x 32, 2+2 layers, mlp 256) used by
// tests and the demo. Throws t5xx::Error for an unknown name.
T5Config T5_1_1Config(const std::string& size);

}  // namespace t5xx::models
