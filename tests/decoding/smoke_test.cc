// First smoke test of t5xx_decoding: greedy decoding and beam search follow
// a fixed next-token table.
#include <gtest/gtest.h>

#include "t5xx/decoding/decoding.h"

namespace t5xx::decoding {
namespace {

// Next token = cur_token + 1 (mod 4), strongly; token 3 is EOS.
at::Tensor Chain(DecodingState& s) {
  at::Tensor next = (s.cur_token + 1).remainder(4);
  return at::one_hot(next, 4).to(at::kFloat) * 5.0;
}

TEST(Smoke, GreedyAndBeam) {
  at::Tensor inputs = at::zeros({2, 5}, at::kLong);
  TemperatureSampleOptions t;
  DecodeResult g = TemperatureSample(inputs, {}, Chain, 3, t);
  EXPECT_TRUE(g.sequences.equal(at::tensor({1, 2, 3, 0, 0}, at::kLong).view({1, 1, 5}).expand({2, 1, 5})));
  BeamSearchOptions b;
  b.num_decodes = 2;
  DecodeResult r = BeamSearch(inputs, {}, Chain, 3, b);
  EXPECT_TRUE(r.sequences.select(1, 1).equal(at::tensor({1, 2, 3, 0, 0}, at::kLong).view({1, 5}).expand({2, 5})));
}

}  // namespace
}  // namespace t5xx::decoding
