// FSDP's reshard after forward (PyTorch FSDP, reshard_after_forward=True;
// ZeRO-3's "release after use"): a parameter gathered over the data axis for
// one op is kept by autograd for that op's backward; this releases its
// memory as soon as the forward op has run and fills it again, with the same
// values gathered anew, just before the backward pass reaches the op. A
// gathered kernel then lives only while its own layer computes, in the
// forward and in the backward pass.
#pragma once

#include <ATen/ATen.h>

#include <functional>

namespace t5xx::partitioning {

// `saved`: the tensor the op that produced `y` keeps for its backward (e.g.
// the kernel of a matmul, in the matmul's dtype). Its memory is released
// now; a hook on `y` (run when y's gradient arrives, before the op's
// backward) refills it with `gather_again()` (the same shape, dtype and
// values). The hook holds the memory weakly: once the op's backward has run
// and autograd drops what it saved, the memory is freed again. The refill
// writes through a tensor of its own over the same memory, so autograd's
// version check on `saved` still passes. Does nothing when no backward pass
// will run (grad mode off, or `y` needs no gradient) or when `saved` does
// not own its memory alone (a view, an offset, a larger storage).
void ReshardAfterForward(const at::Tensor& saved, const at::Tensor& y,
                         std::function<at::Tensor()> gather_again);

}  // namespace t5xx::partitioning
