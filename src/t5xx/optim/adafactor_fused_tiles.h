// The fused Adafactor update's tiling and per-run loops, shared by its
// driver (adafactor_fused.cc), the layout planner (adafactor_fused_layout.cc)
// and the element loops (adafactor_fused_runs.cc). Internal to optim/; the
// interface is adafactor_fused.h. Shapes are float32 row-major runs; every
// sum is float64 in a fixed order (see adafactor_fused.h).
#pragma once

#include <c10/util/BFloat16.h>

#include <array>
#include <cstdint>
#include <optional>

#include "t5xx/optim/adafactor.h"

namespace t5xx::optim::fused {

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
constexpr int64_t kBlock = 256;  // elements per inner step (stack buffers)
// Independent partial sums per run (4 AVX2 registers of float32), fixed so
// that the order of every sum is.
constexpr int kLanes = 32;

// The parameter as a 3-d row-major array of role blocks: each role's dims
// merged into one block (size 1 where the role has no dims), in memory
// order, and its tiling.
struct Layout {
  bool factored = false;
  std::array<int64_t, 3> n{};     // block sizes, outermost first
  std::array<Role, 3> role{};     // role of each block
  std::array<int, 3> pos{};       // block of each role (indexed by Role)
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
std::optional<Layout> PlanLayout(const AdafactorParamState& s, at::IntArrayRef shape);

// One tile: [lo, hi) per block.
struct TileBox {
  std::array<int64_t, 3> lo{}, hi{};
  int64_t lo_of(const Layout& L, Role r) const { return lo[L.pos[r]]; }
  int64_t extent(const Layout& L, Role r) const { return hi[L.pos[r]] - lo[L.pos[r]]; }
};

// Tile t's box, tiles numbered row-major over the grid.
TileBox Box(const Layout& L, int64_t t);

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
      f(Segment{(i0 * L.n[1] + i1) * L.n[2] + box.lo[2], box.hi[2] - box.lo[2], at[L.pos[kBatch]],
                at[L.pos[kRow]], at[L.pos[kCol]]});
    }
  }
}

// The update's scalars for every element loop.
struct Consts {
  float grad_scale, eps1, decay, mixing;
  bool param_scale, clip, momentum, m_bf16, weight_decay;
  float keep;  // 1 - weight decay
  float beta1, one_minus_beta1;
};

// Sums of one run (each over its elements, in its lanes).
struct RunSums {
  double first = 0, p_squares = 0;
};

// Pass 1, factored: vec[j] += g2[j] (the inner role's sums); returns the
// sum of g2 (the other role's) and of p^2 (when `k.param_scale`).
RunSums FactoredStatisticsRun(const float* g, const float* p, int64_t length, const Consts& k,
                              double* vec);

// Pass 1, unfactored: v = decay*v + mixing*g2 in place; returns the sum of
// y^2 (when clipping) and of p^2 (when `k.param_scale`).
RunSums UnfactoredStatisticsRun(const float* g, const float* p, float* v, int64_t length,
                                const Consts& k);

// Pass 2, factored: the sum of y^2.
double ClipRun(const float* g, int64_t length, const Consts& k, bool row_inner, const float* vec,
               float fixed);

// Pass 3: y (factored from vec/fixed, else from v), clipped by `denom`,
// times `scale`, through momentum (m32 or m16, when set), subtracted from p.
void UpdateRun(float* p, const float* g, const float* v, int64_t length, const Consts& k,
               bool row_inner, const float* vec, float fixed, float scale, float denom, float* m32,
               c10::BFloat16* m16);

}  // namespace t5xx::optim::fused
