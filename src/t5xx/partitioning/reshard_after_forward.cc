// See reshard_after_forward.h.
#include "t5xx/partitioning/reshard_after_forward.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/StorageImpl.h>

#include <utility>
#include <vector>

namespace t5xx::partitioning {

void ReshardAfterForward(const at::Tensor& saved, const at::Tensor& y,
                         std::function<at::Tensor()> gather_again) {
  if (!at::GradMode::is_enabled() || !y.requires_grad()) return;
  c10::StorageImpl* storage = saved.storage().unsafeGetStorageImpl();
  const size_t nbytes = static_cast<size_t>(saved.numel()) * saved.element_size();
  if (saved.storage_offset() != 0 || !saved.is_contiguous() || storage->nbytes() != nbytes) {
    return;
  }
  storage->set_data_ptr(at::DataPtr(nullptr, saved.device()));  // frees the gathered kernel
  storage->set_nbytes(0);
  c10::weak_intrusive_ptr<c10::StorageImpl> weak = saved.storage().getWeakStorageImpl();
  y.register_hook([weak = std::move(weak), sizes = saved.sizes().vec(), options = saved.options(),
                   nbytes, gather_again = std::move(gather_again)](const at::Tensor&) {
    const c10::intrusive_ptr<c10::StorageImpl> st = weak.lock();
    if (!st || st->nbytes() == nbytes) return;  // nothing keeps it, or refilled already
    const at::Tensor values = gather_again();
    st->set_data_ptr(st->allocator()->allocate(nbytes));
    st->set_nbytes(nbytes);
    at::from_blob(st->data_ptr().get(), sizes, options).copy_(values);
  });
}

}  // namespace t5xx::partitioning
