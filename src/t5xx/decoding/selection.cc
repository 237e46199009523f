// The implementation of selection.h.
#include "t5xx/decoding/selection.h"

#include <tuple>

namespace t5xx::decoding {

namespace {

// Full stable sort: descending values, equal values by ascending index.
std::pair<at::Tensor, at::Tensor> SortedTopK(const at::Tensor& x, int64_t k) {
  auto [values, indices] = x.sort(/*stable=*/true, /*dim=*/1, /*descending=*/true);
  return {values.narrow(1, 0, k), indices.narrow(1, 0, k)};
}

}  // namespace

std::pair<at::Tensor, at::Tensor> StableTopK(const at::Tensor& x, int64_t k) {
  const int64_t n = x.size(1);
  // Small rows (the finished/live selections over 2k or 3k beams): sort.
  if (n <= 4 * k || n <= 256) return SortedTopK(x, k);
  // One more than asked: when the (k+1)-th equals the k-th, more entries
  // tie at the boundary than there are places, and which ones at::topk kept
  // is unspecified; the full sort keeps the lowest indices.
  auto [values, indices] = at::topk(x, k + 1, /*dim=*/1, /*largest=*/true, /*sorted=*/true);
  if (values.select(1, k).eq(values.select(1, k - 1)).any().item<bool>()) return SortedTopK(x, k);
  // The right set; order ties by index: sort by index, then stably by value.
  auto [by_index, perm] = indices.narrow(1, 0, k).sort(1);
  at::Tensor v = values.narrow(1, 0, k).gather(1, perm);
  auto [sorted_values, perm2] = v.sort(/*stable=*/true, /*dim=*/1, /*descending=*/true);
  return {sorted_values, by_index.gather(1, perm2)};
}

at::Tensor TopKMask(const at::Tensor& x, int64_t k, double replace_val) {
  const int64_t vocab = x.size(-1);
  if (k >= vocab) return x;
  at::Tensor kth = std::get<0>(at::topk(x, k, -1, true, true)).narrow(-1, k - 1, 1);
  return at::where(x >= kth, x, at::full({}, replace_val, x.options()));
}

TopPCut TopPThreshold(const at::Tensor& probs, double p) {
  // Most rows reach p within their most probable few hundred tokens; a
  // partial top-k is far cheaper than sorting the vocabulary.
  constexpr int64_t kPrefix = 256;
  const int64_t vocab = probs.size(-1);
  TopPCut cut;
  at::Tensor cumulative;
  if (vocab > kPrefix) {
    std::tie(cut.values, cut.indices) = at::topk(probs, kPrefix, -1, true, true);
    cumulative = cut.values.cumsum(-1);
    if ((cumulative.select(-1, kPrefix - 1) < p).any().item<bool>()) cut.values.reset();
  }
  if (!cut.values.defined()) {
    std::tie(cut.values, cut.indices) = probs.sort(-1, /*descending=*/true);
    cumulative = cut.values.cumsum(-1);
  }
  // The first index whose running total reaches p (the last when none does).
  at::Tensor first =
      (cumulative < p).sum(-1, /*keepdim=*/true).clamp_max(cut.values.size(-1) - 1);
  cut.threshold = cut.values.gather(-1, first);
  return cut;
}

at::Tensor TopPMask(const at::Tensor& logits, double p, double replace_val) {
  at::Tensor probs = at::softmax(logits, -1);
  return at::where(probs >= TopPThreshold(probs, p).threshold, logits,
                   at::full({}, replace_val, logits.options()));
}

}  // namespace t5xx::decoding
