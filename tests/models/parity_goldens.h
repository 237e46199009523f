// Reading the t5x golden files (tests/testdata/parity*/*.json, format in
// tests/testdata/parity/README.md) for parity_test.cc and bf16_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/models/base_model.h"
#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/param_store.h"
#include "t5xx/models/networks/t5_config.h"

namespace t5xx::models::goldens {

using json = nlohmann::json;

// tests/testdata/<dir>/<name>, parsed.
inline json Load(const std::string& dir, const std::string& name) {
  const std::string path = std::string(T5XX_SOURCE_DIR) + "/tests/testdata/" + dir + "/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

// {"shape": [...], "data": [...]} as float32 / int64 tensors.
inline at::Tensor FloatTensor(const json& j) {
  std::vector<float> data = j.at("data").get<std::vector<float>>();
  return at::tensor(data, at::kFloat).reshape(j.at("shape").get<std::vector<int64_t>>());
}
inline at::Tensor IntTensor(const json& j) {
  std::vector<int64_t> data = j.at("data").get<std::vector<int64_t>>();
  return at::tensor(data, at::kLong).reshape(j.at("shape").get<std::vector<int64_t>>());
}

// Copies t5x's parameter values into `params` after checking that both hold
// exactly the same names and shapes (gtest failures otherwise).
inline void LoadParams(const json& golden, ParamStore& params) {
  std::set<std::string> ours, theirs;
  for (const auto& p : params.params()) ours.insert(p.name);
  for (auto it = golden.begin(); it != golden.end(); ++it) theirs.insert(it.key());
  ASSERT_EQ(ours, theirs);
  for (auto& p : params.params()) {
    at::Tensor v = FloatTensor(golden.at(p.name));
    ASSERT_EQ(p.value.sizes(), v.sizes()) << p.name;
    p.value = v.clone().set_requires_grad(true);
  }
}

// A case's "batch": int64 features, float32 decoder_loss_weights.
inline FeatureBatch Batch(const json& j) {
  FeatureBatch b;
  for (auto it = j.begin(); it != j.end(); ++it) {
    b[it.key()] = it.key() == "decoder_loss_weights" ? IntTensor(it.value()).to(at::kFloat)
                                                      : IntTensor(it.value());
  }
  return b;
}

// The same with every feature on `device` (test_device.h's TestDevice()).
inline FeatureBatch Batch(const json& j, at::Device device) {
  FeatureBatch b = Batch(j);
  for (auto& [name, t] : b) t = t.to(device);
  return b;
}

// `params`, loaded on the CPU, moved to `device` as trainable leaves
// (ParamStore::To copies values only). Nothing changes on the CPU.
inline void ParamsTo(ParamStore& params, at::Device device, bool requires_grad = true) {
  if (device.is_cpu()) return;
  params.To(device);
  params.SetRequiresGrad(requires_grad);
}

// The network configs of a golden file's "config".
inline T5Config EncDecConfig(const json& cfg) {
  T5Config c;
  c.vocab_size = cfg.at("vocab_size");
  c.emb_dim = cfg.at("emb_dim");
  c.num_heads = cfg.at("num_heads");
  c.num_encoder_layers = cfg.at("num_encoder_layers");
  c.num_decoder_layers = cfg.at("num_decoder_layers");
  c.head_dim = cfg.at("head_dim");
  c.mlp_dim = cfg.at("mlp_dim");
  c.mlp_activations = cfg.at("mlp_activations").get<std::vector<std::string>>();
  c.dropout_rate = cfg.at("dropout_rate");
  c.logits_via_embedding = cfg.at("logits_via_embedding");
  // t5x's scalable_t5 network (its config has scan_layers): a relative
  // position table per layer.
  c.relpos_per_layer = cfg.contains("scan_layers");
  return c;
}
inline DecoderOnlyConfig DecoderOnlyConfigOf(const json& cfg) {
  DecoderOnlyConfig c;
  c.vocab_size = cfg.at("vocab_size");
  c.emb_dim = cfg.at("emb_dim");
  c.num_heads = cfg.at("num_heads");
  c.num_layers = cfg.at("num_layers");
  c.head_dim = cfg.at("head_dim");
  c.mlp_dim = cfg.at("mlp_dim");
  c.mlp_activations = cfg.at("mlp_activations").get<std::vector<std::string>>();
  c.dropout_rate = cfg.at("dropout_rate");
  c.logits_via_embedding = cfg.at("logits_via_embedding");
  return c;
}

}  // namespace t5xx::models::goldens
