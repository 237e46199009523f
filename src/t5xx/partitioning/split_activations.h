// What a split residual stream needs beyond the collectives of
// differentiable_collectives.h: under t5x's 2-D activation rules
// (activation_partitioning_dims = 2) the activations' 'embed' dimension is on
// the 'model' axis, as t5x's with_sharding_constraint calls place the
// residual stream ('batch', 'length', 'embed'), so each process of a model
// group holds E / model of every activation between the layers.
//
//  - The layer norm's mean over 'embed' spans the pieces: SplitRmsNorm sums
//    each piece's squares over the group, forward and backward.
//  - A column-parallel layer needs its whole input: it is all-gathered
//    (GatherFromSplit), and -- as Korthikanti et al., "Reducing Activation
//    Recomputation in Large Transformer Models" (2022), do for sequence
//    parallelism -- the gathered copy its matmuls keep for the backward
//    pass is released after the forward pass and gathered again from the
//    piece when the backward pass reaches them (ReleaseUntilBackward), so
//    only pieces stay alive between the passes.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "t5xx/partitioning/collectives/communicator.h"

namespace t5xx::partitioning {

// t5x's LayerNorm (x * rsqrt(mean(x^2) + epsilon), times scale) of a
// float32 x [..., E / n] that is this member's piece of [..., E] (E =
// `whole_width`) over `group` (n members): the sum of squares is summed
// over the group; in the backward pass so is sum(g * scale * x^) over the
// pieces, the one other term that spans the row. scale: this member's piece
// [E / n] of the norm scale (float32), or undefined for the normalization
// alone (x * rsqrt(...)). Returns float32 [..., E / n] with gradients for x
// and scale. Keeps x, scale and the [..., 1] inverse RMS for the backward
// pass (no double backward). Equal to the one-process norm up to the order
// of the float32 sums.
at::Tensor SplitRmsNorm(const at::Tensor& x, const at::Tensor& scale, double epsilon,
                        int64_t whole_width, const Communicator& group);

// `whole`, the all-gather over `group` of `piece` along its last dimension
// (converted to whole's dtype), is kept by the matmuls that made `outputs`
// from it: its memory is released now and, when the first of the outputs'
// gradients arrives in the backward pass, written again from a new
// all-gather of `piece` (which is held until then). Nothing happens outside
// grad mode, while a Remat block is being recomputed (its backward pass
// follows at once), when no output needs a gradient, or when whole does not
// own its memory alone. Every member of the group must make the same calls
// (the refill is a collective, run in backward order).
void ReleaseUntilBackward(const at::Tensor& whole, const at::Tensor& piece,
                          const std::vector<at::Tensor>& outputs,
                          std::shared_ptr<const Communicator> group);

}  // namespace t5xx::partitioning
