// Memory plan: a model of the peak memory of one training process, worked
// out before training starts from the configuration alone (t5x has nothing
// like it; `t5xx train` prints it and refuses to start when the peak exceeds
// the memory available, `t5xx model_info` plans any mesh with it).
//
// The peak is the largest of three phases, each on top of the process's
// fixed cost (runtime: libtorch, oneDNN, the data pipeline's threads;
// measured, see kRuntimeBytes):
//   start-up     parameters + the largest whole parameter (each is made
//                whole from the seed, then only this process's box kept),
//                or the matmul peak's operands before them
//                (kPeakMeasurementBytes), whichever is larger
//   train step   parameters + optimizer state + gradients + activations +
//                gathered weights (ZeRO-3: whole weights in flight) +
//                gradient buckets (data parallelism: the gradients of the
//                parameters replicated over 'data' are copied into flat
//                buckets that are all-reduced while the backward pass goes on)
//   checkpoint   parameters + optimizer state + checkpoint copy (the async
//                save's snapshot of both; gradients are freed after each
//                step and the tensor cache is emptied before the copy)
// Parameters, gradients and optimizer slots are float32 and counted per
// process, from the boxes the partitioner gives it (run/memory.h).
//
// Activations (B = batch size per process, E = emb_dim, HD = num_heads *
// head_dim, H = num_heads, F = mlp_dim, A = number of MLP input projections,
// V = vocab_size, a = bytes per activation element: 4 for float32, 2 for
// bfloat16): what autograd keeps for the backward pass per layer of a
// sequence of L query tokens attending to K keys,
//     a * L * (4*E + 4*HD + (A+1)*F) + a * H * L * K
// (the layer's input and the two norm outputs, the attention sublayer's
// output; q/k/v and the attention output; the MLP's A projections and the
// gated product; the attention probabilities -- the fused RMSNorm, softmax
// and gated GELU kernels keep no more), and for the logits 4 * L * V * 2
// (the logits, kept by the fused log-sum-exp, and their gradient).
// Calibrated against libtorch's live bytes (the tensor cache's in-use
// count) after the forward pass of decoder-only 8x512 and 24x1024 models:
// within 5%. Megatron-style tensor
// parallelism divides HD, H and F by the 'model' shards of 'heads' and
// 'mlp', V by those of 'vocab' (ActivationSplit); E stays whole, except
// under the 2-D activation rules, which divide it too (remat 'minimal' then
// keeps the two row-parallel outputs whole, three in a decoder layer with
// cross-attention). remat
// policies (t5x's names):
//   'none'     every layer's activations are kept
//   'minimal'  only each layer's input and the outputs of its weight matmuls
//              (t5x's checkpoint_dots_with_no_batch_dims): a * L * (3*E +
//              3*HD + A*F) per layer (cross-attention adds 2*E + HD over L
//              and 2*HD over the encoder's length)
//   'full'     only each layer's input: a * L * E
// plus, with 'full', one layer's activations while it is recomputed (with
// 'minimal', the part of them it does not keep). Either way the backward pass needs a workspace of about the
// largest layer's activations (their gradients and softmax temporaries).
// Computed in double and saturated at the int64 maximum, so absurd sizes give
// a huge plan, never a wrapped-around small one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/networks/t5_config.h"

namespace t5xx::models {

struct MemoryPlan {
  int64_t runtime = 0;           // bytes: the process's fixed cost (kRuntimeBytes)
  int64_t parameters = 0;        // bytes of this process's boxes
  int64_t gradients = 0;         // bytes
  int64_t optimizer_state = 0;   // bytes
  int64_t activations = 0;       // bytes kept for the backward pass, at its peak
  int64_t gathered_weights = 0;  // bytes of whole (ZeRO-3 gathered) weights in flight
  int64_t gradient_buckets = 0;  // bytes: flat copies of gradients being all-reduced
  int64_t startup_transient = 0; // bytes: the largest whole parameter being made
  int64_t checkpoint_copy = 0;   // bytes: the async save's snapshot
  // The largest phase (see the top) plus the runtime, in bytes, saturating
  // (SaturatingBytes) instead of wrapping around.
  int64_t peak() const;
  // One line: "parameters 1.2 GiB, gradients ..., peak 3.4 GiB".
  std::string ToString() const;
};

// The fixed cost of a `t5xx train` process, in bytes: measured on the CPU
// build (2026-12-03, Debian 12, libtorch 1.13) as peak RSS of `t5xx --help`
// (the libraries alone: 161 MiB) and of a 2-step train of a 1.4M-parameter
// model with --peak_flops_per_s given (206 MiB, of which 16 MiB its state):
// 190 MiB; 200 MiB with the data pipeline's buffers of larger batches.
constexpr int64_t kRuntimeBytes = 200LL * 1024 * 1024;

// The start-up transient of measuring the matmul peak for MFU (three
// 2048x2048 float32 operands and oneDNN's packing buffers; trainer/
// matmul_peak.h), before any parameter exists: 64 MiB.
constexpr int64_t kPeakMeasurementBytes = 64LL * 1024 * 1024;

// How Megatron-style tensor parallelism splits a layer's activations: the
// number of 'model' shards of the heads, of the MLP's hidden units and of
// the vocabulary (1: whole).
struct ActivationSplit {
  int64_t heads = 1;
  int64_t mlp = 1;
  int64_t vocab = 1;
  // The residual stream's 'embed' (t5x's 2-D activation rules): every
  // [.., E] activation a layer keeps is then a piece of E / embed
  // (partitioning/split_activations.h).
  int64_t embed = 1;
};

// "1.23 GiB" (TiB and PiB from 1024 of the one below), or "more than 8
// EiB" at SaturatingBytes' cap (which is no real size).
std::string FormatBytes(double bytes);

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

// Optimizer-state elements of one parameter of global `shape` ([rows, cols]
// or [n]) held as a piece of shape `box` (empty: whole): Adafactor factors
// a parameter whose two largest global dims are both >= min_dim_size_to_
// factor into a row and a column statistic, each split as the piece's dims
// are (box numel / box[largest] + box numel / box[second]); otherwise one
// element per parameter element; plus momentum; AdamW two per element.
int64_t OptimizerSlotElements(const std::vector<int64_t>& shape, const OptimizerSlots& slots,
                              const std::vector<int64_t>& box = {});

// Activation bytes (see the top) of the T5 encoder-decoder and of the
// decoder-only network at batch_size sequences per process of the given
// lengths, under `split` and the config's remat_policy and dtype.
int64_t EncoderDecoderActivationBytes(const T5Config& config, int64_t batch_size,
                                      int64_t encoder_length, int64_t decoder_length,
                                      const ActivationSplit& split = {});
int64_t DecoderOnlyActivationBytes(const DecoderOnlyConfig& config, int64_t batch_size,
                                   int64_t length, const ActivationSplit& split = {});

// Fills parameters, gradients and optimizer_state from the parameters'
// global `shapes` and this process's `box_shapes` of them (empty: whole),
// and checkpoint_copy (parameters + optimizer state) when `checkpoints` (the
// run saves checkpoints). `has_state` (empty: all) says which parameters
// have optimizer state (a MultiOptimizer's frozen ones have none).
void SetStateBytes(const std::vector<std::vector<int64_t>>& shapes, const OptimizerSlots& slots,
                   bool checkpoints, MemoryPlan& plan,
                   const std::vector<std::vector<int64_t>>& box_shapes = {},
                   const std::vector<bool>& has_state = {});

// Bytes of memory this process may still use: MemAvailable from
// /proc/meminfo (Linux), or less when a memory cgroup of this process or of
// one above it caps it (cgroup v1 memory.limit_in_bytes - usage_in_bytes,
// cgroup v2 memory.max - memory.current, as /proc/self/cgroup names them);
// -1 when unknown. (GPU memory is not covered here.)
int64_t AvailableHostMemoryBytes();

// The cgroup part of AvailableHostMemoryBytes: the least headroom (limit -
// usage) over the memory cgroups of /proc/self/cgroup and their ancestors
// under `cgroup_root` (normally /sys/fs/cgroup); -1 when none is capped.
int64_t CgroupMemoryHeadroomBytes(const std::string& proc_self_cgroup = "/proc/self/cgroup",
                                  const std::string& cgroup_root = "/sys/fs/cgroup");

}  // namespace t5xx::models
