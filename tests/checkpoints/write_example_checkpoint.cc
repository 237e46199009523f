// Writes a small t5xx checkpoint plus expected.json (what each array must
// contain) for the Python cross-check (read_checkpoint.py).
//
//   write_example_checkpoint MODEL_DIR   -> prints MODEL_DIR/checkpoint_<step>
//   write_example_checkpoint --verify CKPT_DIR
//       loads CKPT_DIR (e.g. written by read_checkpoint.py with TensorStore or
//       zarr-python) and checks it against CKPT_DIR/../expected.json.
//
// Values are exactly representable in their dtype so Python can recompute
// them bit-exactly from (seed, flat index):
//   float32:  seed + 0.25 * (i % 64)
//   bfloat16: seed + 0.5 * (i % 8)        (|value| < 128: exact in bf16)
//   int32/64: seed * 1000 + i - 50
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/util/error.h"

namespace ck = t5xx::checkpoints;

namespace {

struct Spec {
  std::string path;
  ck::DType dtype;
  std::vector<int64_t> shape;
  int seed;
  bool store_inline = false;
};

std::vector<uint8_t> Values(const Spec& s) {
  int64_t n = 1;
  for (int64_t d : s.shape) n *= d;
  std::vector<uint8_t> out(n * ck::DTypeSize(s.dtype));
  for (int64_t i = 0; i < n; ++i) {
    switch (s.dtype) {
      case ck::DType::kFloat32: {
        float v = static_cast<float>(s.seed) + 0.25f * static_cast<float>(i % 64);
        std::memcpy(out.data() + 4 * i, &v, 4);
        break;
      }
      case ck::DType::kBFloat16: {
        float v = static_cast<float>(s.seed) + 0.5f * static_cast<float>(i % 8);
        uint32_t u;
        std::memcpy(&u, &v, 4);
        uint16_t h = static_cast<uint16_t>(u >> 16);  // exact: low bits zero
        std::memcpy(out.data() + 2 * i, &h, 2);
        break;
      }
      case ck::DType::kInt32: {
        int32_t v = static_cast<int32_t>(s.seed * 1000 + i - 50);
        std::memcpy(out.data() + 4 * i, &v, 4);
        break;
      }
      case ck::DType::kInt64: {
        int64_t v = static_cast<int64_t>(s.seed) * 1000 + i - 50;
        std::memcpy(out.data() + 8 * i, &v, 8);
        break;
      }
    }
  }
  return out;
}

ck::DType DTypeFromName(const std::string& name) {
  for (ck::DType d : {ck::DType::kFloat32, ck::DType::kBFloat16,
                      ck::DType::kInt32, ck::DType::kInt64}) {
    if (name == ck::DTypeName(d)) return d;
  }
  throw t5xx::Error("unknown dtype " + name);
}

int Verify(const std::string& ckpt_dir) {
  namespace fs = std::filesystem;
  std::ifstream f(fs::path(ckpt_dir).parent_path() / "expected.json");
  const nlohmann::json expected = nlohmann::json::parse(f);
  const ck::LoadedCheckpoint loaded = ck::LoadCheckpoint(ckpt_dir);
  int failures = 0;
  auto fail = [&](const std::string& msg) {
    std::cerr << "FAIL: " << msg << "\n";
    ++failures;
  };
  if (loaded.version != 3) fail("version");
  if (loaded.step != expected["step"].get<int64_t>()) fail("step");
  if (loaded.arrays.size() != expected["arrays"].size()) fail("array count");
  for (const auto& e : expected["arrays"]) {
    Spec s{e["path"], DTypeFromName(e["dtype"]),
           e["shape"].get<std::vector<int64_t>>(), e["seed"].get<int>()};
    auto it = loaded.arrays.find(s.path);
    if (it == loaded.arrays.end()) {
      fail(s.path + ": missing");
      continue;
    }
    if (it->second.dtype != s.dtype) fail(s.path + ": dtype");
    if (it->second.shape != s.shape) fail(s.path + ": shape");
    if (it->second.bytes != Values(s)) fail(s.path + ": values");
  }
  std::cout << "C++ read " << loaded.arrays.size() << " arrays from "
            << ckpt_dir << (failures ? ": FAILED" : ": OK") << "\n";
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--verify") {
    try {
      return Verify(argv[2]);
    } catch (const std::exception& e) {
      std::cerr << "t5xx: error: " << e.what() << "\n";
      return 1;
    }
  }
  if (argc != 2) {
    std::cerr << "usage: write_example_checkpoint MODEL_DIR | --verify DIR\n";
    return 2;
  }
  const std::string model_dir = argv[1];
  const int64_t step = 1234;
  const std::vector<Spec> specs = {
      {"target.encoder.layers_0.attention.query.kernel", ck::DType::kFloat32,
       {8, 6}, 1},
      {"target.encoder.layers_0.mlp.wi.kernel", ck::DType::kFloat32,
       {16, 12, 4}, 2},  // multi-chunk under max_chunk_bytes below
      {"target.token_embedder.embedding", ck::DType::kBFloat16, {10, 8}, -3},
      {"target.decoder.relpos_bias.rel_embedding", ck::DType::kFloat32, {4}, 5},
      {"target.decoder.scale", ck::DType::kFloat32, {}, 7},
      {"target.decoder.ids", ck::DType::kInt32, {3, 2}, -2},
      {"target.decoder.big_ids", ck::DType::kInt64, {5}, 9},
      {"state.param_states.encoder.layers_0.attention.query.kernel.v_row",
       ck::DType::kFloat32, {8}, 3},
      {"state.param_states.encoder.layers_0.attention.query.kernel.v_col",
       ck::DType::kFloat32, {6}, 4},
      {"state.param_states.encoder.layers_0.attention.query.kernel.v",
       ck::DType::kFloat32, {1}, 0},
      {"state.param_states.token_embedder.embedding.v",
       ck::DType::kBFloat16, {10, 8}, 2},
      {"flax_mutables.counter", ck::DType::kInt32, {2}, 1, true},
  };
  try {
    std::vector<std::vector<uint8_t>> buffers;
    std::vector<ck::ArrayRef> refs;
    buffers.reserve(specs.size());
    nlohmann::json expected = nlohmann::json::array();
    for (const Spec& s : specs) {
      buffers.push_back(Values(s));
      refs.push_back({s.path, s.dtype, s.shape, buffers.back().data(),
                      s.store_inline});
      expected.push_back({{"path", s.path},
                          {"dtype", ck::DTypeName(s.dtype)},
                          {"shape", s.shape},
                          {"seed", s.seed},
                          {"inline", s.store_inline}});
    }
    std::filesystem::remove_all(model_dir);
    ck::SaveOptions options;
    options.max_chunk_bytes = 1024;  // forces several chunks for wi.kernel
    const std::string dir = ck::SaveCheckpoint(model_dir, step, refs, options);
    std::ofstream(std::filesystem::path(model_dir) / "expected.json")
        << nlohmann::json({{"step", step}, {"arrays", expected}}).dump(1);
    std::cout << dir << "\n";
  } catch (const t5xx::Error& e) {
    std::cerr << "t5xx: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
