// See released_storage.h.
#include "t5xx/partitioning/released_storage.h"

#include "t5xx/partitioning/collectives/differentiable_collectives.h"

namespace t5xx::partitioning {

bool ReleasedStorage::Releasable(const at::Tensor& t) {
  const size_t nbytes = static_cast<size_t>(t.numel()) * t.element_size();
  return t.defined() && t.storage_offset() == 0 && t.is_contiguous() &&
         t.storage().nbytes() == nbytes;
}

ReleasedStorage::ReleasedStorage(const at::Tensor& t, size_t member)
    : storage_(t.storage().getWeakStorageImpl()),
      member_(member),
      dtype_(t.scalar_type()),
      nbytes_(static_cast<size_t>(t.numel()) * t.element_size()),
      sizes_(t.sizes().vec()) {}

bool ReleasedStorage::IsReleased() const {
  const c10::intrusive_ptr<c10::StorageImpl> st = storage_.lock();
  return st && st->nbytes() == 0;
}

void ReleasedStorage::Release() const {
  const c10::intrusive_ptr<c10::StorageImpl> st = storage_.lock();
  if (!st || st->nbytes() != nbytes_) return;
  st->set_data_ptr(at::DataPtr(nullptr, st->device()));  // frees the bytes
  st->set_nbytes(0);
}

void ReleasedStorage::Refill(const at::Tensor& by_rank, int64_t dim) const {
  const c10::intrusive_ptr<c10::StorageImpl> st = storage_.lock();
  if (!st || st->nbytes() != 0) return;
  st->set_data_ptr(st->allocator()->allocate(nbytes_));
  st->set_nbytes(nbytes_);
  // Written through a tensor of its own, so the kept one's version counter
  // does not move.
  CopyPiecesIntoWhole(by_rank, dim,
                      at::from_blob(st->data_ptr().get(), sizes_,
                                    by_rank.options().dtype(dtype_)));
}

}  // namespace t5xx::partitioning
