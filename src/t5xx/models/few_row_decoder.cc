// The T5 decoder's layers for a decode step of a few rows -- the
// implementation of few_row_decoder.h.
#include "t5xx/models/few_row_decoder.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "t5xx/kernels/decode_attention.h"
#include "t5xx/kernels/fused_rms_norm.h"
#include "t5xx/kernels/gated_gelu.h"
#include "t5xx/kernels/skinny_matmul.h"
#include "t5xx/models/decode_cache.h"
#include "t5xx/models/networks/int8_weights.h"
#include "t5xx/models/networks/layers.h"
#include "t5xx/util/error.h"

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

bool IsFloat32Cpu(const at::Tensor& t) {
  return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided;
}

bool KernelLayout(const at::Tensor& w) {
  if (!IsFloat32Cpu(w) || w.dim() != 2) return false;
  return (w.stride(1) == 1 && w.stride(0) == w.size(1)) ||
         (w.stride(0) == 1 && w.stride(1) == w.size(0));
}

Kernel KernelOf(const ParamStore& p, const std::string& name) {
  const at::Tensor& w = p.Get(name);
  return {w.data_ptr<float>(), w.size(0), w.size(1),
          !(w.stride(1) == 1 && w.stride(0) == w.size(1))};
}

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

// The names one decoder layer reads.
struct LayerNames {
  std::string self, cross, self_norm, cross_norm, mlp_norm, wi0, wi1, wo;
  LayerNames(int64_t i, bool gated) {
    const std::string pre = DecoderLayerPrefix(i);
    self = pre + ".self_attention";
    cross = pre + ".encoder_decoder_attention";
    self_norm = pre + ".pre_self_attention_layer_norm.scale";
    cross_norm = pre + ".pre_cross_attention_layer_norm.scale";
    mlp_norm = pre + ".pre_mlp_layer_norm.scale";
    wi0 = pre + (gated ? ".mlp.wi_0.kernel" : ".mlp.wi.kernel");
    wi1 = gated ? pre + ".mlp.wi_1.kernel" : "";
    wo = pre + ".mlp.wo.kernel";
  }
  std::vector<std::string> Kernels() const {
    std::vector<std::string> out;
    for (const char* w : {".query.kernel", ".key.kernel", ".value.kernel", ".out.kernel"}) {
      out.push_back(self + w);
    }
    out.push_back(cross + ".query.kernel");
    out.push_back(cross + ".out.kernel");
    out.push_back(wi0);
    if (!wi1.empty()) out.push_back(wi1);
    out.push_back(wo);
    return out;
  }
};

// The cache's tensor `name`, or an undefined one.
at::Tensor Find(const decoding::Cache& cache, const std::string& name) {
  const auto it = cache.find(name);
  return it == cache.end() ? at::Tensor() : it->second;
}

bool LastDimContiguous(const at::Tensor& t, int64_t dim) {
  return IsFloat32Cpu(t) && t.dim() == dim && t.stride(dim - 1) == 1;
}

}  // namespace

bool DecodeStepKernel(const Param& p) {
  const auto ends_with = [&](const std::string& suffix) {
    return p.name.size() >= suffix.size() &&
           p.name.compare(p.name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return p.name.rfind("decoder.", 0) == 0 && ends_with(".kernel") &&
         !ends_with(".encoder_decoder_attention.key.kernel") &&
         !ends_with(".encoder_decoder_attention.value.kernel");
}

bool FewRowDecoderApplies(const T5Config& c, const ParamStore& p, const at::Tensor& tokens,
                          const decoding::Cache& cache) {
  // (AttentionKernel::kFused sends attention to libtorch's kernel instead.)
  if (p.hooks_ptr() || ActiveInt8Weights() || ActivationDtype(c.dtype) != at::kFloat ||
      attention_kernel() == AttentionKernel::kFused) {
    return false;
  }
  if (tokens.dim() != 2 || tokens.size(1) != 1 || tokens.size(0) < 1 ||
      tokens.size(0) > kSkinnyMatmulMaxRows) {
    return false;
  }
  const bool gated = GatedGeluActivations(c.mlp_activations);
  if (!gated && !ReluActivation(c.mlp_activations)) return false;
  const at::Tensor& table = p.Get("token_embedder.embedding");
  if (!IsFloat32Cpu(table) || table.dim() != 2) return false;
  const int64_t rows = tokens.size(0), e = table.size(1);
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const LayerNames names(i, gated);
    for (const std::string& w : names.Kernels()) {
      if (!p.Contains(w) || !KernelLayout(p.Get(w))) return false;
    }
    for (const std::string* s : {&names.self_norm, &names.cross_norm, &names.mlp_norm}) {
      if (!p.Contains(*s) || !IsFloat32Cpu(p.Get(*s)) || !p.Get(*s).is_contiguous() ||
          p.Get(*s).numel() != e) {
        return false;
      }
    }
    // The shapes the loops assume: [E, H*D] projections in, [H*D, E] out,
    // [E, F] / [F, E] MLP kernels; caches of this step's rows (self) and of
    // a divisor of them (cross: an example's beams share its row).
    const at::Tensor& q = p.Get(names.self + ".query.kernel");
    const at::Tensor& cq = p.Get(names.cross + ".query.kernel");
    const at::Tensor& wi = p.Get(names.wi0);
    const int64_t hd = q.size(1), chd = cq.size(1), f = wi.size(1);
    if (q.size(0) != e || hd % c.num_heads != 0 || cq.size(0) != e || chd % c.num_heads != 0 ||
        wi.size(0) != e || p.Get(names.wo).size(0) != f || p.Get(names.wo).size(1) != e) {
      return false;
    }
    for (const char* w : {".key.kernel", ".value.kernel"}) {
      if (p.Get(names.self + w).sizes() != q.sizes()) return false;
    }
    if (p.Get(names.self + ".out.kernel").sizes() != at::IntArrayRef{hd, e} ||
        p.Get(names.cross + ".out.kernel").sizes() != at::IntArrayRef{chd, e} ||
        (gated && p.Get(names.wi1).sizes() != wi.sizes())) {
      return false;
    }
    const at::Tensor ck = Find(cache, CachedKeyName(names.self));
    const at::Tensor ek = Find(cache, CachedKeyName(names.cross) + decoding::kPerExampleSuffix);
    if (!ck.defined() || !ek.defined() || ck.dim() != 3 || ek.dim() != 3 || ck.size(0) != rows ||
        ck.size(2) != hd || ek.size(0) < 1 || ek.size(0) > rows || rows % ek.size(0) != 0 ||
        ek.size(2) != chd) {
      return false;
    }
    const at::Tensor cv = Find(cache, CachedValueName(names.self));
    const at::Tensor ev = Find(cache, CachedValueName(names.cross) + decoding::kPerExampleSuffix);
    if (!LastDimContiguous(ck, 3) || !LastDimContiguous(cv, 3) || cv.sizes() != ck.sizes() ||
        !LastDimContiguous(ek, 3) || !LastDimContiguous(ev, 3) || ev.sizes() != ek.sizes()) {
      return false;
    }
    // The cross-attention's mask: one row per row of its keys.
    const at::Tensor mask = Find(cache, kEncoderDecoderMask);
    if (!mask.defined() || mask.dim() != 2 || mask.size(0) != ek.size(0) ||
        mask.size(1) != ek.size(1)) {
      return false;
    }
  }
  return true;
}

at::Tensor FewRowDecoderLayers(const T5Config& c, const ParamStore& p, const at::Tensor& tokens,
                               const at::Tensor& index, int64_t n,
                               const std::vector<at::Tensor>& self_bias, decoding::Cache& cache) {
  const bool gated = GatedGeluActivations(c.mlp_activations);
  const int64_t rows = tokens.size(0);
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
  for (int64_t i = 0; i < c.num_decoder_layers; ++i) {
    const LayerNames names(i, gated);
    // Self-attention over the cache.
    const Kernel wq = KernelOf(p, names.self + ".query.kernel");
    const int64_t hd = wq.n, heads = c.num_heads, d = hd / heads;
    q.resize(rows * hd), k.resize(rows * hd), v.resize(rows * hd), attn.resize(rows * hd);
    RmsNormRowsInto(x, rows, e, p.Get(names.self_norm).data_ptr<float>(), kNormEpsilon, y.data());
    Project(y.data(), rows, wq, q.data());
    Project(y.data(), rows, KernelOf(p, names.self + ".key.kernel"), k.data());
    Project(y.data(), rows, KernelOf(p, names.self + ".value.kernel"), v.data());
    at::Tensor& ck = WritableCacheEntry(cache, CachedKeyName(names.self));
    at::Tensor& cv = WritableCacheEntry(cache, CachedValueName(names.self));
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
    Project(attn.data(), rows, KernelOf(p, names.self + ".out.kernel"), part.data());
    AddInPlace(x, part.data(), rows * e);
    // Cross-attention over the encoder output's keys and values.
    RmsNormRowsInto(x, rows, e, p.Get(names.cross_norm).data_ptr<float>(), kNormEpsilon, y.data());
    const Kernel cq = KernelOf(p, names.cross + ".query.kernel");
    const int64_t chd = cq.n, cd = chd / heads;
    q.resize(rows * chd), attn.resize(rows * chd);
    Project(y.data(), rows, cq, q.data());
    const at::Tensor& ek =
        CacheEntry(cache, CachedKeyName(names.cross) + decoding::kPerExampleSuffix);
    const at::Tensor& ev =
        CacheEntry(cache, CachedValueName(names.cross) + decoding::kPerExampleSuffix);
    const int64_t le = ek.size(1);
    DecodeAttentionInto({q.data(), chd, cd, 0},
                        {ek.data_ptr<float>(), ek.stride(0), cd, ek.stride(1)},
                        {ev.data_ptr<float>(), ev.stride(0), cd, ev.stride(1)},
                        {cross_bias.data_ptr<float>(), le, 0, 1}, rows, rows / ek.size(0), heads,
                        le, cd, attn.data());
    Project(attn.data(), rows, KernelOf(p, names.cross + ".out.kernel"), part.data());
    AddInPlace(x, part.data(), rows * e);
    // The MLP.
    RmsNormRowsInto(x, rows, e, p.Get(names.mlp_norm).data_ptr<float>(), kNormEpsilon, y.data());
    const Kernel wi0 = KernelOf(p, names.wi0);
    h0.resize(rows * wi0.n);
    Project(y.data(), rows, wi0, h0.data());
    if (gated) {
      h1.resize(rows * wi0.n), act.resize(rows * wi0.n);
      Project(y.data(), rows, KernelOf(p, names.wi1), h1.data());
      GatedGeluInto(h0.data(), h1.data(), act.data(), rows * wi0.n);
    } else {
      act.resize(rows * wi0.n);
      for (int64_t j = 0; j < rows * wi0.n; ++j) act[j] = h0[j] < 0.0f ? 0.0f : h0[j];  // relu
    }
    Project(act.data(), rows, KernelOf(p, names.wo), part.data());
    AddInPlace(x, part.data(), rows * e);
  }
  return out;
}

}  // namespace t5xx::models
