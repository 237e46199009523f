// Dropout keep masks as a function of position -- the implementation of
// dropout_mask.h.
#include "t5xx/kernels/dropout_mask.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <mutex>
#include <stdexcept>

#include "t5xx/kernels/cpu/cpu_vector_math.h"
#include "t5xx/kernels/cpu/intra_op_parallel.h"
#include "t5xx/util/error.h"

namespace t5xx::kernels {
namespace {

constexpr uint32_t kMul1 = 0x21f0aaadu, kMul2 = 0x735a2d97u;
constexpr int64_t kLimit = int64_t{1} << 32;

thread_local int64_t t_row_offset = 0;

inline uint32_t Mix32(uint32_t x) {
  x ^= x >> 16;
  x *= kMul1;
  x ^= x >> 15;
  x *= kMul2;
  x ^= x >> 15;
  return x;
}

uint32_t RowKey(uint64_t key, uint32_t row) {
  return Mix32(Mix32(Mix32(static_cast<uint32_t>(key)) ^ static_cast<uint32_t>(key >> 32)) ^ row);
}

uint32_t Threshold(double rate) {
  const double t = std::floor(rate * 4294967296.0);
  return t >= 4294967295.0 ? 0xffffffffu : static_cast<uint32_t>(t);
}

// Checks the arguments; returns the row strides of the whole row's shape
// (dims 1..) in elements.
std::vector<int64_t> WholeStrides(at::IntArrayRef shape, const std::vector<int64_t>& offsets,
                                  const std::vector<int64_t>& whole, int64_t row_offset,
                                  double rate) {
  const size_t n = shape.size();
  T5XX_CHECK(n >= 1 && offsets.size() == n && whole.size() == n,
             "KeepMask: shape, offsets and whole need one entry per dim");
  T5XX_CHECK(rate > 0 && rate < 1, "KeepMask: rate must be in (0, 1)");
  T5XX_CHECK(row_offset >= 0 && row_offset + shape[0] <= kLimit,
             "KeepMask: global rows past 2^32");
  std::vector<int64_t> strides(n, 1);
  int64_t row = 1;
  for (size_t d = n; d-- > 1;) {
    T5XX_CHECK(offsets[d] >= 0 && offsets[d] + shape[d] <= whole[d],
               "KeepMask: dim " + std::to_string(d) + " holds [" + std::to_string(offsets[d]) +
                   ", " + std::to_string(offsets[d] + shape[d]) + ") of " +
                   std::to_string(whole[d]));
    strides[d] = row;
    row *= whole[d];
  }
  T5XX_CHECK(row <= kLimit, "KeepMask: rows of more than 2^32 elements");
  return strides;
}

// h >= threshold for one run of the innermost dim: out[j] = keep ? 1 : 0.
T5XX_CPU_CLONES
void KeepRun(uint32_t row_key, uint32_t first, int64_t n, uint32_t threshold, float* out) {
  for (int64_t j = 0; j < n; ++j) {
    const uint32_t h = Mix32(row_key ^ Mix32(first + static_cast<uint32_t>(j)));
    out[j] = h >= threshold ? 1.0f : 0.0f;
  }
}

// Mix32 of non-negative int64 values below 2^32, as whole-tensor ops.
at::Tensor Mix32Tensor(at::Tensor x) {
  const int64_t mask = 0xffffffffLL;
  x = at::bitwise_xor(x, at::bitwise_right_shift(x, 16));
  x = at::bitwise_and(x * static_cast<int64_t>(kMul1), mask);
  x = at::bitwise_xor(x, at::bitwise_right_shift(x, 15));
  x = at::bitwise_and(x * static_cast<int64_t>(kMul2), mask);
  return at::bitwise_xor(x, at::bitwise_right_shift(x, 15));
}

}  // namespace

int64_t DropoutRowOffset() { return t_row_offset; }
DropoutRowScope::DropoutRowScope(int64_t offset) : saved_(t_row_offset) { t_row_offset = offset; }
DropoutRowScope::~DropoutRowScope() { t_row_offset = saved_; }

uint64_t DropoutSiteKey(at::Generator* rng) {
  at::Generator g = rng ? *rng : at::detail::getDefaultCPUGenerator();
  if (g.device().type() != at::kCPU) {
    throw std::invalid_argument("DropoutSiteKey: the dropout generator must be a CPU generator");
  }
  std::lock_guard<std::mutex> lock(g.mutex());
  return g.get<at::CPUGeneratorImpl>()->random64();
}

at::Tensor KeepMask(at::IntArrayRef shape, const std::vector<int64_t>& offsets,
                    const std::vector<int64_t>& whole, int64_t row_offset, uint64_t key,
                    double rate, const at::TensorOptions& options) {
  if (options.device().type() != at::kCPU) {
    return KeepMaskComposite(shape, offsets, whole, row_offset, key, rate, options);
  }
  const std::vector<int64_t> strides = WholeStrides(shape, offsets, whole, row_offset, rate);
  const size_t n = shape.size();
  at::Tensor out = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
  const int64_t inner = n > 1 ? shape[n - 1] : 1;
  const int64_t runs = inner == 0 ? 0 : out.numel() / inner;  // (row, outer coords, ) runs
  const int64_t runs_per_row = shape[0] == 0 ? 0 : runs / shape[0];
  const uint32_t threshold = Threshold(rate);
  float* p = out.data_ptr<float>();
  device::IntraOpParallelFor(runs, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t row = r / runs_per_row;
      int64_t rest = r % runs_per_row, within = 0;
      for (size_t d = n - 1; d-- > 1;) {  // the run's coords in dims 1..n-2
        within += (rest % shape[d] + offsets[d]) * strides[d];
        rest /= shape[d];
      }
      if (n > 1) within += offsets[n - 1] * strides[n - 1];
      KeepRun(RowKey(key, static_cast<uint32_t>(row + row_offset)),
              static_cast<uint32_t>(within), inner, threshold, p + r * inner);
    }
  });
  return out.to(options.dtype());
}

at::Tensor KeepMaskComposite(at::IntArrayRef shape, const std::vector<int64_t>& offsets,
                             const std::vector<int64_t>& whole, int64_t row_offset,
                             uint64_t key, double rate, const at::TensorOptions& options) {
  const std::vector<int64_t> strides = WholeStrides(shape, offsets, whole, row_offset, rate);
  const size_t n = shape.size();
  const auto i64 = at::TensorOptions(options.device()).dtype(at::kLong);
  // The within-row index of every element, broadcast over rows: [1, s1, ...].
  at::Tensor within = at::zeros(std::vector<int64_t>(n, 1), i64);
  for (size_t d = 1; d < n; ++d) {
    std::vector<int64_t> view(n, 1);
    view[d] = shape[d];
    within = within + (at::arange(shape[d], i64) + offsets[d]).mul(strides[d]).view(view);
  }
  std::vector<int64_t> rows_view(n, 1);
  rows_view[0] = shape[0];
  const at::Tensor k_lo = Mix32Tensor(at::full({1}, static_cast<int64_t>(key & 0xffffffffULL), i64));
  const at::Tensor k = Mix32Tensor(at::bitwise_xor(k_lo, static_cast<int64_t>(key >> 32)));
  const at::Tensor rows = at::arange(shape[0], i64) + row_offset;
  const at::Tensor row_key = Mix32Tensor(at::bitwise_xor(k, rows)).view(rows_view);
  const at::Tensor h = Mix32Tensor(at::bitwise_xor(row_key, Mix32Tensor(within)));
  return at::ge(h, static_cast<int64_t>(Threshold(rate))).to(options.dtype());
}

}  // namespace t5xx::kernels
