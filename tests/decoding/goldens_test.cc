// t5xx's TemperatureSample and BeamSearch against t5x's own decoding.py on
// toy models: tests/testdata/decoding/decoding_goldens.json, made by
// make_decoding_goldens.py there (its docstring has the toy model, the
// environment and the command). Sequences and the number of tokens_to_logits
// calls must match exactly; scores to float32 rounding (log_softmax and pow
// sum and round in a different order in XLA and ATen).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "t5xx/decoding/decoding.h"
#include "t5xx/util/torch_compat.h"

namespace t5xx::decoding {
namespace {

using nlohmann::json;

const json& Goldens() {
  static const json goldens = [] {
    std::ifstream in(std::string(T5XX_SOURCE_DIR) + "/tests/testdata/decoding/decoding_goldens.json");
    EXPECT_TRUE(in.good());
    return json::parse(in);
  }();
  return goldens;
}

at::Tensor LongMatrix(const json& rows) {
  std::vector<int64_t> flat;
  for (const auto& row : rows) {
    for (const auto& v : row) flat.push_back(v.get<int64_t>());
  }
  return at::tensor(flat, at::kLong).view({static_cast<int64_t>(rows.size()), -1});
}

at::Tensor LongVector(const json& values) {
  return at::tensor(values.get<std::vector<int64_t>>(), at::kLong);
}

// The script's toy model: logits = table[min(step, P-1), token] +
// acc_table[acc]; acc' = (3 acc + token + 1) % K; step' = step + 1.
struct ToyModel {
  at::Tensor table;      // float [P, V, V]
  at::Tensor acc_table;  // float [K, V]
  int64_t positions = 0;
  int64_t acc_mod = 0;
  int calls = 0;

  explicit ToyModel(const json& m)
      : positions(m["positions"].get<int64_t>()), acc_mod(m["acc_mod"].get<int64_t>()) {
    const int64_t vocab = m["vocab"].get<int64_t>();
    table = at::tensor(m["table"].get<std::vector<float>>()).view({positions, vocab, vocab});
    acc_table = at::tensor(m["acc_table"].get<std::vector<float>>()).view({acc_mod, vocab});
  }

  at::Tensor operator()(DecodingState& s) {
    ++calls;
    Cache& cache = *s.cache;
    at::Tensor acc = cache.at("acc");
    at::Tensor step = cache.at("step").clamp_max(positions - 1);
    at::Tensor logits = table.index({step, s.cur_token}) + acc_table.index({acc});
    cache["acc"] = (3 * acc + s.cur_token + 1).remainder(acc_mod);
    cache["step"] = cache.at("step") + 1;
    return logits;
  }
};

void RunCase(const json& c) {
  SCOPED_TRACE(c["name"].get<std::string>());
  const json* model_json = nullptr;
  for (const auto& m : Goldens()["models"]) {
    if (m["name"] == c["model"]) model_json = &m;
  }
  ASSERT_NE(model_json, nullptr);
  ToyModel model(*model_json);
  TokensToLogits fn = [&model](DecodingState& s) { return model(s); };
  const int64_t eos_id = Goldens()["eos_id"].get<int64_t>();
  at::Tensor inputs = LongMatrix(c["inputs"]);
  Cache cache{{"acc", LongVector(c["acc"])}, {"step", LongVector(c["step"])}};
  at::Tensor initial_index;
  if (!c["initial_index"].is_null()) initial_index = LongVector(c["initial_index"]);
  const json& kw = c["kwargs"];

  DecodeResult result;
  if (c["fn"] == "temperature_sample") {
    TemperatureSampleOptions o;
    o.initial_index = initial_index;
    if (kw.contains("num_decodes")) o.num_decodes = kw["num_decodes"].get<int64_t>();
    if (kw.contains("topk")) o.topk = kw["topk"].get<int64_t>();
    if (kw.contains("topp")) o.topp = kw["topp"].get<double>();
    if (kw.contains("rescale_log_probs")) o.rescale_log_probs = kw["rescale_log_probs"].get<bool>();
    if (kw.contains("max_decode_steps")) o.max_decode_steps = kw["max_decode_steps"].get<int64_t>();
    if (kw.contains("temperature")) {
      if (kw["temperature"].is_array()) {
        o.temperatures = at::tensor(kw["temperature"].get<std::vector<float>>());
      } else {
        o.temperature = kw["temperature"].get<double>();
      }
    }
    at::Generator gen = compat::MakeCpuGenerator(0);
    result = TemperatureSample(inputs, cache, fn, eos_id, o, &gen);
  } else {
    BeamSearchOptions o;
    o.initial_index = initial_index;
    if (kw.contains("num_decodes")) o.num_decodes = kw["num_decodes"].get<int64_t>();
    if (kw.contains("alpha")) o.alpha = kw["alpha"].get<double>();
    if (kw.contains("max_decode_len")) o.max_decode_len = kw["max_decode_len"].get<int64_t>();
    if (kw.contains("max_decode_step")) o.max_decode_step = kw["max_decode_step"].get<int64_t>();
    if (kw.contains("min_log_prob")) o.min_log_prob = kw["min_log_prob"].get<double>();
    result = BeamSearch(inputs, cache, fn, eos_id, o);
  }

  std::vector<int64_t> want_seqs;
  for (const auto& example : c["expected_sequences"]) {
    for (const auto& row : example) {
      for (const auto& v : row) want_seqs.push_back(v.get<int64_t>());
    }
  }
  const json& want_scores = c["expected_scores"];
  const int64_t batch = static_cast<int64_t>(want_scores.size());
  const int64_t n = static_cast<int64_t>(want_scores[0].size());
  at::Tensor want = at::tensor(want_seqs, at::kLong).view({batch, n, -1});
  ASSERT_EQ(result.sequences.sizes(), want.sizes());
  EXPECT_TRUE(result.sequences.equal(want)) << "got\n" << result.sequences << "\nwant\n" << want;
  ASSERT_EQ(result.scores.sizes(), (std::vector<int64_t>{batch, n}));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < n; ++j) {
      const double want_score = want_scores[b][j].get<double>();
      EXPECT_NEAR(result.scores[b][j].item<double>(), want_score,
                  1e-5 * std::max(1.0, std::abs(want_score)))
          << "example " << b << " decode " << j;
    }
  }
  EXPECT_EQ(model.calls, c["expected_calls"].get<int>());
}

TEST(DecodingGoldens, MatchT5x) {
  ASSERT_GT(Goldens()["cases"].size(), 0u);
  for (const auto& c : Goldens()["cases"]) RunCase(c);
}

}  // namespace
}  // namespace t5xx::decoding
