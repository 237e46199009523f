// The fused Adafactor update's layout: a parameter as role blocks and its
// tiles (see adafactor_fused_tiles.h).
#include <algorithm>
#include <utility>
#include <vector>

#include "t5xx/optim/adafactor_fused_tiles.h"

namespace t5xx::optim::fused {

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

}  // namespace t5xx::optim::fused
