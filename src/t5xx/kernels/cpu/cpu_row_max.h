// The maximum of a float32 row, vectorised.
//
// Why a file of its own: GCC and Clang vectorise a max reduction only when
// they may treat it as the MAXPS instruction, which needs
// -ffinite-math-only and -fno-signed-zeros; those options change other code
// (std::isfinite folds to true), so this file alone is compiled with them.
// Written as plain C++, the 16-lane max loops in t5xx's softmax and
// logsumexp kernels ran one scalar MAXSS per element.
#pragma once

#include <cstdint>

namespace t5xx::device {

// max(x[0], ..., x[n-1]) for n >= 1, -3.0e38 for n = 0. A NaN in x may or
// may not be returned (callers see NaN in their sums anyway); the sign of a
// zero maximum is unspecified.
float RowMax(const float* x, int64_t n);

}  // namespace t5xx::device
