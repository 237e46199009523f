// A tensor kept by an op for its backward pass whose memory is given back
// between the forward and the backward pass and written again, from the
// pieces of the processes of a group, before the backward pass reads it:
// how ZeRO-3 drops a gathered kernel after its layer's forward pass (FSDP's
// reshard_after_forward, gather_units.h) and how a column-parallel layer
// drops its all-gathered input (Korthikanti et al. 2022, split_activations.h).
//
// The tensor itself stays where autograd saved it; only its storage's bytes
// go (the storage is emptied) and come back (the same shape, dtype and
// version counter, so autograd's saved-variable checks pass). Holds the
// storage weakly: once autograd drops the tensor, nothing is held.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/StorageImpl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace t5xx::partitioning {

class ReleasedStorage {
 public:
  // Whether `t` can be released: it owns its storage alone (contiguous,
  // from offset 0, the storage exactly its bytes).
  static bool Releasable(const at::Tensor& t);
  // For `t` (Releasable); `member`: a caller's index.
  ReleasedStorage(const at::Tensor& t, size_t member = 0);

  size_t member() const { return member_; }
  bool IsReleased() const;
  // Frees the tensor's bytes (nothing when already released or gone).
  void Release() const;
  // Gives the bytes back and writes them from `by_rank` ([n, piece
  // shape...]: every rank's piece, the whole being their concatenation
  // along `dim`), converted to the tensor's dtype. Nothing when not
  // released.
  void Refill(const at::Tensor& by_rank, int64_t dim) const;

 private:
  c10::weak_intrusive_ptr<c10::StorageImpl> storage_;
  size_t member_ = 0;
  at::ScalarType dtype_ = at::kFloat;
  size_t nbytes_ = 0;
  std::vector<int64_t> sizes_;
};

}  // namespace t5xx::partitioning
