// Dropout keep masks as a function of position (issue 50): the mask of a
// dropout site is drawn not as a stream of random numbers over this
// process's piece of a tensor, but element by element from a hash of the
// element's position in the whole (global) tensor -- its example's row in
// the global batch and its index within that row -- and the site's key.
// So every layout draws one process's masks: data parallelism (other rows
// of the global batch), tensor and activation partitioning (other slices
// of a row), ZeRO-3, microbatches, any number of processes, an elastic
// resume on another one.
//
// For a site with key K (64 bits, drawn from the step's dropout generator
// by each dropout call in turn: DropoutSiteKey) the element at global row
// r (< 2^32) and within-row index i (< 2^32: the row-major index of its
// coordinates in the whole row's shape) is kept when
//   h = Mix32(Mix32(Mix32(Mix32(K_lo) ^ K_hi) ^ r) ^ Mix32(i))
// is at or above floor(rate * 2^32), where Mix32(x) is the 32-bit hash
//   x ^= x >> 16; x *= 0x21f0aaad; x ^= x >> 15; x *= 0x735a2d97; x ^= x >> 15
// (mod 2^32; Chris Wellons' low-bias two-round integer hash; both
// multipliers below 2^31, so that int64 tensor arithmetic computes it
// exactly on any device). P(keep) = 1 - floor(rate * 2^32) / 2^32.
//
// Two implementations, the same bits: a loop over the elements for CPU
// tensors and whole-tensor int64 ATen ops for other devices (tests/kernels/
// dropout_mask_test.cc compares them on the CPU).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace t5xx::kernels {

// Row offset of the global batch: the global index of this process's local
// row 0 for the dropout masks drawn on this thread (the trainer sets it per
// microbatch: data replica index x local rows + microbatch offset). 0 when
// no scope is open (one process, one microbatch).
int64_t DropoutRowOffset();
class DropoutRowScope {
 public:
  explicit DropoutRowScope(int64_t offset);
  ~DropoutRowScope();
  DropoutRowScope(const DropoutRowScope&) = delete;
  DropoutRowScope& operator=(const DropoutRowScope&) = delete;

 private:
  int64_t saved_;
};

// The next site key from `rng` (a CPU generator; its next 64-bit number), or
// from libtorch's default CPU generator when rng is null. Throws
// std::invalid_argument for a generator of another device.
uint64_t DropoutSiteKey(at::Generator* rng);

// The keep mask of a local piece of shape `shape` (dim 0: batch rows) of a
// global tensor, as float `options` values 0 (dropped) and 1 (kept):
// element c is the global element (c_0 + row_offset, c_1 + offsets[1],
// ...) of a tensor whose dims 1.. are `whole` wide (whole[0] and
// offsets[0] are ignored; whole[d] >= offsets[d] + shape[d]). `shape`,
// `offsets` and `whole` have one entry per dim, at least one dim. Throws
// t5xx::Error for inconsistent sizes or positions past 2^32.
at::Tensor KeepMask(at::IntArrayRef shape, const std::vector<int64_t>& offsets,
                    const std::vector<int64_t>& whole, int64_t row_offset, uint64_t key,
                    double rate, const at::TensorOptions& options);

// The same through whole-tensor ATen ops (what other devices run), for
// tests on the CPU.
at::Tensor KeepMaskComposite(at::IntArrayRef shape, const std::vector<int64_t>& offsets,
                             const std::vector<int64_t>& whole, int64_t row_offset,
                             uint64_t key, double rate, const at::TensorOptions& options);

}  // namespace t5xx::kernels
