// table.index_select(1, index) for a small [rows, columns] table looked up
// at many positions (T5's relative position bias: [heads, buckets] read at
// every query-key pair), with a backward pass that runs each row's sums on
// its own thread.
//
// Why (issue 16): libtorch 1.13's CPU index_add_ along dimension 1 adds one
// column at a time on one thread: 8.5 ms per step for T5.1.1 small at
// 2 x (512 + 114) (two tables read at 512 * 512 and 114 * 114 positions).
// Here row h's gradient is summed over positions in the same order (position
// 0, 1, 2, ...) as index_add_, so the values are bitwise those of
// index_select's own backward; only the rows are spread over threads.
#pragma once

#include <ATen/core/Tensor.h>

namespace t5xx::models {

// table: [R, C] float32 (any device); index: [N] int64 with values in
// [0, C). Returns [R, N] = table[:, index] with autograd for table (no
// double backward). Float32 CPU tables take the parallel backward; others
// are index_select. Throws c10::Error (as index_select) for an index out of
// range.
at::Tensor IndexSelectColumns(const at::Tensor& table, const at::Tensor& index);

}  // namespace t5xx::models
