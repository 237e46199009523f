// scanned_layers.h against t5x's own arrays: the scalable_t5 parity golden
// (tests/models/parity/make_goldens.py) holds t5x's scanned parameters
// ("params_scanned", as its checkpoints store them, param_scan_axis 1) and
// the same values per layer ("params", unstacked by the generator with numpy).
#include "t5xx/checkpoints/t5x/scanned_layers.h"

#include "t5xx/checkpoints/t5x/checkpoints.h"

#include <cstring>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace t5xx::checkpoints {
namespace {

std::map<std::string, LoadedArray> Arrays(const nlohmann::json& j) {
  std::map<std::string, LoadedArray> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    LoadedArray a;
    a.dtype = DType::kFloat32;
    a.shape = it.value().at("shape").get<std::vector<int64_t>>();
    const auto data = it.value().at("data").get<std::vector<float>>();
    a.bytes.resize(data.size() * 4);
    std::memcpy(a.bytes.data(), data.data(), a.bytes.size());
    out[it.key()] = std::move(a);
  }
  return out;
}

void ExpectSame(const std::map<std::string, LoadedArray>& a,
                const std::map<std::string, LoadedArray>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, x] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_EQ(x.shape, b.at(name).shape) << name;
    EXPECT_TRUE(x.bytes == b.at(name).bytes) << name;
  }
}

TEST(ScannedLayersTest, StacksAndUnstacksAsT5xDoes) {
  std::ifstream in(std::string(T5XX_SOURCE_DIR) +
                   "/tests/testdata/parity/encoder_decoder_scalable_t5.json");
  const nlohmann::json g = nlohmann::json::parse(in);
  const auto per_layer = Arrays(g.at("params"));
  const auto scanned = Arrays(g.at("params_scanned"));
  const ScanLayout layout{2, 1};  // the golden's 2 heads, t5x's default axis
  ExpectSame(StackLayers(per_layer, layout), scanned);
  ExpectSame(UnstackLayers(scanned, layout), per_layer);
  EXPECT_EQ(scanned.at("encoder.encoder.attention.out.kernel").shape,
            (std::vector<int64_t>{2, 2, 8, 16}));  // [heads, layers, kv, embed]
  // param_scan_axis 0 ([layers, ...]) round-trips too.
  const ScanLayout first{2, 0};
  const auto stacked0 = StackLayers(per_layer, first);
  EXPECT_EQ(stacked0.at("decoder.decoder.mlp.wo.kernel").shape,
            (std::vector<int64_t>{3, 32, 16}));
  ExpectSame(UnstackLayers(stacked0, first), per_layer);
}

// A per-layer checkpoint to scanned and back: t5x's arrays, then the
// original bytes; optimizer state outside the stacks passes through.
TEST(ScannedLayersTest, ConvertsCheckpointsBothWays) {
  t5xx::testing::TempDir dir;
  std::ifstream in(std::string(T5XX_SOURCE_DIR) +
                   "/tests/testdata/parity/encoder_decoder_scalable_t5.json");
  const nlohmann::json g = nlohmann::json::parse(in);
  const auto per_layer = Arrays(g.at("params"));
  std::vector<ArrayRef> refs;
  for (const auto& [name, a] : per_layer) {
    refs.push_back({"target." + name, a.dtype, a.shape, a.bytes.data()});
  }
  const float v[3] = {1, 2, 3};
  refs.push_back({"state.param_states.encoder.encoder_norm.scale.v", DType::kFloat32, {3}, v});
  SaveCheckpoint(dir.path + "/a", 7, refs);
  const ScanConversion s =
      ConvertScanLayout(dir.path + "/a/checkpoint_7", dir.path + "/b", true, 1);
  EXPECT_EQ(s.step, 7);
  EXPECT_EQ(s.state_arrays, 1);
  EXPECT_EQ(s.arrays_in, static_cast<int64_t>(per_layer.size()));
  CheckpointReader scanned(s.checkpoint_dir);
  std::map<std::string, LoadedArray> got;
  for (const auto& [path, e] : scanned.arrays()) {
    if (path.rfind("target.", 0) == 0) got[path.substr(7)] = scanned.Read(path);
  }
  EXPECT_EQ(scanned.Read("state.param_states.encoder.encoder_norm.scale.v").shape,
            (std::vector<int64_t>{3}));
  ExpectSame(got, Arrays(g.at("params_scanned")));
  const ScanConversion back =
      ConvertScanLayout(s.checkpoint_dir, dir.path + "/c", false, 1);
  CheckpointReader again(back.checkpoint_dir);
  got.clear();
  for (const auto& [path, e] : again.arrays()) {
    if (path.rfind("target.", 0) == 0) got[path.substr(7)] = again.Read(path);
  }
  ExpectSame(got, per_layer);
  EXPECT_ERROR_CONTAINS(ConvertScanLayout(s.checkpoint_dir, dir.path + "/d", true, 1),
                        "is already scanned; nothing to convert");
  // Unstacking on another axis than the one stacked on is refused.
  EXPECT_ERROR_CONTAINS(ConvertScanLayout(s.checkpoint_dir, dir.path + "/d", false, 0),
                        "the checkpoint was stacked on another axis");
  EXPECT_ERROR_CONTAINS(ConvertScanLayout(s.checkpoint_dir, s.checkpoint_dir + "/x", false, 1),
                        "is inside the checkpoint being converted");
  SaveCheckpoint(dir.path + "/e", 1, {{"target.encoder.relpos_bias.rel_embedding", DType::kFloat32, {3}, v}});
  EXPECT_ERROR_CONTAINS(ConvertScanLayout(dir.path + "/e/checkpoint_1", dir.path + "/f", true, 1),
                        "not a checkpoint of t5x's scalable_t5 network");
}

TEST(ScannedLayersTest, BadLayoutsAreNamed) {
  LoadedArray a{DType::kFloat32, {4, 6}, std::vector<uint8_t>(96)};
  EXPECT_ERROR_CONTAINS(StackLayers({{"encoder.layers_0.mlp.wo.kernel", a},
                                     {"encoder.layers_2.mlp.wo.kernel", a}}, {2, 1}),
                        "encoder.encoder.mlp.wo.kernel: the layers are not 0..1");
  LoadedArray b{DType::kFloat32, {4, 5}, std::vector<uint8_t>(80)};
  EXPECT_ERROR_CONTAINS(StackLayers({{"encoder.layers_0.mlp.wo.kernel", a},
                                     {"encoder.layers_1.mlp.wo.kernel", b}}, {2, 1}),
                        "layer 1 is [4, 5] float32, layer 0 [4, 6] float32");
  EXPECT_ERROR_CONTAINS(StackLayers({{"decoder.layers_0.self_attention.query.kernel", a}}, {4, 1}),
                        "heads*kv = 6 is not a multiple of num_heads = 4");
  EXPECT_ERROR_CONTAINS(StackLayers({{"encoder.layers_0.mlp.wo.kernel", a}}, {2, 3}),
                        "param_scan_axis = 3 is outside a rank-2 parameter");
  EXPECT_ERROR_CONTAINS(UnstackLayers({{"encoder.encoder.attention.query.kernel", a}}, {2, 1}),
                        "a stacked attention kernel is 4-D");
  // Arrays outside the stacks pass through.
  const auto same = StackLayers({{"token_embedder.embedding", a}}, {2, 1});
  EXPECT_EQ(same.at("token_embedder.embedding").shape, a.shape);
}

}  // namespace
}  // namespace t5xx::checkpoints
