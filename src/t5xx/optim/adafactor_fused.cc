// The fused float32 CPU Adafactor update -- see adafactor_fused.h.
//
// Compiled with -ffp-contract=off (src/t5xx/optim/CMakeLists.txt): a*b + c
// stays a rounded product and a rounded sum, as in the general path's
// separate ATen ops, on every CPU.
#include "t5xx/optim/adafactor_fused.h"

#include <c10/util/BFloat16.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <utility>

#include "t5xx/device/intra_op_parallel.h"

namespace t5xx::optim {
namespace {

// The role of a parameter dim. Unfactored parameters use kRow for every
// averaged dim (and have no kCol dims).
enum Role { kBatch = 0, kRow = 1, kCol = 2 };

// A tile: whole runs of the innermost block up to kMaxRun (cut runs at a
// large stride stall on memory: the clipping pass over a (512, 32128) kernel
// took 2.3x as long with runs of 2048 and 1.3x with 8192 as with whole
// rows), as many outer rows as make kTileElements and at least kMinRows (so
// that the tile's sums along the run, one float64 per run element, stay
// small beside the tile). BATCH innermost (runs of one element): 128 x 128.
constexpr int64_t kTileElements = 65536;
constexpr int64_t kMaxRun = 65536;
constexpr int64_t kMinRows = 16;
constexpr int64_t kTileSide = 128;
// Tiles are handed to threads in units of about this many elements, so
// that threads get equal work when tiles differ in size.
constexpr int64_t kWorkUnit = 8192;
constexpr int64_t kBlock = 256;     // elements per inner step (stack buffers)
// Independent partial sums per run (4 AVX2 registers of float32), fixed so
// that the order of every sum is.
constexpr int kLanes = 32;

// The parameter as a 3-d row-major array of role blocks: each role's dims
// merged into one block (size 1 where the role has no dims), in memory
// order, and its tiling.
struct Layout {
  bool factored = false;
  std::array<int64_t, 3> n{};   // block sizes, outermost first
  std::array<Role, 3> role{};   // role of each block
  std::array<int, 3> pos{};     // block of each role (indexed by Role)
  std::array<int64_t, 3> tile{};  // tile extent per block
  std::array<int64_t, 3> grid{};  // tiles per block
  int64_t num_tiles = 0;

  int64_t size(Role r) const { return n[pos[r]]; }
  // Index into v_row's (and the row sums') memory: the BATCH and ROW dims in
  // the parameter's order. Likewise v_col with COLUMN.
  int64_t RowIndex(int64_t b, int64_t r) const {
    return pos[kBatch] < pos[kRow] ? b * size(kRow) + r : r * size(kBatch) + b;
  }
  int64_t ColIndex(int64_t b, int64_t c) const {
    return pos[kBatch] < pos[kCol] ? b * size(kCol) + c : c * size(kBatch) + b;
  }
  // Doubles of one tile's partial sums: [sum p^2, sum y^2, row sums (the
  // tile's ROW extent), column sums (its COLUMN extent)].
  int64_t PartialSize() const { return 2 + (factored ? tile[pos[kRow]] + tile[pos[kCol]] : 0); }
};

// Builds the layout, or nullopt when a role's dims are not one run.
std::optional<Layout> PlanLayout(const AdafactorParamState& s, at::IntArrayRef shape) {
  Layout L;
  L.factored = s.is_factored;
  auto has = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  std::vector<std::pair<Role, int64_t>> blocks;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (shape[d] == 1) continue;  // no effect on memory or on any index
    Role r = kBatch;
    if (s.is_factored) {
      if (has(s.row_dims, d)) r = kRow;
      if (has(s.col_dims, d)) r = kCol;
    } else if (has(s.averaging_dims, d)) {
      r = kRow;
    }
    if (!blocks.empty() && blocks.back().first == r) {
      blocks.back().second *= shape[d];
    } else {
      for (const auto& b : blocks) {
        if (b.first == r) return std::nullopt;  // a second run of this role
      }
      blocks.emplace_back(r, shape[d]);
    }
  }
  // Roles without dims become size-1 blocks in front.
  for (Role r : {kBatch, kRow, kCol}) {
    bool seen = false;
    for (const auto& b : blocks) seen = seen || b.first == r;
    if (!seen) blocks.insert(blocks.begin(), {r, 1});
  }
  for (int k = 0; k < 3; ++k) {
    L.role[k] = blocks[k].first;
    L.n[k] = blocks[k].second;
    L.pos[L.role[k]] = k;
  }
  const int64_t nr = L.size(kRow), nc = L.size(kCol);
  int64_t tr = 1, tc = 1;
  if (!L.factored) {
    tr = std::min(nr, kTileElements);
  } else if (L.role[2] == kBatch) {  // runs of one element whatever the tile
    tr = std::min(nr, kTileSide);
    tc = std::min(nc, kTileSide);
  } else {
    const bool row_inner = L.role[2] == kRow;
    int64_t& inner = row_inner ? tr : tc;
    int64_t& outer = row_inner ? tc : tr;
    inner = std::min(row_inner ? nr : nc, kMaxRun);
    outer = std::min(row_inner ? nc : nr, std::max(kMinRows, kTileElements / inner));
  }
  L.tile[L.pos[kBatch]] = 1;
  L.tile[L.pos[kRow]] = tr;
  L.tile[L.pos[kCol]] = tc;
  L.num_tiles = 1;
  for (int k = 0; k < 3; ++k) {
    L.grid[k] = (L.n[k] + L.tile[k] - 1) / L.tile[k];
    L.num_tiles *= L.grid[k];
  }
  return L;
}

// One tile: [lo, hi) per block.
struct TileBox {
  std::array<int64_t, 3> lo{}, hi{};
  int64_t lo_of(const Layout& L, Role r) const { return lo[L.pos[r]]; }
  int64_t extent(const Layout& L, Role r) const { return hi[L.pos[r]] - lo[L.pos[r]]; }
};

TileBox Box(const Layout& L, int64_t t) {
  TileBox b;
  for (int k = 2; k >= 0; --k) {
    const int64_t g = t % L.grid[k];
    t /= L.grid[k];
    b.lo[k] = g * L.tile[k];
    b.hi[k] = std::min(L.n[k], b.lo[k] + L.tile[k]);
  }
  return b;
}

// A contiguous run of a tile along the innermost block.
struct Segment {
  int64_t offset, length;
  int64_t b, r, c;  // coordinates of its first element
};

// Calls f(segment) for the tile's runs, outer blocks in row-major order.
template <typename F>
void ForEachSegment(const Layout& L, const TileBox& box, F&& f) {
  for (int64_t i0 = box.lo[0]; i0 < box.hi[0]; ++i0) {
    for (int64_t i1 = box.lo[1]; i1 < box.hi[1]; ++i1) {
      const std::array<int64_t, 3> at{i0, i1, box.lo[2]};
      f(Segment{(i0 * L.n[1] + i1) * L.n[2] + box.lo[2], box.hi[2] - box.lo[2],
                at[L.pos[kBatch]], at[L.pos[kRow]], at[L.pos[kCol]]});
    }
  }
}

// ---- element loops ----

struct Consts {
  float grad_scale, eps1, decay, mixing;
  bool param_scale, clip, momentum, m_bf16, weight_decay;
  float keep;  // 1 - weight decay
  float beta1, one_minus_beta1;
};

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
inline void FactoredY(const float* g, int64_t n, float grad_scale, bool row_inner,
                      const float* vec, float fixed, float* y) {
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

// Sums of one run (each over its elements, in its lanes).
struct RunSums {
  double first = 0, p_squares = 0;
};

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
        const float decayed =
            static_cast<float>(c10::BFloat16(static_cast<float>(m[j]) * k.beta1));
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

// ---- per parameter ----

// A parameter's tensors as contiguous float32 (a contiguous copy written
// back at the end where one is not). Written in place, the tensor's version
// counter moves on as after the general path's copy_, so that autograd
// still refuses a graph that saved the old values.
struct Contiguous {
  at::Tensor original, work;
  explicit Contiguous(const at::Tensor& t) : original(t), work(t.contiguous()) {}
  void WriteBack() {
    if (work.is_same(original)) {
      original.unsafeGetTensorImpl()->bump_version();
    } else {
      original.copy_(work);
    }
  }
};

struct Work {
  const FusedAdafactorParam* in = nullptr;
  Layout L;
  std::unique_ptr<Contiguous> param, v_row, v_col, v, m;
  at::Tensor grad;  // contiguous
  // Their data, for the loops on other threads.
  float* p = nullptr;
  const float* g = nullptr;
  float* v_data = nullptr;            // unfactored
  float* m32 = nullptr;               // momentum in float32
  c10::BFloat16* m16 = nullptr;       // momentum in bfloat16
  int64_t partial_size = 0;
  double* partials = nullptr;  // num_tiles * partial_size, tile order
  // Totals (after the tiles, then after the Reducer).
  std::vector<double> p_sum, y_sum, row_sum, col_sum;  // p_sum/y_sum per BATCH index
  std::vector<float> update_scale, denom, row_factor, col_factor;

  // The run's factor per element (row_factor when ROW is the inner block,
  // else col_factor) and the fixed other one.
  const float* VecFactor(const Segment& s) const {
    return L.role[2] == kRow ? row_factor.data() + L.RowIndex(s.b, s.r)
                             : col_factor.data() + L.ColIndex(s.b, s.c);
  }
  float FixedFactor(const Segment& s) const {
    return L.role[2] == kRow ? col_factor[L.ColIndex(s.b, s.c)]
                             : row_factor[L.RowIndex(s.b, s.r)];
  }
};

// Pass 1 of one tile: zeroes and fills its partials (runs' sums added in
// run order).
void StatisticsTile(Work& w, int64_t t, const Consts& k) {
  const Layout& L = w.L;
  const TileBox box = Box(L, t);
  double* part = w.partials + t * w.partial_size;
  std::fill(part, part + w.partial_size, 0.0);
  if (L.factored) {
    double* rows = part + 2;
    double* cols = rows + L.tile[L.pos[kRow]];
    const int64_t lo_r = box.lo_of(L, kRow), lo_c = box.lo_of(L, kCol);
    const bool row_inner = L.role[2] == kRow;
    ForEachSegment(L, box, [&](const Segment& s) {
      // The inner role's sums go element by element, the other's is one sum.
      double* vec = row_inner ? rows + (s.r - lo_r) : cols + (s.c - lo_c);
      double* one = row_inner ? cols + (s.c - lo_c) : rows + (s.r - lo_r);
      const RunSums sums = FactoredStatisticsRun(w.g + s.offset, w.p + s.offset, s.length, k, vec);
      *one += sums.first;
      part[0] += sums.p_squares;
    });
  } else {
    ForEachSegment(L, box, [&](const Segment& s) {
      const RunSums sums = UnfactoredStatisticsRun(w.g + s.offset, w.p + s.offset,
                                                   w.v_data + s.offset, s.length, k);
      part[0] += sums.p_squares;
      part[1] += sums.first;
    });
  }
}

// Pass 2 (factored, clipping): sum(y^2) of one tile into its partials.
void ClipTile(Work& w, int64_t t, const Consts& k) {
  const bool row_inner = w.L.role[2] == kRow;
  double sum = 0;
  ForEachSegment(w.L, Box(w.L, t), [&](const Segment& s) {
    sum += ClipRun(w.g + s.offset, s.length, k, row_inner, w.VecFactor(s), w.FixedFactor(s));
  });
  w.partials[t * w.partial_size + 1] = sum;
}

// Pass 3: the update of one tile's parameter (and m) elements.
void UpdateTile(Work& w, int64_t t, const Consts& k) {
  const Layout& L = w.L;
  const bool row_inner = L.role[2] == kRow;
  ForEachSegment(L, Box(L, t), [&](const Segment& s) {
    const float* vec = L.factored ? w.VecFactor(s) : nullptr;
    const float fixed = L.factored ? w.FixedFactor(s) : 0.0f;
    UpdateRun(w.p + s.offset, w.g + s.offset, w.v_data ? w.v_data + s.offset : nullptr,
              s.length, k, row_inner, vec, fixed, w.update_scale[s.b], w.denom[s.b],
              w.m32 ? w.m32 + s.offset : nullptr, w.m16 ? w.m16 + s.offset : nullptr);
  });
}

// Runs fn(work, tile) for every tile of `works` (those with use(w)), split
// over libtorch's intra-op threads by work units: a tile goes to the thread
// whose share holds its first unit.
template <typename Use, typename Fn>
void ForEveryTile(std::vector<Work>& works, Use&& use, Fn&& fn) {
  std::vector<std::pair<int32_t, int64_t>> tasks;
  std::vector<int64_t> first_unit;
  int64_t units = 0;
  for (size_t i = 0; i < works.size(); ++i) {
    if (!use(works[i])) continue;
    const Layout& L = works[i].L;
    for (int64_t t = 0; t < L.num_tiles; ++t) {
      const TileBox box = Box(L, t);
      int64_t elements = 1;
      for (int k = 0; k < 3; ++k) elements *= box.hi[k] - box.lo[k];
      tasks.emplace_back(static_cast<int32_t>(i), t);
      first_unit.push_back(units);
      units += (elements + kWorkUnit - 1) / kWorkUnit;
    }
  }
  device::IntraOpParallelFor(units, [&](int64_t begin, int64_t end) {
    const auto from = std::lower_bound(first_unit.begin(), first_unit.end(), begin);
    for (size_t i = static_cast<size_t>(from - first_unit.begin());
         i < tasks.size() && first_unit[i] < end; ++i) {
      fn(works[tasks[i].first], tasks[i].second);
    }
  });
}

// A float32 tensor of `shape` holding `values` (rounded), for the Reducer.
at::Tensor FloatTensor(const std::vector<double>& values, at::IntArrayRef shape) {
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
  float* d = t.data_ptr<float>();
  for (size_t i = 0; i < values.size(); ++i) d[i] = static_cast<float>(values[i]);
  return t;
}

// All-reduces `sum` (the local partial sums, shaped `shape`) like
// ShardedMean and returns the means.
std::vector<float> ReducedMeans(const std::vector<double>& sum, at::IntArrayRef shape,
                                int64_t count, const Reducer& reducer, const std::string& param,
                                const std::vector<int64_t>& param_dims) {
  at::Tensor s = FloatTensor(sum, shape);
  const at::Tensor n = AllReduceSumAndCount(s, count, reducer, param, param_dims);
  const float total = n.item<float>();
  s = s.contiguous();
  const float* d = s.data_ptr<float>();
  std::vector<float> out(sum.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = d[i] / total;
  return out;
}

// `shape` with `dims` set to 1 (a keepdim sum's shape).
std::vector<int64_t> KeepDims(at::IntArrayRef shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out = shape.vec();
  for (int64_t d : dims) out[d] = 1;
  return out;
}

int64_t Count(at::IntArrayRef shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape[d];
  return n;
}

// NaN-propagating max / min (at::maximum, clamp).
inline float MaxNan(float x, float lo) { return std::isnan(x) || x > lo ? x : lo; }
inline float MinNan(float x, float hi) { return std::isnan(x) || x < hi ? x : hi; }

}  // namespace

bool FusedAdafactorCovers(const AdafactorConfig& config, const AdafactorParamState& state,
                          const at::Tensor& param, const at::Tensor& grad) {
  if (config.skip_nan_updates) return false;
  for (const at::Tensor* t : {&param, &grad}) {
    if (t->scalar_type() != at::kFloat || !t->device().is_cpu() || t->layout() != at::kStrided) {
      return false;
    }
  }
  if (param.numel() == 0 || param.sizes() != grad.sizes()) return false;
  if (state.averaging_dims.empty()) return false;  // ShardedMean's identity case
  return PlanLayout(state, param.sizes()).has_value();
}

void FusedAdafactorUpdate(const AdafactorConfig& c, const AdafactorStepScalars& scalars,
                          const std::vector<FusedAdafactorParam>& params, const Reducer& reducer) {
  if (params.empty()) return;
  Consts k{};
  k.grad_scale = scalars.grad_scale;
  k.eps1 = static_cast<float>(c.epsilon1);
  k.decay = scalars.decay;
  k.mixing = scalars.mixing;
  k.param_scale = c.multiply_by_parameter_scale;
  k.clip = c.clipping_threshold.has_value();
  k.momentum = c.beta1.has_value();
  k.m_bf16 = c.dtype_momentum == at::kBFloat16;
  k.weight_decay = scalars.weight_decay.has_value();
  k.keep = static_cast<float>(1.0 - scalars.weight_decay.value_or(0.0));
  k.beta1 = static_cast<float>(c.beta1.value_or(0.0));
  k.one_minus_beta1 = static_cast<float>(1.0 - c.beta1.value_or(0.0));
  const float lr = static_cast<float>(scalars.learning_rate);

  std::vector<Work> works(params.size());
  int64_t total_partials = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    Work& w = works[i];
    const FusedAdafactorParam& in = params[i];
    w.in = &in;
    w.L = *PlanLayout(*in.state, in.param.sizes());
    w.param = std::make_unique<Contiguous>(in.param);
    w.grad = in.grad.contiguous();
    w.p = w.param->work.data_ptr<float>();
    w.g = w.grad.data_ptr<float>();
    if (w.L.factored) {
      w.v_row = std::make_unique<Contiguous>(in.state->v_row);
      w.v_col = std::make_unique<Contiguous>(in.state->v_col);
    } else {
      w.v = std::make_unique<Contiguous>(in.state->v);
      w.v_data = w.v->work.data_ptr<float>();
    }
    if (k.momentum) {
      w.m = std::make_unique<Contiguous>(in.state->m);
      if (k.m_bf16) {
        w.m16 = w.m->work.data_ptr<c10::BFloat16>();
      } else {
        w.m32 = w.m->work.data_ptr<float>();
      }
    }
    w.partial_size = w.L.PartialSize();
    total_partials += w.L.num_tiles * w.partial_size;
  }
  // Every tile's partial sums; each tile writes only its own.
  std::unique_ptr<double[]> partials(new double[static_cast<size_t>(total_partials)]);
  int64_t at_partial = 0;
  for (Work& w : works) {
    w.partials = partials.get() + at_partial;
    at_partial += w.L.num_tiles * w.partial_size;
  }
  auto all = [](const Work&) { return true; };

  // Pass 1.
  ForEveryTile(works, all, [&](Work& w, int64_t t) { StatisticsTile(w, t, k); });

  // Tile partials -> per-parameter sums, adding tiles in tile order.
  device::IntraOpParallelFor(static_cast<int64_t>(works.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      Work& w = works[i];
      const Layout& L = w.L;
      const int64_t nb = L.size(kBatch);
      w.p_sum.assign(nb, 0.0);
      w.y_sum.assign(nb, 0.0);
      if (L.factored) {
        w.row_sum.assign(nb * L.size(kRow), 0.0);
        w.col_sum.assign(nb * L.size(kCol), 0.0);
      }
      for (int64_t t = 0; t < L.num_tiles; ++t) {
        const TileBox box = Box(L, t);
        const double* part = w.partials + t * w.partial_size;
        const int64_t b = box.lo_of(L, kBatch);
        w.p_sum[b] += part[0];
        w.y_sum[b] += part[1];
        if (!L.factored) continue;
        const double* rows = part + 2;
        const double* cols = rows + L.tile[L.pos[kRow]];
        const int64_t lo_r = box.lo_of(L, kRow), lo_c = box.lo_of(L, kCol);
        for (int64_t r = 0; r < box.extent(L, kRow); ++r) {
          w.row_sum[L.RowIndex(b, lo_r + r)] += rows[r];
        }
        for (int64_t cc = 0; cc < box.extent(L, kCol); ++cc) {
          w.col_sum[L.ColIndex(b, lo_c + cc)] += cols[cc];
        }
      }
    }
  });

  // The Reducer, then the small arrays: parameter scale, v_row, v_col and
  // the factors.
  for (Work& w : works) {
    const FusedAdafactorParam& in = *w.in;
    const AdafactorParamState& s = *in.state;
    const Layout& L = w.L;
    const at::IntArrayRef shape = in.param.sizes();
    const std::vector<int64_t>& avg = s.averaging_dims;
    const int64_t nb = L.size(kBatch);
    w.update_scale.assign(nb, lr);
    if (c.multiply_by_parameter_scale) {
      const std::vector<float> mean_sq = ReducedMeans(w.p_sum, KeepDims(shape, avg),
                                                      Count(shape, avg), reducer, *in.name, avg);
      for (int64_t b = 0; b < nb; ++b) {
        float scale = MaxNan(std::sqrt(mean_sq[b]), static_cast<float>(c.epsilon2));
        if (c.max_parameter_scale) {
          scale = MinNan(scale, static_cast<float>(*c.max_parameter_scale));
        }
        w.update_scale[b] = lr * scale;
      }
    }
    if (L.factored) {
      const std::vector<float> row_mean =
          ReducedMeans(w.row_sum, s.v_row.sizes(), Count(shape, s.col_dims), reducer, *in.name,
                       s.col_dims);
      const std::vector<float> col_mean =
          ReducedMeans(w.col_sum, s.v_col.sizes(), Count(shape, s.row_dims), reducer, *in.name,
                       s.row_dims);
      float* v_row = w.v_row->work.data_ptr<float>();
      float* v_col = w.v_col->work.data_ptr<float>();
      for (size_t i = 0; i < row_mean.size(); ++i) {
        const float kept = v_row[i] * k.decay;
        const float added = row_mean[i] * k.mixing;
        v_row[i] = kept + added;
      }
      for (size_t i = 0; i < col_mean.size(); ++i) {
        const float kept = v_col[i] * k.decay;
        const float added = col_mean[i] * k.mixing;
        v_col[i] = kept + added;
      }
      // Mean of the new v_row over the ROW dims, per BATCH index.
      const int64_t nr = L.size(kRow), nc = L.size(kCol);
      std::vector<double> v_row_sum(nb, 0.0);
      for (int64_t b = 0; b < nb; ++b) {
        for (int64_t r = 0; r < nr; ++r) v_row_sum[b] += v_row[L.RowIndex(b, r)];
      }
      // ROW dims' positions in v_row (the COLUMN dims are gone).
      std::vector<int64_t> reduced_rows;
      for (int64_t d : s.row_dims) {
        reduced_rows.push_back(d - std::count_if(s.col_dims.begin(), s.col_dims.end(),
                                                 [&](int64_t e) { return e < d; }));
      }
      const std::vector<float> row_col_mean =
          ReducedMeans(v_row_sum, KeepDims(s.v_row.sizes(), reduced_rows),
                       Count(shape, s.row_dims), reducer, *in.name, s.row_dims);
      w.row_factor.resize(static_cast<size_t>(nb * nr));
      w.col_factor.resize(static_cast<size_t>(nb * nc));
      for (int64_t b = 0; b < nb; ++b) {
        for (int64_t r = 0; r < nr; ++r) {
          const int64_t i = L.RowIndex(b, r);
          w.row_factor[i] = 1.0f / std::sqrt(v_row[i] / row_col_mean[b]);
        }
        for (int64_t cc = 0; cc < nc; ++cc) {
          const int64_t i = L.ColIndex(b, cc);
          w.col_factor[i] = 1.0f / std::sqrt(v_col[i]);
        }
      }
    }
  }

  // Pass 2 and the update RMS.
  for (Work& w : works) w.denom.assign(w.L.size(kBatch), 1.0f);
  if (k.clip) {
    ForEveryTile(
        works, [](const Work& w) { return w.L.factored; },
        [&](Work& w, int64_t t) { ClipTile(w, t, k); });
    const float threshold = static_cast<float>(*c.clipping_threshold);
    for (Work& w : works) {
      const Layout& L = w.L;
      if (L.factored) {  // unfactored: summed in pass 1
        std::fill(w.y_sum.begin(), w.y_sum.end(), 0.0);
        for (int64_t t = 0; t < L.num_tiles; ++t) {
          w.y_sum[Box(L, t).lo_of(L, kBatch)] += w.partials[t * w.partial_size + 1];
        }
      }
      const FusedAdafactorParam& in = *w.in;
      const std::vector<int64_t>& avg = in.state->averaging_dims;
      const at::IntArrayRef shape = in.param.sizes();
      const std::vector<float> mean_sq = ReducedMeans(w.y_sum, KeepDims(shape, avg),
                                                      Count(shape, avg), reducer, *in.name, avg);
      for (size_t b = 0; b < mean_sq.size(); ++b) {
        w.denom[b] = MaxNan(std::sqrt(mean_sq[b]) / threshold, 1.0f);
      }
    }
  }

  // Pass 3.
  ForEveryTile(works, all, [&](Work& w, int64_t t) { UpdateTile(w, t, k); });

  for (Work& w : works) {
    for (auto* t : {&w.param, &w.v_row, &w.v_col, &w.v, &w.m}) {
      if (*t) (*t)->WriteBack();
    }
  }
}

}  // namespace t5xx::optim
