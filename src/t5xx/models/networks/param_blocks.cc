// What t5x's minimal networks share (t5x/examples/t5/layers.py, used by both
// t5x/examples/t5/network.py and t5x/examples/decoder_only/network.py) -- the
// implementation of param_blocks.h.
#include "t5xx/models/networks/param_blocks.h"

#include <cmath>

#include "t5xx/models/networks/layers.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::models {
namespace {

// jax.nn.initializers.truncated_normal's stddev correction for a [-2, 2]
// truncation of a unit normal.
constexpr double kTruncatedStddevCorrection = 0.87962566103423978;

uint64_t HashName(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// N(0, stddev^2) truncated the way jax's variance_scaling('truncated_normal')
// does: a unit normal truncated to [-2, 2], scaled by stddev / 0.8796...
at::Tensor TruncatedNormal(at::IntArrayRef shape, double stddev, at::Generator& gen) {
  const double lo = 0.5 * (1.0 + std::erf(-2.0 / std::sqrt(2.0)));
  const double hi = 0.5 * (1.0 + std::erf(2.0 / std::sqrt(2.0)));
  at::Tensor u = at::empty(shape, at::kDouble).uniform_(lo, hi, gen);
  at::Tensor z = at::erfinv(u * 2.0 - 1.0) * std::sqrt(2.0);
  z = at::clamp(z, -2.0, 2.0);
  return (z * (stddev / kTruncatedStddevCorrection)).to(at::kFloat);
}

std::string WiName(size_t i, size_t n) { return n == 1 ? "wi" : "wi_" + std::to_string(i); }

}  // namespace

void ParamInitializer::Keep(const std::string& name, std::vector<int64_t> shape,
                            std::vector<std::string> axes,
                            const std::function<at::Tensor()>& make) {
  ParamSpec spec{name, std::move(shape), std::move(axes)};
  at::Tensor kept = placement_ ? placement_->Place(spec, make) : make();
  store_.Add(name, std::move(kept), std::move(spec.axes));
}

void ParamInitializer::Embedding(const std::string& name, int64_t vocab_size, int64_t emb_dim) {
  const uint64_t seed = seed_ ^ HashName(name);
  Keep(name, {vocab_size, emb_dim}, {"vocab", "embed"}, [&] {
    at::Generator g = compat::MakeCpuGenerator(seed);
    return at::empty({vocab_size, emb_dim}, at::kFloat).normal_(0.0, 1.0, g);
  });
}

void ParamInitializer::Prompt(const std::string& name, int64_t length, int64_t emb_dim,
                              const std::vector<float>& values, double scale) {
  const uint64_t seed = seed_ ^ HashName(name);
  Keep(name, {length, emb_dim}, {"prompt", "prompt_embed"}, [&] {
    if (!values.empty()) {
      return at::from_blob(const_cast<float*>(values.data()), {length, emb_dim}, at::kFloat).clone();
    }
    at::Generator g = compat::MakeCpuGenerator(seed);
    return at::empty({length, emb_dim}, at::kFloat).uniform_(0.0, scale, g);
  });
}

void ParamInitializer::Dense(const std::string& name, int64_t in, int64_t out,
                             std::vector<std::string> axes, double extra_scale) {
  const uint64_t seed = seed_ ^ HashName(name);
  Keep(name, {in, out}, std::move(axes), [&] {
    at::Generator g = compat::MakeCpuGenerator(seed);
    return TruncatedNormal({in, out}, std::sqrt(1.0 / in), g) * static_cast<float>(extra_scale);
  });
}

void ParamInitializer::Ones(const std::string& name, int64_t dim) {
  Keep(name, {dim}, {"embed"}, [&] { return at::ones({dim}, at::kFloat); });
}

void ParamInitializer::RelPos(const std::string& name, int64_t num_heads, int64_t num_buckets) {
  const uint64_t seed = seed_ ^ HashName(name);
  const double fan_avg = 0.5 * static_cast<double>(num_heads + num_buckets);
  const double limit = std::sqrt(3.0 / fan_avg);
  Keep(name, {num_heads, num_buckets}, {"heads", "relpos_buckets"}, [&] {
    at::Generator g = compat::MakeCpuGenerator(seed);
    return at::empty({num_heads, num_buckets}, at::kDouble).uniform_(-limit, limit, g)
        .to(at::kFloat);
  });
}

void ParamInitializer::Attention(const std::string& prefix, int64_t emb_dim, int64_t num_heads,
                                 int64_t head_dim) {
  const int64_t hd = num_heads * head_dim;
  const double depth_scaling = std::sqrt(static_cast<double>(head_dim));
  Dense(prefix + ".query.kernel", emb_dim, hd, {"embed", "joined_kv"}, 1.0 / depth_scaling);
  Dense(prefix + ".key.kernel", emb_dim, hd, {"embed", "joined_kv"});
  Dense(prefix + ".value.kernel", emb_dim, hd, {"embed", "joined_kv"});
  Dense(prefix + ".out.kernel", hd, emb_dim, {"joined_kv", "embed"});
}

void ParamInitializer::Mlp(const std::string& prefix, int64_t emb_dim, int64_t mlp_dim,
                           size_t num_activations) {
  for (size_t i = 0; i < num_activations; ++i) {
    Dense(prefix + "." + WiName(i, num_activations) + ".kernel", emb_dim, mlp_dim,
          {"embed", "mlp"});
  }
  Dense(prefix + ".wo.kernel", mlp_dim, emb_dim, {"mlp", "embed"});
}

at::Tensor AttentionBlock(const ParamStore& p, const std::string& prefix, const at::Tensor& q_in,
                          const at::Tensor& kv_in, int64_t num_heads, const at::Tensor& bias,
                          double dropout_rate, bool train, at::Generator* rng,
                          at::ScalarType dtype, bool float32_logits) {
  // MultiHeadDotProductAttention with each kernel applied through the
  // parameters' hooks: a process holding some of the heads computes those.
  const ShardingHooks& h = p.hooks();
  const Param& query = p.GetParam(prefix + ".query.kernel");
  const int64_t head_dim = h.GlobalShape(query)[1] / num_heads;
  const Param &key = p.GetParam(prefix + ".key.kernel"),
              &value = p.GetParam(prefix + ".value.kernel");
  std::vector<at::Tensor> qkv;
  if (kv_in.is_same(q_in)) {  // self-attention: one input for all three
    qkv = h.DenseEach(q_in, {&query, &key, &value}, dtype);
  } else {
    qkv = h.DenseEach(kv_in, {&key, &value}, dtype);
    qkv.insert(qkv.begin(), h.Dense(q_in, query, dtype));
  }
  // Heads split over the 'model' axis are contiguous blocks (their place
  // draws their dropout masks: kernels/dropout_mask.h).
  const int64_t local_heads = qkv[0].size(-1) / head_dim;
  HeadSlice slice;
  if (local_heads < num_heads) slice = {h.ModelIndex() * local_heads, num_heads};
  const at::Tensor out = AttentionHeads(qkv[0], qkv[1], qkv[2], local_heads, bias, dropout_rate,
                                        train, rng, dtype, float32_logits, slice);
  return h.Dense(out, p.GetParam(prefix + ".out.kernel"), dtype);
}

at::Tensor MlpBlockAt(const ParamStore& p, const std::string& prefix, const at::Tensor& x,
                      const std::vector<std::string>& activations, double dropout_rate,
                      bool train, at::Generator* rng, at::ScalarType dtype) {
  // MlpBlock with each kernel applied through the parameters' hooks.
  const ShardingHooks& h = p.hooks();
  const at::Tensor xd = x.to(dtype);
  std::vector<const Param*> wi;
  for (size_t i = 0; i < activations.size(); ++i) {
    wi.push_back(&p.GetParam(prefix + "." + WiName(i, activations.size()) + ".kernel"));
  }
  at::Tensor hidden = MlpActivations(h.DenseEach(xd, wi, dtype), activations);
  hidden = h.Dropout(hidden, "mlp", dropout_rate, train, rng);
  return h.Dense(hidden, p.GetParam(prefix + ".wo.kernel"), dtype);
}

void ParamInitializer::AttentionSublayer(const std::string& norm_scale, const std::string& prefix,
                                         int64_t emb_dim, int64_t num_heads, int64_t head_dim) {
  Ones(norm_scale, emb_dim);
  Attention(prefix, emb_dim, num_heads, head_dim);
}

void ParamInitializer::MlpSublayer(const std::string& norm_scale, const std::string& prefix,
                                   int64_t emb_dim, int64_t mlp_dim, size_t num_activations) {
  Ones(norm_scale, emb_dim);
  Mlp(prefix, emb_dim, mlp_dim, num_activations);
}

at::Tensor AttentionSublayer(const ParamStore& p, const std::string& norm_scale,
                             const std::string& prefix, const at::Tensor& h,
                             const at::Tensor& kv, const at::Tensor& bias,
                             const SublayerSettings& s) {
  constexpr double kEps = 1e-6;  // t5x LayerNorm's default epsilon
  at::Tensor y = p.hooks().RmsNorm(h, p.GetParam(norm_scale), kEps, s.dtype);
  y = AttentionBlock(p, prefix, y, kv.defined() ? kv : y, s.num_heads, bias, s.dropout_rate,
                     s.train, s.rng, s.dtype, s.float32_attention_logits);
  return h + p.hooks().Dropout(y, "embed", s.dropout_rate, s.train, s.rng);
}

at::Tensor MlpSublayer(const ParamStore& p, const std::string& norm_scale,
                       const std::string& prefix, const at::Tensor& h,
                       const SublayerSettings& s) {
  constexpr double kEps = 1e-6;  // t5x LayerNorm's default epsilon
  at::Tensor y = p.hooks().RmsNorm(h, p.GetParam(norm_scale), kEps, s.dtype);
  y = MlpBlockAt(p, prefix, y, *s.mlp_activations, s.dropout_rate, s.train, s.rng, s.dtype);
  return h + p.hooks().Dropout(y, "embed", s.dropout_rate, s.train, s.rng);
}

}  // namespace t5xx::models
