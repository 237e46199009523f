// Memory plan: the bytes one training process needs, worked out before
// training starts (t5x has nothing like it; `t5xx train` prints the plan and
// refuses to start when it exceeds the memory available).
//
// Counts (B = batch size per process, E = emb_dim, HD = num_heads*head_dim,
// H = num_heads, F = mlp_dim, A = number of MLP input projections, V =
// vocab_size, a = bytes per activation element: 4 for float32, 2 for
// bfloat16; parameters, gradients and optimizer slots are float32):
//   parameters        4 * N
//   gradients         4 * N
//   optimizer state   4 * (slot elements): Adafactor factored (rank-2 rule) v_row + v_col,
//                     else v; plus m when beta1 is set; AdamW mu + nu (2N)
//   activations       what autograd keeps for the backward pass, per layer
//                     of a sequence of L query tokens attending to K keys:
//                       a * L * (6*E + 4*HD + (2*A+1)*F) + (a+1) * H * L * K
//                     (norm inputs/outputs and residuals, q/k/v and the
//                     attention output, the MLP's A projections, activation
//                     and product; attention logits and probabilities, plus
//                     a one-byte dropout mask), and for the logits
//                     4 * L * V * 3 (logits, log-softmax, gradient buffer).
//                     With remat_policy 'full' only each layer's input (a *
//                     L * E) is kept, plus one layer's activations while it
//                     is recomputed. Either way the backward pass needs a
//                     workspace of about twice the largest layer's
//                     activations (their gradients and softmax temporaries).
// The activation figure is an estimate (libtorch's allocator and temporary
// buffers add to it); the others are exact sizes. Computed in double and
// saturated at the int64 maximum, so absurd sizes give a huge plan, never a
// wrapped-around small one.
#pragma once

#include <cstdint>
#include <string>

#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/networks/t5_config.h"

namespace t5xx::models {

struct MemoryPlan {
  int64_t parameters = 0;       // bytes
  int64_t gradients = 0;        // bytes
  int64_t optimizer_state = 0;  // bytes
  int64_t activations = 0;      // bytes (estimate)
  // Bytes, saturating (SaturatingBytes) instead of wrapping around.
  int64_t total() const;
  // One line: "parameters 1.2 GiB, gradients ..., total ...".
  std::string ToString() const;
};

// `bytes` (a non-negative byte count computed in double) as int64, capped at
// 9.2e18 (just under 2^63) so that absurd sizes stay huge instead of
// wrapping around to negative.
int64_t SaturatingBytes(double bytes);

// How the optimizer's slots are sized.
struct OptimizerSlots {
  enum class Kind { kAdafactor, kAdamW };
  Kind kind = Kind::kAdafactor;
  bool factored = true;               // Adafactor
  int64_t min_dim_size_to_factor = 128;  // Adafactor
  bool momentum = false;              // Adafactor beta1 set
};

// Optimizer-state elements of one parameter of this shape ([rows, cols] or
// [n]): Adafactor factors a matrix whose two dims are both >= min_dim_size_
// to_factor into rows + cols, otherwise one element per parameter element.
int64_t OptimizerSlotElements(const std::vector<int64_t>& shape, const OptimizerSlots& slots);

// Plans for the T5 encoder-decoder and the decoder-only network at batch_size
// sequences per process of the given lengths. `param_shapes` are the
// parameters' shapes (ParamStore order does not matter).
MemoryPlan PlanEncoderDecoder(const T5Config& config,
                              const std::vector<std::vector<int64_t>>& param_shapes,
                              const OptimizerSlots& slots, int64_t batch_size,
                              int64_t encoder_length, int64_t decoder_length);
MemoryPlan PlanDecoderOnly(const DecoderOnlyConfig& config,
                           const std::vector<std::vector<int64_t>>& param_shapes,
                           const OptimizerSlots& slots, int64_t batch_size, int64_t length);

// Bytes of memory this process may still use: MemAvailable from
// /proc/meminfo (Linux), or -1 when unknown. (GPU memory is not covered yet.)
int64_t AvailableHostMemoryBytes();

}  // namespace t5xx::models
