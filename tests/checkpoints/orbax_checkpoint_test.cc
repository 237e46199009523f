// Orbax checkpoints at the checkpoints layer: t5xx writes them
// (SaveOptions::format = kOrbax, one process and four writing the boxes of
// one array) and reads them back bit for bit, slices included; the layout
// is Orbax's (state/manifest.ocdbt, state/ocdbt.process_<i>/, _METADATA).
// A checkpoint written by t5x itself through Orbax reads equal to the same
// train state saved by t5x's legacy checkpointer (tests/testdata/
// t5x_orbax_checkpoint and t5x_checkpoint: make_t5x_orbax_checkpoint.py).
// That Orbax itself restores t5xx's: tests/interop/ (orbax_restore_check.py).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/checkpoints/orbax/ocdbt_reader.h"
#include "t5xx/checkpoints/orbax/ocdbt_writer.h"
#include "t5xx/checkpoints/orbax/orbax_checkpoint.h"
#include "t5xx/util/error.h"
#include "test_util.h"

namespace t5xx::checkpoints {
namespace {

namespace fs = std::filesystem;

SaveOptions Orbax(int64_t max_chunk_bytes = 64LL << 20) {
  SaveOptions o;
  o.format = CheckpointFormat::kOrbax;
  o.max_chunk_bytes = max_chunk_bytes;
  return o;
}

TEST(OrbaxCheckpoint, SavesAndReadsBackEveryArray) {
  const testing::TempDir model_dir;
  std::vector<float> big(3000);  // 12,000 bytes: out of line, in 4 chunks
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.25f - 7.f;
  const uint16_t bf16[3] = {0x3f80, 0xc000, 0x4049};  // 1, -2, 3.140625
  const int32_t slots[2] = {5, -6};
  const std::vector<ArrayRef> arrays = {
      {"target.decoder.logits_dense.kernel", DType::kFloat32, {30, 100}, big.data()},
      {"target.encoder.scale", DType::kBFloat16, {3}, bf16},
      {"state.param_states.encoder.scale.v", DType::kInt32, {2}, slots, true}};
  const std::string dir =
      SaveCheckpoint(model_dir.path, 70000, arrays, Orbax(4800), {{"t5xx_extra.json", "{}"}});
  EXPECT_TRUE(IsOrbaxCheckpoint(dir));
  EXPECT_TRUE(IsCheckpointDir(dir));
  EXPECT_FALSE(fs::exists(fs::path(dir) / "checkpoint"));
  for (const char* f : {"_CHECKPOINT_METADATA", "state/_METADATA", "state/manifest.ocdbt",
                        "state/ocdbt.process_0/manifest.ocdbt"}) {
    EXPECT_TRUE(fs::is_regular_file(fs::path(dir) / f)) << f;
  }
  CheckpointReader reader(dir);
  EXPECT_EQ(reader.step(), 70000);
  ASSERT_EQ(reader.arrays().size(), 3u);
  EXPECT_EQ(reader.arrays().at("target.decoder.logits_dense.kernel").zarr->chunks,
            (std::vector<int64_t>{30, 25}));  // t5x's rule: the largest dimension shrinks
  const LoadedArray k = reader.Read("target.decoder.logits_dense.kernel");
  ASSERT_EQ(k.bytes.size(), big.size() * 4);
  EXPECT_EQ(std::memcmp(k.bytes.data(), big.data(), k.bytes.size()), 0);
  const LoadedArray part = reader.Read("target.decoder.logits_dense.kernel", Box{{9, 98}, {2, 2}});
  const float want[4] = {big[998], big[999], big[1098], big[1099]};
  EXPECT_EQ(std::memcmp(part.bytes.data(), want, 16), 0);
  EXPECT_EQ(std::memcmp(reader.Read("target.encoder.scale").bytes.data(), bf16, 6), 0);
  EXPECT_EQ(std::memcmp(reader.Read("state.param_states.encoder.scale.v").bytes.data(), slots, 8),
            0);
  EXPECT_EQ(reader.ReadExtraFile("t5xx_extra.json").value_or(""), "{}");
  // The tree metadata names every leaf as Orbax does, state.step included.
  std::ifstream meta(fs::path(dir) / "state/_METADATA");
  const nlohmann::json m = nlohmann::json::parse(meta);
  EXPECT_EQ(m.at("tree_metadata").size(), 4u);
  EXPECT_EQ(m.at("tree_metadata")
                .at("('target', 'encoder', 'scale')")
                .at("value_metadata")
                .at("value_type"),
            "np.ndarray");
  EXPECT_FALSE(m.at("use_zarr3").get<bool>());
}

TEST(OrbaxCheckpoint, FourWritersOfTheBoxesOfOneArrayMakeOneCheckpoint) {
  const testing::TempDir model_dir;
  const std::string tmp = BeginShardedSave(model_dir.path, 3, 99);
  std::vector<float> g(24);
  for (int i = 0; i < 24; ++i) g[i] = static_cast<float>(i) * 1.5f;
  std::vector<std::vector<float>> boxes(4);
  for (int p = 0; p < 4; ++p) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) boxes[p].push_back(g[(2 * (p / 2) + i) * 6 + 3 * (p % 2) + j]);
    }
  }
  std::vector<std::string> errors(4);
  std::vector<std::thread> writers;
  for (int p = 0; p < 4; ++p) {
    writers.emplace_back([&, p] {
      ArrayRef w{"target.w", DType::kFloat32, {4, 6}, boxes[p].data()};
      w.box = Box{{2 * (p / 2), 3 * (p % 2)}, {2, 3}};
      try {
        SaveCheckpoint(model_dir.path, 3, {w}, Orbax(8), {}, ShardedSave{p, 4, tmp, 60});
      } catch (const Error& e) {
        errors[p] = e.what();
      }
    });
  }
  for (auto& t : writers) t.join();
  for (int p = 0; p < 4; ++p) EXPECT_EQ(errors[p], "") << p;
  const fs::path dir = CheckpointDir(model_dir.path, 3);
  for (int p = 0; p < 4; ++p) {
    EXPECT_TRUE(fs::exists(dir / ("state/ocdbt.process_" + std::to_string(p)))) << p;
  }
  CheckpointReader reader(dir.string());
  EXPECT_EQ(reader.step(), 3);
  const LoadedArray w = reader.Read("target.w");
  ASSERT_EQ(w.bytes.size(), 96u);
  EXPECT_EQ(std::memcmp(w.bytes.data(), g.data(), 96), 0);
}

// What t5xx wrote is checked as its legacy layout is: every chunk value
// against the checksums sidecar (Orbax keeps no checksum of values), and
// what makes a checkpoint unreadable is named.
TEST(OrbaxCheckpoint, NamesDamageToACheckpointT5xxWrote) {
  const testing::TempDir model_dir;
  std::vector<float> big(3000);  // incompressible enough to be stored out of line
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i * i % 977) * 0.37f;
  const std::string dir = SaveCheckpoint(
      model_dir.path, 2, {{"target.big", DType::kFloat32, {3000}, big.data()}}, Orbax());
  const fs::path state = fs::path(dir) / "state";
  const OcdbtReader db(state);
  const OcdbtValue& v = db.entries().at("target.big/0");
  ASSERT_FALSE(v.is_inline);
  const fs::path file = state / v.file;
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string flipped = bytes;
  flipped[v.offset + v.length / 2] ^= 0x10;
  std::ofstream(file, std::ios::binary | std::ios::trunc) << flipped;
  CheckpointReader reader(dir);
  EXPECT_ERROR_CONTAINS(reader.Read("target.big"), "is corrupted");
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_EQ(CheckpointReader(dir).Read("target.big").bytes.size(), 12000u);
  // A FIFO in place of the data file: refused at once, not waited on.
  fs::rename(file, file.string() + ".moved");
  ASSERT_EQ(::mkfifo(file.c_str(), 0644), 0);
  EXPECT_ERROR_CONTAINS(CheckpointReader(dir).Read("target.big"), "not a regular file");
  fs::remove(file);
  fs::rename(file.string() + ".moved", file);
  fs::rename(state / "_METADATA", state / "_METADATA.moved");
  EXPECT_ERROR_CONTAINS(CheckpointReader{dir}, "_METADATA is missing");
  fs::remove_all(state);
  EXPECT_ERROR_CONTAINS(CheckpointReader{dir},
                        "it has neither t5x's legacy index (" + dir + "/checkpoint) nor Orbax's");
}

// The same train state, saved by t5x through Orbax and by t5x's legacy
// checkpointer: every array equal, bit for bit, and the same step.
TEST(OrbaxCheckpoint, ReadsWhatT5xWroteThroughOrbax) {
  const fs::path data = fs::path(T5XX_SOURCE_DIR) / "tests/testdata";
  CheckpointReader orbax((data / "t5x_orbax_checkpoint/checkpoint_2").string());
  CheckpointReader legacy((data / "t5x_checkpoint/checkpoint_2").string());
  EXPECT_EQ(orbax.step(), 2);
  EXPECT_EQ(orbax.step(), legacy.step());
  ASSERT_EQ(orbax.arrays().size(), legacy.arrays().size());
  for (const auto& [path, entry] : legacy.arrays()) {
    ASSERT_TRUE(orbax.arrays().count(path)) << path;
    const LoadedArray a = orbax.Read(path);
    const LoadedArray b = legacy.Read(path);
    EXPECT_EQ(a.dtype, b.dtype) << path;
    EXPECT_EQ(a.shape, b.shape) << path;
    EXPECT_TRUE(a.bytes == b.bytes) << path;
  }
}

// Orbax's zarr v3 layout (use_zarr3 = True), written by orbax itself, and an
// array whose shards hold several inner chunks, one never written, written
// by TensorStore (tests/testdata/orbax_zarr3, make_orbax_zarr3_testdata.py).
TEST(OrbaxCheckpoint, ReadsZarrV3ShardedArrays) {
  const fs::path data = fs::path(T5XX_SOURCE_DIR) / "tests/testdata/orbax_zarr3";
  std::ifstream in(data / "expected.json");
  const nlohmann::json e = nlohmann::json::parse(in);
  CheckpointReader reader((data / "checkpoint_3").string());
  EXPECT_EQ(reader.step(), e.at("step").get<int64_t>());
  ASSERT_EQ(reader.arrays().size(), e.at("arrays").size());
  for (const auto& [name, want] : e.at("arrays").items()) {
    const LoadedArray a = reader.Read(name);
    EXPECT_EQ(DTypeName(a.dtype), want.at("dtype").get<std::string>()) << name;
    EXPECT_EQ(a.shape, want.at("shape").get<std::vector<int64_t>>()) << name;
    const std::vector<double> values = want.at("values").get<std::vector<double>>();
    ASSERT_EQ(static_cast<size_t>(NumElements(a.shape)), values.size()) << name;
    for (size_t i = 0; i < values.size(); ++i) {
      double v = 0;
      if (a.dtype == DType::kFloat32) {
        float f;
        std::memcpy(&f, a.bytes.data() + 4 * i, 4);
        v = f;
      } else if (a.dtype == DType::kBFloat16) {
        const uint32_t u = uint32_t{a.bytes[2 * i]} << 16 | uint32_t{a.bytes[2 * i + 1]} << 24;
        float f;
        std::memcpy(&f, &u, 4);
        v = f;
      } else {
        int32_t x;
        std::memcpy(&x, a.bytes.data() + 4 * i, 4);
        v = x;
      }
      EXPECT_EQ(v, values[i]) << name << "[" << i << "]";
    }
  }
  // A box across two shards of the sharded (2x2 mesh) array.
  const LoadedArray part = reader.Read("target.w", Box{{1, 3}, {2, 2}});
  const float want[4] = {0.5f * 11 - 3, 0.5f * 12 - 3, 0.5f * 19 - 3, 0.5f * 20 - 3};
  EXPECT_EQ(std::memcmp(part.bytes.data(), want, 16), 0);
}

// Hand-made Orbax checkpoints with what t5xx does not read: one error naming
// the key and what is supported.
TEST(OrbaxCheckpoint, RefusesUnsupportedCodecsAndDtypesNamingTheKey) {
  const testing::TempDir tmp;
  auto write = [&](const std::string& key, const std::string& value) {
    const fs::path dir = fs::path(tmp.path) / "checkpoint_1";
    fs::remove_all(dir);
    OcdbtWriter db(dir / "state");
    db.Put(key, value.data(), value.size());
    db.Finish();
    return dir.string();
  };
  const std::string v2 =
      R"({"chunks":[2],"compressor":COMP,"dimension_separator":".","dtype":"DT","fill_value":null,)"
      R"("filters":null,"order":"C","shape":[2],"zarr_format":2})";
  auto zarray = [&](const std::string& comp, const std::string& dt) {
    std::string s = v2;
    s.replace(s.find("COMP"), 4, comp);
    s.replace(s.find("DT"), 2, dt);
    return s;
  };
  EXPECT_ERROR_CONTAINS(
      CheckpointReader(write("target.w/.zarray", zarray(R"({"id":"blosc"})", "<f4"))),
      "(OCDBT key 'target.w/.zarray'): compressor 'blosc' is not supported (only null, gzip, "
      "zlib, zstd)");
  EXPECT_ERROR_CONTAINS(CheckpointReader(write("target.w/.zarray", zarray("null", "<f2"))),
                        "(OCDBT key 'target.w/.zarray'): unsupported dtype '<f2'");
  const std::string v3 =
      R"({"chunk_grid":{"configuration":{"chunk_shape":[2]},"name":"regular"},)"
      R"("chunk_key_encoding":{"name":"default"},"codecs":[{"configuration":{"endian":"little"},)"
      R"("name":"bytes"},{"name":"blosc"}],"data_type":"float32","fill_value":0.0,)"
      R"("node_type":"array","shape":[2],"zarr_format":3})";
  EXPECT_ERROR_CONTAINS(CheckpointReader(write("target.w/zarr.json", v3)),
                        "(OCDBT key 'target.w/zarr.json'): codec 'blosc' in the array's chunks "
                        "is not supported");
  EXPECT_ERROR_CONTAINS(CheckpointReader(write("target.w/0.0", "x")),
                        "chunks of an array 'target.w' without its metadata");
}

}  // namespace
}  // namespace t5xx::checkpoints
