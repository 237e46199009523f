// Toy next-token models for the decoding tests: tokens_to_logits callbacks
// whose best paths can be worked out by hand, and which record what
// decoding showed them at every step.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "t5xx/decoding/decoding.h"

namespace t5xx::decoding::testing {

// A first-order Markov model: P(next | cur_token) = probs[cur_token][next]
// (zero probabilities become logits of -1e9). Records every call's
// cur_index and cur_token, and keeps a cache tensor "fed" [rows, width] of
// the tokens fed so far at their positions, checking at every call that it
// agrees with state.sequences (so a cache that does not follow its beam or
// example is caught).
struct MarkovModel {
  at::Tensor logits_table;  // float [V, V]
  std::vector<at::Tensor> cur_indices;
  std::vector<at::Tensor> cur_tokens;
  int calls = 0;

  explicit MarkovModel(const std::vector<std::vector<double>>& probs) {
    const int64_t v = static_cast<int64_t>(probs.size());
    logits_table = at::empty({v, v}, at::kFloat);
    for (int64_t i = 0; i < v; ++i) {
      for (int64_t j = 0; j < v; ++j) {
        const double p = probs[i][j];
        logits_table[i][j] = p > 0 ? std::log(p) : -1e9;
      }
    }
  }

  // A fresh cache for `batch` examples decoding sequences of `width`
  // positions (DecodingState::sequences' width), plus two columns for the
  // positions past the end that temperature sampling's finished rows reach.
  Cache MakeCache(int64_t batch, int64_t width) const {
    return {{"fed", at::full({batch, width + 2}, -1, at::kLong)}};
  }

  at::Tensor operator()(DecodingState& s) {
    ++calls;
    cur_indices.push_back(s.cur_index.clone());
    cur_tokens.push_back(s.cur_token.clone());
    at::Tensor& fed = s.cache->at("fed");
    const int64_t width = s.sequences.size(1);
    EXPECT_TRUE(s.cur_index.le(width + 1).all().item<bool>());
    fed = fed.scatter(1, s.cur_index.unsqueeze(1), s.cur_token.unsqueeze(1));
    // Where the model was fed, it was fed what the sequences hold.
    at::Tensor seen = fed.narrow(1, 0, width);
    at::Tensor known = seen >= 0;
    EXPECT_TRUE(at::where(known, seen, 0).equal(at::where(known, s.sequences, 0)))
        << "cache\n" << fed << "\nsequences\n" << s.sequences;
    return logits_table.index_select(0, s.cur_token);
  }

  TokensToLogits Fn() {
    return [this](DecodingState& s) { return (*this)(s); };
  }
};

// The deterministic chain next(t) = (t + 3) % 9 + 1 over vocab 10
// (0->4->8->3->7->2->6->1->5->9->4...), as logits 10 * one_hot(next).
struct ChainModel {
  std::vector<at::Tensor> cur_indices;
  std::vector<at::Tensor> cur_tokens;
  int calls = 0;

  static int64_t Next(int64_t t) { return (t + 3) % 9 + 1; }

  at::Tensor operator()(DecodingState& s) {
    ++calls;
    cur_indices.push_back(s.cur_index.clone());
    cur_tokens.push_back(s.cur_token.clone());
    at::Tensor next = (s.cur_token + 3).remainder(9) + 1;
    return at::one_hot(next, 10).to(at::kFloat) * 10.0;
  }

  TokensToLogits Fn() {
    return [this](DecodingState& s) { return (*this)(s); };
  }
};

inline at::Tensor Longs(std::vector<int64_t> values, std::vector<int64_t> shape) {
  return at::tensor(values, at::kLong).view(shape);
}

}  // namespace t5xx::decoding::testing
