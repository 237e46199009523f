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

#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/optim/adafactor_fused_tiles.h"

namespace t5xx::optim {
namespace {

using namespace fused;  // NOLINT: the update's own internals

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

// Means whose all-reduces go out together (Reducer::AllReduceSumMany):
// each queued partial sum (flattened) travels with its element count
// as one float32 tensor, and Mean gives sum / count as ShardedMean would.
class MeanBatch {
 public:
  size_t Add(const std::vector<double>& sum, int64_t count, const std::string& param,
             const std::vector<int64_t>& param_dims) {
    std::vector<double> values = sum;
    values.push_back(static_cast<double>(count));
    tensors_.push_back(FloatTensor(values, {static_cast<int64_t>(values.size())}));
    contexts_.push_back({&param, param_dims});
    return tensors_.size() - 1;
  }
  void Reduce(const Reducer& reducer) {
    std::vector<ReduceRequest> requests;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      requests.push_back({&tensors_[i], ReduceContext{*contexts_[i].first, contexts_[i].second}});
    }
    reducer.AllReduceSumMany(requests);
  }
  std::vector<float> Mean(size_t i) const {
    const at::Tensor t = tensors_[i].contiguous();
    const float* d = t.data_ptr<float>();
    const int64_t n = t.numel() - 1;
    const float total = d[n];
    std::vector<float> out(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) out[static_cast<size_t>(j)] = d[j] / total;
    return out;
  }

 private:
  std::vector<at::Tensor> tensors_;
  std::vector<std::pair<const std::string*, std::vector<int64_t>>> contexts_;
};

int64_t Count(at::IntArrayRef shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape[d];
  return n;
}

// NaN-propagating max / min (at::maximum, clamp).
inline float MaxNan(float x, float lo) { return std::isnan(x) || x > lo ? x : lo; }
inline float MinNan(float x, float hi) { return std::isnan(x) || x < hi ? x : hi; }

// The update's scalars from Adafactor's config and this step's scalars.
Consts MakeConsts(const AdafactorConfig& c, const AdafactorStepScalars& scalars) {
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
  return k;
}

// Points `w` at `in`'s tensors (contiguous copies where needed) and plans
// its layout.
void PrepareWork(Work& w, const FusedAdafactorParam& in, const Consts& k) {
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
}

// Tile partials -> the parameter's sums, adding tiles in tile order.
void SumTilePartials(Work& w) {
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

// The indices of a parameter's means in the step's MeanBatches.
struct MeanIndices {
  size_t p = 0, row = 0, col = 0, row_col = 0, y = 0;
};

// Queues the mean of p^2 (with parameter scaling) and, when factored, the
// row and column means of g^2 + epsilon1.
void QueueStatistics(const Work& w, const AdafactorConfig& c, MeanBatch& batch,
                     MeanIndices& at) {
  const FusedAdafactorParam& in = *w.in;
  const AdafactorParamState& s = *in.state;
  const at::IntArrayRef shape = in.param.sizes();
  const std::vector<int64_t>& avg = s.averaging_dims;
  if (c.multiply_by_parameter_scale) {
    at.p = batch.Add(w.p_sum, Count(shape, avg), *in.name, avg);
  }
  if (w.L.factored) {
    at.row = batch.Add(w.row_sum, Count(shape, s.col_dims), *in.name, s.col_dims);
    at.col = batch.Add(w.col_sum, Count(shape, s.row_dims), *in.name, s.row_dims);
  }
}

// The parameter scale per BATCH index from the reduced mean of p^2: lr
// times max(rms(p), epsilon2), capped at max_parameter_scale.
void ComputeUpdateScale(Work& w, const AdafactorConfig& c, float lr, const MeanBatch& batch,
                        const MeanIndices& at) {
  const int64_t nb = w.L.size(kBatch);
  w.update_scale.assign(nb, lr);
  if (c.multiply_by_parameter_scale) {
    const std::vector<float> mean_sq = batch.Mean(at.p);
    for (int64_t b = 0; b < nb; ++b) {
      float scale = MaxNan(std::sqrt(mean_sq[b]), static_cast<float>(c.epsilon2));
      if (c.max_parameter_scale) {
        scale = MinNan(scale, static_cast<float>(*c.max_parameter_scale));
      }
      w.update_scale[b] = lr * scale;
    }
  }
}

// Factored: v_row and v_col from the reduced row and column means; queues
// the mean of the new v_row over the ROW dims, per BATCH index.
void UpdateFactoredSlots(Work& w, const Consts& k, const MeanBatch& batch, MeanBatch& next,
                         MeanIndices& at) {
  const FusedAdafactorParam& in = *w.in;
  const AdafactorParamState& s = *in.state;
  const Layout& L = w.L;
  const at::IntArrayRef shape = in.param.sizes();
  const int64_t nb = L.size(kBatch);
  const std::vector<float> row_mean = batch.Mean(at.row);
  const std::vector<float> col_mean = batch.Mean(at.col);
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
  const int64_t nr = L.size(kRow);
  std::vector<double> v_row_sum(nb, 0.0);
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t r = 0; r < nr; ++r) v_row_sum[b] += v_row[L.RowIndex(b, r)];
  }
  at.row_col = next.Add(v_row_sum, Count(shape, s.row_dims), *in.name, s.row_dims);
}

// Factored: the row and column factors of y.
void ComputeFactors(Work& w, const MeanBatch& batch, const MeanIndices& at) {
  const Layout& L = w.L;
  const int64_t nb = L.size(kBatch), nr = L.size(kRow), nc = L.size(kCol);
  const std::vector<float> row_col_mean = batch.Mean(at.row_col);
  const float* v_row = w.v_row->work.data_ptr<float>();
  const float* v_col = w.v_col->work.data_ptr<float>();
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

// The Reducer's part between pass 1 and pass 2: every parameter's scale,
// v_row, v_col and factors, with two batches of all-reduces for them all.
void ReduceStatistics(std::vector<Work>& works, const AdafactorConfig& c, const Consts& k,
                      float lr, const Reducer& reducer) {
  std::vector<MeanIndices> at(works.size());
  MeanBatch first, second;
  for (size_t i = 0; i < works.size(); ++i) QueueStatistics(works[i], c, first, at[i]);
  first.Reduce(reducer);
  for (size_t i = 0; i < works.size(); ++i) {
    ComputeUpdateScale(works[i], c, lr, first, at[i]);
    if (works[i].L.factored) UpdateFactoredSlots(works[i], k, first, second, at[i]);
  }
  second.Reduce(reducer);
  for (size_t i = 0; i < works.size(); ++i) {
    if (works[i].L.factored) ComputeFactors(works[i], second, at[i]);
  }
}

// Clipping: each parameter's update RMS (from pass 2's partials when
// factored, pass 1's when not) over the threshold, at least 1; one batch
// of all-reduces for them all.
void ComputeClipDenominators(std::vector<Work>& works, const AdafactorConfig& c,
                             const Reducer& reducer) {
  const float threshold = static_cast<float>(*c.clipping_threshold);
  MeanBatch batch;
  std::vector<size_t> at(works.size());
  for (size_t i = 0; i < works.size(); ++i) {
    Work& w = works[i];
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
    at[i] = batch.Add(w.y_sum, Count(shape, avg), *in.name, avg);
  }
  batch.Reduce(reducer);
  for (size_t i = 0; i < works.size(); ++i) {
    const std::vector<float> mean_sq = batch.Mean(at[i]);
    for (size_t b = 0; b < mean_sq.size(); ++b) {
      works[i].denom[b] = MaxNan(std::sqrt(mean_sq[b]) / threshold, 1.0f);
    }
  }
}

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
  const Consts k = MakeConsts(c, scalars);
  const float lr = static_cast<float>(scalars.learning_rate);

  std::vector<Work> works(params.size());
  int64_t total_partials = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    PrepareWork(works[i], params[i], k);
    total_partials += works[i].L.num_tiles * works[i].partial_size;
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
  device::IntraOpParallelFor(static_cast<int64_t>(works.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) SumTilePartials(works[i]);
  });

  // The Reducer, then the small arrays: parameter scale, v_row, v_col and
  // the factors.
  ReduceStatistics(works, c, k, lr, reducer);

  // Pass 2 and the update RMS.
  for (Work& w : works) w.denom.assign(w.L.size(kBatch), 1.0f);
  if (k.clip) {
    ForEveryTile(
        works, [](const Work& w) { return w.L.factored; },
        [&](Work& w, int64_t t) { ClipTile(w, t, k); });
    ComputeClipDenominators(works, c, reducer);
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
