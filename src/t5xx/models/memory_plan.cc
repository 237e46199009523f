// Memory plan -- the implementation of memory_plan.h.
#include "t5xx/models/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace t5xx::models {
namespace {

int64_t ActivationBytesPerElement(const std::string& dtype) { return dtype == "bfloat16" ? 2 : 4; }

// Per-layer activations kept for backward (see the header's formula). In
// double: sizes from a config are bounded only by int64, and their products
// must not wrap around (a wrapped plan once looked small and let a run start).
double LayerActivations(double a, double l, double k, double e, double hd, double h, double f,
                        double n_proj) {
  return a * l * (6 * e + 4 * hd + (2 * n_proj + 1) * f) + (a + 1) * h * l * k;
}

std::string Gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

void ParamSizes(const std::vector<std::vector<int64_t>>& shapes, const OptimizerSlots& slots,
                MemoryPlan& plan) {
  double n = 0, slot = 0;
  for (const auto& s : shapes) {
    double numel = 1;
    for (int64_t d : s) numel *= static_cast<double>(d);
    n += numel;
    slot += static_cast<double>(OptimizerSlotElements(s, slots));
  }
  plan.parameters = SaturatingBytes(4 * n);
  plan.gradients = SaturatingBytes(4 * n);
  plan.optimizer_state = SaturatingBytes(4 * slot);
}

}  // namespace

int64_t SaturatingBytes(double bytes) {
  constexpr double kMax = 9.2e18;  // just under 2^63 (9.22e18)
  return bytes >= kMax ? static_cast<int64_t>(kMax) : static_cast<int64_t>(bytes);
}

int64_t MemoryPlan::total() const {
  return SaturatingBytes(static_cast<double>(parameters) + static_cast<double>(gradients) +
                         static_cast<double>(optimizer_state) + static_cast<double>(activations));
}

std::string MemoryPlan::ToString() const {
  return "parameters " + Gib(parameters) + ", gradients " + Gib(gradients) +
         ", optimizer state " + Gib(optimizer_state) + ", activations " + Gib(activations) +
         " (estimate), total " + Gib(total());
}

int64_t OptimizerSlotElements(const std::vector<int64_t>& shape, const OptimizerSlots& slots) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (slots.kind == OptimizerSlots::Kind::kAdamW) return 2 * numel;
  int64_t v = numel;
  if (slots.factored && shape.size() >= 2) {
    std::vector<int64_t> sorted = shape;
    std::sort(sorted.begin(), sorted.end(), std::greater<int64_t>());
    if (sorted[1] >= slots.min_dim_size_to_factor) v = numel / sorted[0] + numel / sorted[1];
  }
  return v + (slots.momentum ? numel : 0);
}

MemoryPlan PlanEncoderDecoder(const T5Config& c,
                              const std::vector<std::vector<int64_t>>& param_shapes,
                              const OptimizerSlots& slots, int64_t batch_size,
                              int64_t encoder_length, int64_t decoder_length) {
  MemoryPlan plan;
  ParamSizes(param_shapes, slots, plan);
  const double a = ActivationBytesPerElement(c.dtype);
  const double e = c.emb_dim, hd = static_cast<double>(c.num_heads) * c.head_dim,
               h = c.num_heads, f = c.mlp_dim;
  const double np = static_cast<double>(c.mlp_activations.size());
  const double le = encoder_length, ld = decoder_length;
  const double enc_layer = LayerActivations(a, le, le, e, hd, h, f, np);
  // A decoder layer: self-attention and MLP as above, plus cross-attention
  // (another norm, q and output over Ld, k/v over Le, scores Ld x Le).
  const double dec_layer = LayerActivations(a, ld, ld, e, hd, h, f, np) +
                           a * (2 * ld * e + 2 * ld * hd + 2 * le * hd) + (a + 1) * h * ld * le;
  const double logits = 4 * ld * static_cast<double>(c.vocab_size) * 3;
  // Backward workspace: the gradients of the largest layer's activations.
  const double workspace = 2 * std::max(enc_layer, dec_layer);
  double per_seq;
  if (c.remat_policy == "full") {
    per_seq = a * e * (le * static_cast<double>(c.num_encoder_layers) +
                       ld * static_cast<double>(c.num_decoder_layers)) +
              std::max(enc_layer, dec_layer) + workspace + logits;
  } else {
    per_seq = enc_layer * static_cast<double>(c.num_encoder_layers) +
              dec_layer * static_cast<double>(c.num_decoder_layers) + workspace + logits;
  }
  plan.activations = SaturatingBytes(static_cast<double>(batch_size) * per_seq);
  return plan;
}

MemoryPlan PlanDecoderOnly(const DecoderOnlyConfig& c,
                           const std::vector<std::vector<int64_t>>& param_shapes,
                           const OptimizerSlots& slots, int64_t batch_size, int64_t length) {
  MemoryPlan plan;
  ParamSizes(param_shapes, slots, plan);
  const double a = ActivationBytesPerElement(c.dtype);
  const double l = length;
  const double layer = LayerActivations(
      a, l, l, c.emb_dim, static_cast<double>(c.num_heads) * c.head_dim, c.num_heads, c.mlp_dim,
      static_cast<double>(c.mlp_activations.size()));
  const double logits = 4 * l * static_cast<double>(c.vocab_size) * 3;
  const double workspace = 2 * layer;  // gradients of the largest layer's activations
  const double layers = static_cast<double>(c.num_layers);
  const double per_seq = c.remat_policy == "full"
                             ? a * c.emb_dim * l * layers + layer + workspace + logits
                             : layer * layers + workspace + logits;
  plan.activations = SaturatingBytes(static_cast<double>(batch_size) * per_seq);
  return plan;
}

int64_t AvailableHostMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream ss(line.substr(13));
      int64_t kib = 0;
      ss >> kib;
      return kib * 1024;
    }
  }
  return -1;
}

}  // namespace t5xx::models
