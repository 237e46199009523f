// Memory plan -- the implementation of memory_plan.h.
#include "t5xx/models/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace t5xx::models {
namespace {

int64_t ActivationBytesPerElement(const std::string& dtype) { return dtype == "bfloat16" ? 2 : 4; }

// One layer's activations kept for backward with nothing recomputed (see
// the header's formula). In double: sizes from a config are bounded only by
// int64, and their products must not wrap around (a wrapped plan once
// looked small and let a run start).
double LayerActivations(double a, double l, double k, double e, double hd, double h, double f,
                        double n_proj) {
  return a * l * (4 * e + 4 * hd + (n_proj + 1) * f) + a * h * l * k;
}

// What remat 'minimal' keeps of such a layer: its input, q/k/v, the
// attention and MLP output projections and the MLP's input projections.
double LayerMatmulOutputs(double a, double l, double e, double hd, double f, double n_proj) {
  return a * l * (3 * e + 3 * hd + n_proj * f);
}


// What one layer keeps for the backward pass under the remat policy, from
// its bytes under 'none' (`whole`), 'minimal' and 'full'.
double KeptPerLayer(const std::string& remat, double whole, double minimal, double full) {
  return remat == "full" ? full : remat == "minimal" ? minimal : whole;
}

// On top of what the layers keep: the layer being recomputed (remat; under
// 'minimal' only what it does not already keep -- the kept matmul outputs
// serve the recomputation) and the backward workspace, both of the largest
// layer (`whole` bytes under 'none', `minimal` under 'minimal').
double BackwardExtra(const std::string& remat, double whole, double minimal) {
  const double recomputed = remat == "full" ? whole : remat == "minimal" ? whole - minimal : 0;
  return recomputed + whole;
}

}  // namespace

std::string FormatBytes(double bytes) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  if (bytes >= 9.2e18) return "more than 8 EiB";  // SaturatingBytes' cap: no real size
  char buf[32];
  if (bytes >= kGiB * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2f PiB", bytes / (kGiB * 1024 * 1024));
  } else if (bytes >= kGiB * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2f TiB", bytes / (kGiB * 1024));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / kGiB);
  }
  return buf;
}

int64_t SaturatingBytes(double bytes) {
  constexpr double kMax = 9.2e18;  // just under 2^63 (9.22e18)
  return bytes >= kMax ? static_cast<int64_t>(kMax) : static_cast<int64_t>(bytes);
}

int64_t MemoryPlan::peak() const {
  const double p = static_cast<double>(parameters), o = static_cast<double>(optimizer_state);
  const double startup = p + static_cast<double>(startup_transient);  // (an upper bound)
  const double step = p + o + static_cast<double>(gradients) + static_cast<double>(activations) +
                      static_cast<double>(gathered_weights) + static_cast<double>(gradient_buckets);
  const double save = p + o + static_cast<double>(checkpoint_copy);
  return SaturatingBytes(static_cast<double>(runtime) + std::max({startup, step, save}));
}

std::string MemoryPlan::ToString() const {
  std::string s = "parameters " + FormatBytes(parameters) + ", gradients " + FormatBytes(gradients) +
                  ", optimizer state " + FormatBytes(optimizer_state) + ", activations " +
                  FormatBytes(activations);
  if (gathered_weights > 0) s += ", gathered weights " + FormatBytes(gathered_weights);
  if (gradient_buckets > 0) s += ", gradient buckets " + FormatBytes(gradient_buckets);
  if (checkpoint_copy > 0) s += ", checkpoint copy " + FormatBytes(checkpoint_copy);
  return s + ", runtime " + FormatBytes(runtime) + "; peak " + FormatBytes(peak());
}

int64_t OptimizerSlotElements(const std::vector<int64_t>& shape, const OptimizerSlots& slots,
                              const std::vector<int64_t>& box_in) {
  const std::vector<int64_t>& box = box_in.empty() ? shape : box_in;
  int64_t numel = 1;
  for (int64_t d : box) numel *= d;
  if (slots.kind == OptimizerSlots::Kind::kAdamW) return 2 * numel;
  int64_t v = numel;
  if (slots.factored && shape.size() >= 2 && box.size() == shape.size()) {
    // The two largest dims of the global shape (the later one on a tie),
    // as Adafactor chooses them; each factor is split as its dims are.
    std::vector<size_t> order(shape.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return shape[a] > shape[b]; });
    const size_t d0 = order[0], d1 = order[1];
    if (shape[d1] >= slots.min_dim_size_to_factor && box[d0] > 0 && box[d1] > 0) {
      v = numel / box[d0] + numel / box[d1];
    }
  }
  return v + (slots.momentum ? numel : 0);
}

void SetStateBytes(const std::vector<std::vector<int64_t>>& shapes, const OptimizerSlots& slots,
                   bool checkpoints, MemoryPlan& plan,
                   const std::vector<std::vector<int64_t>>& box_shapes,
                   const std::vector<bool>& has_state) {
  double n = 0, slot = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::vector<int64_t>& box = box_shapes.empty() ? shapes[i] : box_shapes.at(i);
    double numel = 1;
    for (int64_t d : box) numel *= static_cast<double>(d);
    n += numel;
    if (has_state.empty() || has_state.at(i)) {
      slot += static_cast<double>(OptimizerSlotElements(shapes[i], slots, box));
    }
  }
  plan.parameters = SaturatingBytes(4 * n);
  plan.gradients = SaturatingBytes(4 * n);
  plan.optimizer_state = SaturatingBytes(4 * slot);
  plan.checkpoint_copy = checkpoints ? SaturatingBytes(4 * (n + slot)) : 0;
}

int64_t EncoderDecoderActivationBytes(const T5Config& c, int64_t batch_size,
                                      int64_t encoder_length, int64_t decoder_length,
                                      const ActivationSplit& split) {
  const double a = ActivationBytesPerElement(c.dtype);
  // Under the 2-D activation rules every [.., E] activation kept is a piece
  // (E / split.embed); remat 'minimal' also keeps the row-parallel
  // projections' outputs, whole before their reduce-scatter.
  const double e = static_cast<double>(c.emb_dim) / static_cast<double>(split.embed),
               e_rows = split.embed > 1 ? 2 * (static_cast<double>(c.emb_dim) - e) : 0,
               hd = static_cast<double>(c.num_heads) * c.head_dim / static_cast<double>(split.heads),
               h = static_cast<double>(c.num_heads) / static_cast<double>(split.heads),
               f = static_cast<double>(c.mlp_dim) / static_cast<double>(split.mlp);
  const double np = static_cast<double>(c.mlp_activations.size());
  const double le = encoder_length, ld = decoder_length;
  const double enc_layer = LayerActivations(a, le, le, e, hd, h, f, np);
  // A decoder layer: self-attention and MLP as above, plus cross-attention
  // (another norm, q and output over Ld, k/v over Le, scores Ld x Le).
  const double dec_layer = LayerActivations(a, ld, ld, e, hd, h, f, np) +
                           a * (2 * ld * e + 2 * ld * hd + 2 * le * hd) + a * h * ld * le;
  const double enc_min = LayerMatmulOutputs(a, le, e, hd, f, np) + a * le * e_rows;
  const double dec_min = LayerMatmulOutputs(a, ld, e, hd, f, np) + a * ld * e_rows * 1.5 +
                         a * (ld * (2 * e + hd) + 2 * le * hd);
  const double logits = 4 * ld * static_cast<double>(c.vocab_size) / static_cast<double>(split.vocab) * 2;
  const std::string& r = c.remat_policy;
  const double per_seq =
      static_cast<double>(c.num_encoder_layers) * KeptPerLayer(r, enc_layer, enc_min, a * le * e) +
      static_cast<double>(c.num_decoder_layers) * KeptPerLayer(r, dec_layer, dec_min, a * ld * e) +
      (enc_layer >= dec_layer ? BackwardExtra(r, enc_layer, enc_min)
                              : BackwardExtra(r, dec_layer, dec_min)) +
      logits;
  return SaturatingBytes(static_cast<double>(batch_size) * per_seq);
}

int64_t DecoderOnlyActivationBytes(const DecoderOnlyConfig& c, int64_t batch_size, int64_t length,
                                   const ActivationSplit& split) {
  const double a = ActivationBytesPerElement(c.dtype);
  const double l = length, e = static_cast<double>(c.emb_dim) / static_cast<double>(split.embed);
  const double e_rows = split.embed > 1 ? 2 * (static_cast<double>(c.emb_dim) - e) : 0;
  const double hd = static_cast<double>(c.num_heads) * c.head_dim / static_cast<double>(split.heads);
  const double h = static_cast<double>(c.num_heads) / static_cast<double>(split.heads);
  const double f = static_cast<double>(c.mlp_dim) / static_cast<double>(split.mlp);
  const double np = static_cast<double>(c.mlp_activations.size());
  const double layer = LayerActivations(a, l, l, e, hd, h, f, np);
  const double logits = 4 * l * static_cast<double>(c.vocab_size) / static_cast<double>(split.vocab) * 2;
  const double minimal = LayerMatmulOutputs(a, l, e, hd, f, np) + a * l * e_rows;
  const std::string& r = c.remat_policy;
  const double per_seq = static_cast<double>(c.num_layers) * KeptPerLayer(r, layer, minimal, a * l * e) +
                         BackwardExtra(r, layer, minimal) + logits;
  return SaturatingBytes(static_cast<double>(batch_size) * per_seq);
}

namespace {

// The first integer in `path`, or -1 ("max", unreadable).
int64_t ReadBytesFile(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word[0] < '0' || word[0] > '9') return -1;
  try {
    return std::stoll(word);
  } catch (const std::exception&) {
    return -1;  // beyond int64: no cap worth the name
  }
}

}  // namespace

int64_t CgroupMemoryHeadroomBytes(const std::string& proc_self_cgroup,
                                  const std::string& cgroup_root) {
  std::ifstream in(proc_self_cgroup);
  std::string line;
  int64_t least = -1;
  while (std::getline(in, line)) {
    // "4:memory:/a/b" (v1) or "0::/a/b" (v2).
    const size_t c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const bool v2 = controllers.empty();
    if (!v2 && controllers.find("memory") == std::string::npos) continue;
    std::string path = line.substr(c2 + 1);
    const std::string base = cgroup_root + (v2 ? "" : "/memory");
    while (true) {  // this cgroup and every ancestor
      const std::string dir = base + (path == "/" ? "" : path);
      const int64_t limit = ReadBytesFile(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
      const int64_t usage = ReadBytesFile(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
      // v1 reports "no limit" as a huge page-rounded number.
      if (limit >= 0 && usage >= 0 && limit < (int64_t{1} << 60)) {
        const int64_t headroom = std::max<int64_t>(0, limit - usage);
        least = least < 0 ? headroom : std::min(least, headroom);
      }
      if (path.empty() || path == "/") break;
      const size_t slash = path.find_last_of('/');
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
  return least;
}

int64_t AvailableHostMemoryBytes() {
  int64_t available = -1;
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream ss(line.substr(13));
      int64_t kib = 0;
      ss >> kib;
      available = kib * 1024;
      break;
    }
  }
  const int64_t cgroup = CgroupMemoryHeadroomBytes();
  if (cgroup >= 0) available = available < 0 ? cgroup : std::min(available, cgroup);
  return available;
}

}  // namespace t5xx::models
