// The T5 decoder's layers for a decode step of a few rows -- the
// implementation of few_row_decoder.h.
#include "t5xx/models/few_row_decoder.h"

#include <ATen/ATen.h>

#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "t5xx/kernels/cpu/tensor_offsets.h"
#include "t5xx/kernels/decode_attention.h"
#include "t5xx/kernels/fused_rms_norm.h"
#include "t5xx/kernels/gated_gelu.h"
#include "t5xx/kernels/skinny_matmul.h"
#include "t5xx/models/decode_cache.h"
#include "t5xx/models/networks/int8_weights.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::models {
namespace {

constexpr double kNormEpsilon = 1e-6;  // t5x LayerNorm's default epsilon

// A kernel as SkinnyMatmulInto reads it: [k, n], row-major or the
// transpose of a row-major [n, k].
struct Kernel {
  const float* data = nullptr;
  int64_t k = 0, n = 0;
  bool transposed = false;
};

// out [rows, w.n] = x [rows, w.k] @ w.
void Project(const float* x, int64_t rows, const Kernel& w, float* out) {
  SkinnyMatmulInto(x, rows, w.k, w.data, w.n, w.transposed, out);
}

// x += y over n values (the residual: ATen's float add, the same bits).
void AddInPlace(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

bool GatedGeluActivations(const std::vector<std::string>& a) {
  return a.size() == 2 && a[0] == "gelu" && a[1] == "linear";
}
bool ReluActivation(const std::vector<std::string>& a) { return a.size() == 1 && a[0] == "relu"; }

// The parameters by name, for one step's lookups (ParamStore::Get scans
// its list; a step looks up ~15 names a layer).
class ParamIndex {
 public:
  explicit ParamIndex(const ParamStore& p) {
    for (const Param& q : p.params()) by_name_.emplace(q.name, &q.value);
  }
  // The parameter `name`, or null.
  const at::Tensor* Find(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  // The kernel `name` when SkinnyMatmulInto reads it and it is [k, n]
  // (n < 0: any width).
  std::optional<Kernel> KernelOf(const std::string& name, int64_t k, int64_t n) const {
    const at::Tensor* w = Find(name);
    if (!w) return std::nullopt;
    const SkinnyLayout layout = SkinnyLayoutOf(*w);
    if (layout == SkinnyLayout::kNeither || w->size(0) != k || (n >= 0 && w->size(1) != n)) {
      return std::nullopt;
    }
    return Kernel{w->data_ptr<float>(), k, w->size(1), layout == SkinnyLayout::kTransposed};
  }
  // The norm scale `name` when it is float32 [e], contiguous, on the CPU.
  const float* ScaleOf(const std::string& name, int64_t e) const {
    const at::Tensor* s = Find(name);
    if (!s || !device::IsFloat32CpuStrided(*s) || !s->is_contiguous() || s->numel() != e) {
      return nullptr;
    }
    return s->data_ptr<float>();
  }

 private:
  std::unordered_map<std::string_view, const at::Tensor*> by_name_;
};

// The cache's tensor `name`, or an undefined one.
at::Tensor Find(const decoding::Cache& cache, const std::string& name) {
  const auto it = cache.find(name);
  return it == cache.end() ? at::Tensor() : it->second;
}

// Whether t is a float32 CPU [rows, L, width] with its last dimension
// contiguous.
bool CacheOf(const at::Tensor& t, int64_t rows, int64_t width) {
  return device::IsFloat32CpuStrided(t) && t.dim() == 3 && t.size(0) == rows &&
         t.size(2) == width && t.stride(2) == 1;
}

// One decoder layer of a step: its kernels ([E, H*D] projections in, [H*D,
// E] out, [E, F] / [F, E] MLP kernels), its norm scales [E] and its cache
// entries (self: this step's rows; cross: a divisor of them, an example's
// beams sharing its row).
struct LayerPlan {
  Kernel q, k, v, o, cq, co, wi0, wi1, wo;  // wi1 only for a gated MLP
  const float* self_norm = nullptr;
  const float* cross_norm = nullptr;
  const float* mlp_norm = nullptr;
  std::string self_key, self_value;  // written in place: by name (WritableCacheEntry)
  at::Tensor cross_key, cross_value;
};

// Every layer's plan when the few-row loops compute this step as the tensor
// path would (FewRowDecoderApplies), else nullopt.
std::optional<std::vector<LayerPlan>> PlanLayers(const T5Config& c, const ParamStore& p,
                                                 const at::Tensor& tokens,
                                                 const decoding::Cache& cache) {
  // (AttentionKernel::kFused sends attention to libtorch's kernel instead.)
  if (p.hooks_ptr() || ActiveInt8Weights() || ActivationDtype(c.dtype) != at::kFloat ||
      attention_kernel() == AttentionKernel::kFused) {
    return std::nullopt;
  }
  if (tokens.dim() != 2 || tokens.size(1) != 1 || tokens.size(0) < 1 ||
      tokens.size(0) > kSkinnyMatmulMaxRows) {
    return std::nullopt;
  }
  const bool gated = GatedGeluActivations(c.mlp_activations);
  if (!gated && !ReluActivation(c.mlp_activations)) return std::nullopt;
  const ParamIndex params(p);
  const at::Tensor* table = params.Find("token_embedder.embedding");
  if (!table || !device::IsFloat32CpuStrided(*table) || table->dim() != 2) return std::nullopt;
  const int64_t rows = tokens.size(0), e = table->size(1);
  const at::Tensor mask = Find(cache, kEncoderDecoderMask);
  std::vector<LayerPlan> layers;
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const std::string pre = DecoderLayerPrefix(i);
    const std::string self = pre + ".self_attention", cross = pre + ".encoder_decoder_attention";
    LayerPlan l;
    const auto q = params.KernelOf(self + ".query.kernel", e, -1);
    const auto cq = params.KernelOf(cross + ".query.kernel", e, -1);
    const auto wi0 = params.KernelOf(pre + (gated ? ".mlp.wi_0.kernel" : ".mlp.wi.kernel"), e, -1);
    if (!q || !cq || !wi0 || q->n % c.num_heads != 0 || cq->n % c.num_heads != 0) {
      return std::nullopt;
    }
    const int64_t hd = q->n, chd = cq->n, f = wi0->n;
    const auto k = params.KernelOf(self + ".key.kernel", e, hd);
    const auto v = params.KernelOf(self + ".value.kernel", e, hd);
    const auto o = params.KernelOf(self + ".out.kernel", hd, e);
    const auto co = params.KernelOf(cross + ".out.kernel", chd, e);
    const auto wo = params.KernelOf(pre + ".mlp.wo.kernel", f, e);
    std::optional<Kernel> wi1 = Kernel{};  // none without a gated MLP
    if (gated) wi1 = params.KernelOf(pre + ".mlp.wi_1.kernel", e, f);
    if (!k || !v || !o || !co || !wo || !wi1) return std::nullopt;
    l.q = *q, l.k = *k, l.v = *v, l.o = *o, l.cq = *cq, l.co = *co;
    l.wi0 = *wi0, l.wi1 = *wi1, l.wo = *wo;
    l.self_norm = params.ScaleOf(pre + ".pre_self_attention_layer_norm.scale", e);
    l.cross_norm = params.ScaleOf(pre + ".pre_cross_attention_layer_norm.scale", e);
    l.mlp_norm = params.ScaleOf(pre + ".pre_mlp_layer_norm.scale", e);
    if (!l.self_norm || !l.cross_norm || !l.mlp_norm) return std::nullopt;
    l.self_key = CachedKeyName(self);
    l.self_value = CachedValueName(self);
    const at::Tensor ck = Find(cache, l.self_key), cv = Find(cache, l.self_value);
    l.cross_key = Find(cache, CachedKeyName(cross) + decoding::kPerExampleSuffix);
    l.cross_value = Find(cache, CachedValueName(cross) + decoding::kPerExampleSuffix);
    const int64_t examples = l.cross_key.defined() ? l.cross_key.size(0) : 0;
    if (!CacheOf(ck, rows, hd) || !CacheOf(cv, rows, hd) || cv.sizes() != ck.sizes() ||
        examples < 1 || rows % examples != 0 || !CacheOf(l.cross_key, examples, chd) ||
        !CacheOf(l.cross_value, examples, chd) || l.cross_value.sizes() != l.cross_key.sizes()) {
      return std::nullopt;
    }
    // The cross-attention's mask: one row per row of its keys.
    if (!mask.defined() || mask.dim() != 2 || mask.size(0) != examples ||
        mask.size(1) != l.cross_key.size(1)) {
      return std::nullopt;
    }
    layers.push_back(std::move(l));
  }
  return layers;
}

}  // namespace

bool DecodeStepKernel(const Param& p) {
  return p.name.rfind("decoder.", 0) == 0 && EndsWith(p.name, ".kernel") &&
         !EndsWith(p.name, ".encoder_decoder_attention.key.kernel") &&
         !EndsWith(p.name, ".encoder_decoder_attention.value.kernel");
}

bool FewRowDecoderApplies(const T5Config& c, const ParamStore& p, const at::Tensor& tokens,
                          const decoding::Cache& cache) {
  return PlanLayers(c, p, tokens, cache).has_value();
}

at::Tensor FewRowDecoderLayers(const T5Config& c, const ParamStore& p, const at::Tensor& tokens,
                               const at::Tensor& index, int64_t n,
                               const std::vector<at::Tensor>& self_bias, decoding::Cache& cache) {
  const std::optional<std::vector<LayerPlan>> layers = PlanLayers(c, p, tokens, cache);
  if (!layers) return at::Tensor();
  const int64_t rows = tokens.size(0), heads = c.num_heads;
  const at::Tensor table = p.Get("token_embedder.embedding").contiguous();
  const int64_t e = table.size(1);
  // x: the rows' embeddings (at::embedding's rows, float32 already).
  at::Tensor out = at::empty({rows, 1, e}, table.options());
  float* x = out.data_ptr<float>();
  const at::Tensor ids = tokens.reshape({rows}).to(at::kLong).contiguous();
  const at::Tensor pos = index.to(at::kLong).contiguous();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t id = ids.data_ptr<int64_t>()[r];
    T5XX_CHECK(id >= 0 && id < table.size(0),
               "decoding: token id " + std::to_string(id) + " is outside the vocabulary of " +
                   std::to_string(table.size(0)) + " (token_embedder.embedding)");
    std::memcpy(x + r * e, table.data_ptr<float>() + id * e, sizeof(float) * e);
  }
  const at::Tensor cross_bias =
      DecodeCrossAttentionBias(CacheEntry(cache, kEncoderDecoderMask), at::kFloat).contiguous();
  std::vector<at::Tensor> self_bias32;
  for (const at::Tensor& b : self_bias) self_bias32.push_back(b.to(at::kFloat).contiguous());
  std::vector<float> y(rows * e), part(rows * e), q, k, v, attn, h0, h1, act;
  for (size_t i = 0; i < layers->size(); ++i) {
    const LayerPlan& l = (*layers)[i];
    // Self-attention over the cache.
    const int64_t hd = l.q.n, d = hd / heads;
    q.resize(rows * hd), k.resize(rows * hd), v.resize(rows * hd), attn.resize(rows * hd);
    RmsNormRowsInto(x, rows, e, l.self_norm, kNormEpsilon, y.data());
    Project(y.data(), rows, l.q, q.data());
    Project(y.data(), rows, l.k, k.data());
    Project(y.data(), rows, l.v, v.data());
    at::Tensor& ck = WritableCacheEntry(cache, l.self_key);
    at::Tensor& cv = WritableCacheEntry(cache, l.self_value);
    const int64_t length = ck.size(1);
    float* pk = ck.data_ptr<float>();
    float* pv = cv.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t at_pos = pos.data_ptr<int64_t>()[r];
      if (at_pos < 0 || at_pos >= length) continue;  // t5x's one-hot update writes nothing
      std::memcpy(pk + (r * length + at_pos) * hd, k.data() + r * hd, sizeof(float) * hd);
      std::memcpy(pv + (r * length + at_pos) * hd, v.data() + r * hd, sizeof(float) * hd);
    }
    const at::Tensor& sb = self_bias32[self_bias32.size() == 1 ? 0 : i];
    T5XX_CHECK(sb.dim() == 4 && (sb.size(0) == 1 || sb.size(0) == rows) &&
                   (sb.size(1) == 1 || sb.size(1) == heads) && sb.size(2) == 1 && sb.size(3) == n,
               "FewRowDecoderLayers: a self-attention bias [R or 1, H or 1, 1, n] is needed");
    const DecodeAttentionOperand sbias{sb.data_ptr<float>(), sb.size(0) == 1 ? 0 : sb.stride(0),
                                       sb.size(1) == 1 ? 0 : sb.stride(1), sb.stride(3)};
    DecodeAttentionInto({q.data(), hd, d, 0}, {pk, length * hd, d, hd}, {pv, length * hd, d, hd},
                        sbias, rows, 1, heads, n, d, attn.data());
    Project(attn.data(), rows, l.o, part.data());
    AddInPlace(x, part.data(), rows * e);
    // Cross-attention over the encoder output's keys and values.
    RmsNormRowsInto(x, rows, e, l.cross_norm, kNormEpsilon, y.data());
    const int64_t chd = l.cq.n, cd = chd / heads;
    q.resize(rows * chd), attn.resize(rows * chd);
    Project(y.data(), rows, l.cq, q.data());
    const at::Tensor &ek = l.cross_key, &ev = l.cross_value;
    const int64_t le = ek.size(1);
    DecodeAttentionInto({q.data(), chd, cd, 0},
                        {ek.data_ptr<float>(), ek.stride(0), cd, ek.stride(1)},
                        {ev.data_ptr<float>(), ev.stride(0), cd, ev.stride(1)},
                        {cross_bias.data_ptr<float>(), le, 0, 1}, rows, rows / ek.size(0), heads,
                        le, cd, attn.data());
    Project(attn.data(), rows, l.co, part.data());
    AddInPlace(x, part.data(), rows * e);
    // The MLP.
    RmsNormRowsInto(x, rows, e, l.mlp_norm, kNormEpsilon, y.data());
    const int64_t f = l.wi0.n;
    h0.resize(rows * f), act.resize(rows * f);
    Project(y.data(), rows, l.wi0, h0.data());
    if (l.wi1.data) {
      h1.resize(rows * f);
      Project(y.data(), rows, l.wi1, h1.data());
      GatedGeluInto(h0.data(), h1.data(), act.data(), rows * f);
    } else {
      for (int64_t j = 0; j < rows * f; ++j) act[j] = h0[j] < 0.0f ? 0.0f : h0[j];  // relu
    }
    Project(act.data(), rows, l.wo, part.data());
    AddInPlace(x, part.data(), rows * e);
  }
  return out;
}

}  // namespace t5xx::models
