// The fused Adafactor update's element loops: one contiguous run of a tile
// per call, in blocks of kBlock through stack buffers (see
// adafactor_fused_tiles.h).
//
// Compiled with -ffp-contract=off (src/t5xx/optim/CMakeLists.txt): a*b + c
// stays a rounded product and a rounded sum, as in the general path's
// separate ATen ops, on every CPU.
#include <algorithm>
#include <cmath>

#include "t5xx/optim/adafactor_fused_tiles.h"

namespace t5xx::optim::fused {
namespace {

// s[j % kLanes] += x[j] for the n <= kBlock elements of one block, n a
// multiple of kLanes (PadToLanes): the block's kBlock / kLanes values per
// lane are added in float32, then each lane into its float64 total. The
// lanes are fixed (the compiler vectorises across them), so the order of
// the additions is the same on every machine.
inline void AddToLanes(double* s, const float* x, int64_t n) {
  float block[kLanes] = {};
  for (int64_t j = 0; j < n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) block[l] += x[j + l];
  }
  for (int l = 0; l < kLanes; ++l) s[l] += static_cast<double>(block[l]);
}

// Zeroes buf[n, n rounded up to kLanes) (sums of zeros add nothing) and
// returns the rounded length. buf holds kBlock, a multiple of kLanes.
inline int64_t PadToLanes(float* buf, int64_t n) {
  const int64_t padded = (n + kLanes - 1) / kLanes * kLanes;
  std::fill(buf + n, buf + padded, 0.0f);
  return padded;
}

// The lanes' total, in a fixed pairwise order.
inline double FoldLanes(const double* s) {
  double t[kLanes];
  std::copy(s, s + kLanes, t);
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) t[l] = t[l] + t[l + width];
  }
  return t[0];
}

inline void Squares(const float* x, int64_t n, float* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = x[j] * x[j];
}

// g^2 + epsilon1 of the scaled gradient.
inline void GradSquares(const float* g, int64_t n, float grad_scale, float eps1, float* out) {
  for (int64_t j = 0; j < n; ++j) {
    const float x = g[j] * grad_scale;
    const float sq = x * x;
    out[j] = sq + eps1;
  }
}

// y = g * row_factor * col_factor (in that order, as the general path): one
// factor per element along the run (`vec`), the other fixed.
inline void FactoredY(const float* g, int64_t n, float grad_scale, bool row_inner, const float* vec,
                      float fixed, float* y) {
  if (row_inner) {
    for (int64_t j = 0; j < n; ++j) {
      const float x = g[j] * grad_scale;
      const float xr = x * vec[j];
      y[j] = xr * fixed;
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      const float x = g[j] * grad_scale;
      const float xr = x * fixed;
      y[j] = xr * vec[j];
    }
  }
}

// y = g * v^-1/2 (pow(-0.5) is 1 / sqrt in ATen).
inline void UnfactoredY(const float* g, const float* v, int64_t n, float grad_scale, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const float x = g[j] * grad_scale;
    const float rs = 1.0f / std::sqrt(v[j]);
    y[j] = x * rs;
  }
}

}  // namespace

// The run functions below (one contiguous run of a tile each, in blocks of
// kBlock through stack buffers) are compiled twice on x86-64, for AVX2 and
// for the baseline, and the loader picks one by the CPU (target_clones).
// The lanes fix the order of every sum and nothing is contracted, so both
// give the same bits.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define T5XX_RUN_LOOP __attribute__((target_clones("avx2", "default")))
#else
#define T5XX_RUN_LOOP
#endif

// Pass 1, factored: vec[j] += g2[j] (the inner role's sums); returns the
// sum of g2 (the other role's) and of p^2 (when `k.param_scale`).
T5XX_RUN_LOOP RunSums FactoredStatisticsRun(const float* g, const float* p, int64_t length,
                                            const Consts& k, double* vec) {
  float a[kBlock], b[kBlock];
  double lanes[kLanes] = {}, p_lanes[kLanes] = {};
  for (int64_t j0 = 0; j0 < length; j0 += kBlock) {
    const int64_t n = std::min(kBlock, length - j0);
    GradSquares(g + j0, n, k.grad_scale, k.eps1, a);
    for (int64_t j = 0; j < n; ++j) vec[j0 + j] += static_cast<double>(a[j]);
    AddToLanes(lanes, a, PadToLanes(a, n));
    if (k.param_scale) {
      Squares(p + j0, n, b);
      AddToLanes(p_lanes, b, PadToLanes(b, n));
    }
  }
  return {FoldLanes(lanes), FoldLanes(p_lanes)};
}

// Pass 1, unfactored: v = decay*v + mixing*g2 in place; returns the sum of
// y^2 (when clipping) and of p^2 (when `k.param_scale`).
T5XX_RUN_LOOP RunSums UnfactoredStatisticsRun(const float* g, const float* p, float* v,
                                              int64_t length, const Consts& k) {
  float a[kBlock], b[kBlock];
  double y_lanes[kLanes] = {}, p_lanes[kLanes] = {};
  for (int64_t j0 = 0; j0 < length; j0 += kBlock) {
    const int64_t n = std::min(kBlock, length - j0);
    GradSquares(g + j0, n, k.grad_scale, k.eps1, a);
    for (int64_t j = 0; j < n; ++j) {
      const float kept = v[j0 + j] * k.decay;
      const float added = a[j] * k.mixing;
      v[j0 + j] = kept + added;
    }
    if (k.clip) {
      UnfactoredY(g + j0, v + j0, n, k.grad_scale, b);
      Squares(b, n, a);
      AddToLanes(y_lanes, a, PadToLanes(a, n));
    }
    if (k.param_scale) {
      Squares(p + j0, n, b);
      AddToLanes(p_lanes, b, PadToLanes(b, n));
    }
  }
  return {FoldLanes(y_lanes), FoldLanes(p_lanes)};
}

// Pass 2, factored: the sum of y^2.
T5XX_RUN_LOOP double ClipRun(const float* g, int64_t length, const Consts& k, bool row_inner,
                             const float* vec, float fixed) {
  float y[kBlock], sq[kBlock];
  double lanes[kLanes] = {};
  for (int64_t j0 = 0; j0 < length; j0 += kBlock) {
    const int64_t n = std::min(kBlock, length - j0);
    FactoredY(g + j0, n, k.grad_scale, row_inner, vec + j0, fixed, y);
    Squares(y, n, sq);
    AddToLanes(lanes, sq, PadToLanes(sq, n));
  }
  return FoldLanes(lanes);
}

// Pass 3: y (factored from vec/fixed, else from v), clipped by `denom`,
// times `scale`, through momentum (m32 or m16, when set), subtracted from p.
T5XX_RUN_LOOP void UpdateRun(float* p, const float* g, const float* v, int64_t length,
                             const Consts& k, bool row_inner, const float* vec, float fixed,
                             float scale, float denom, float* m32, c10::BFloat16* m16) {
  float y[kBlock], sub[kBlock];
  for (int64_t j0 = 0; j0 < length; j0 += kBlock) {
    const int64_t n = std::min(kBlock, length - j0);
    if (vec) {
      FactoredY(g + j0, n, k.grad_scale, row_inner, vec + j0, fixed, y);
    } else {
      UnfactoredY(g + j0, v + j0, n, k.grad_scale, y);
    }
    if (k.clip) {
      for (int64_t j = 0; j < n; ++j) y[j] = y[j] / denom;
    }
    for (int64_t j = 0; j < n; ++j) sub[j] = scale * y[j];
    if (m32) {
      float* m = m32 + j0;
      for (int64_t j = 0; j < n; ++j) {
        const float decayed = m[j] * k.beta1;
        const float added = sub[j] * k.one_minus_beta1;
        const float nm = decayed + added;
        m[j] = nm;
        sub[j] = nm;
      }
    } else if (m16) {
      c10::BFloat16* m = m16 + j0;
      for (int64_t j = 0; j < n; ++j) {
        // beta1 * m rounded to m's dtype, then added in float32 (adafactor.cc).
        const float decayed = static_cast<float>(c10::BFloat16(static_cast<float>(m[j]) * k.beta1));
        const float added = sub[j] * k.one_minus_beta1;
        const float nm = decayed + added;
        m[j] = c10::BFloat16(nm);
        sub[j] = nm;
      }
    }
    float* q = p + j0;
    if (k.weight_decay) {
      for (int64_t j = 0; j < n; ++j) {
        const float kept = q[j] * k.keep;
        q[j] = kept - sub[j];
      }
    } else {
      for (int64_t j = 0; j < n; ++j) q[j] = q[j] - sub[j];
    }
  }
}

}  // namespace t5xx::optim::fused
