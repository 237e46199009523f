// Tests for the t5x legacy checkpoint layout (msgpack index + zarr v2).
#include "t5xx/checkpoints/t5x/checkpoints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <msgpack.hpp>
#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class CheckpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("t5xx_ckpt_" + std::string(info->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::vector<uint8_t> ReadAll(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(f.good()) << p;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void WriteAll(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << s;
}

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> Floats(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + 0.25f * static_cast<float>(i) -
                                        static_cast<float>(i % 7);
  return v;
}

uint16_t ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

const msgpack::object& Get(const msgpack::object& map, const std::string& key) {
  EXPECT_EQ(map.type, msgpack::type::MAP) << "looking up " << key;
  for (uint32_t i = 0; i < map.via.map.size; ++i) {
    if (map.via.map.ptr[i].key.as<std::string>() == key) {
      return map.via.map.ptr[i].val;
    }
  }
  ADD_FAILURE() << "missing key " << key;
  static msgpack::object nil;
  return nil;
}

bool Has(const msgpack::object& map, const std::string& key) {
  for (uint32_t i = 0; i < map.via.map.size; ++i) {
    if (map.via.map.ptr[i].key.as<std::string>() == key) return true;
  }
  return false;
}

// A small model-like set of arrays (rank 0-3, all dtypes, nested paths).
struct Fixture {
  std::vector<float> kernel = Floats(4 * 6, 1.0f);             // [4,6] f32
  std::vector<float> cube = Floats(2 * 3 * 5, -2.0f);          // [2,3,5] f32
  std::vector<uint16_t> bf;                                    // [3,4] bf16
  std::vector<int32_t> ints = {-5, 0, 7, 2147483647, -2147483647 - 1};  // [5]
  std::vector<float> scalar = {3.5f};                          // [] f32
  std::vector<int64_t> i64 = {1LL << 40, -3};                  // [2] i64
  std::vector<float> v_row = Floats(4, 0.5f);                  // [4]
  std::vector<int32_t> inline_i = {11, 12, 13};                // inline [3]
  Fixture() {
    for (int i = 0; i < 12; ++i) bf.push_back(ToBf16(0.5f * i - 2.0f));
  }
  std::vector<ArrayRef> Refs() const {
    return {
        {"target.encoder.layers_0.attention.query.kernel", DType::kFloat32,
         {4, 6}, kernel.data()},
        {"target.decoder.cube", DType::kFloat32, {2, 3, 5}, cube.data()},
        {"target.token_embedder.embedding", DType::kBFloat16, {3, 4},
         bf.data()},
        {"target.ints", DType::kInt32, {5}, ints.data()},
        {"target.scalar", DType::kFloat32, {}, scalar.data()},
        {"target.i64", DType::kInt64, {2}, i64.data()},
        {"state.param_states.encoder.layers_0.attention.query.kernel.v_row",
         DType::kFloat32, {4}, v_row.data()},
        {"flax_mutables.counter", DType::kInt32, {3}, inline_i.data(), true},
    };
  }
};

TEST_F(CheckpointsTest, RoundTripAllDTypesAndRanks) {
  Fixture fx;
  for (bool gzip : {true, false}) {
    SaveOptions opt;
    opt.gzip = gzip;
    const fs::path model_dir = dir_ / (gzip ? "gz" : "raw");
    const std::string out = SaveCheckpoint(model_dir, 42, fx.Refs(), opt);
    EXPECT_EQ(fs::path(out), model_dir / "checkpoint_42");
    LoadedCheckpoint ck = LoadCheckpoint(out);
    EXPECT_EQ(ck.step, 42);
    EXPECT_EQ(ck.version, 3);
    ASSERT_EQ(ck.arrays.size(), fx.Refs().size());
    for (const ArrayRef& r : fx.Refs()) {
      SCOPED_TRACE(r.path);
      ASSERT_EQ(ck.arrays.count(r.path), 1u);
      const LoadedArray& a = ck.arrays.at(r.path);
      EXPECT_EQ(a.dtype, r.dtype);
      EXPECT_EQ(a.shape, r.shape);
      int64_t n = 1;
      for (int64_t d : r.shape) n *= d;
      ASSERT_EQ(a.bytes.size(), n * DTypeSize(r.dtype));
      EXPECT_EQ(std::memcmp(a.bytes.data(), r.data, a.bytes.size()), 0);
    }
  }
}

TEST_F(CheckpointsTest, MsgpackIndexStructure) {
  Fixture fx;
  const std::string out = SaveCheckpoint(dir_, 7, fx.Refs());
  std::vector<uint8_t> raw = ReadAll(fs::path(out) / "checkpoint");
  msgpack::object_handle h =
      msgpack::unpack(reinterpret_cast<const char*>(raw.data()), raw.size());
  const msgpack::object& top = h.get();
  ASSERT_EQ(top.type, msgpack::type::MAP);
  EXPECT_EQ(top.via.map.size, 2u);
  EXPECT_EQ(Get(top, "version").as<int>(), 3);
  const msgpack::object& opt = Get(top, "optimizer");
  EXPECT_TRUE(Has(opt, "target"));
  EXPECT_TRUE(Has(opt, "state"));
  EXPECT_TRUE(Has(opt, "flax_mutables"));
  const msgpack::object& state = Get(opt, "state");

  // step: inline flax ndarray ext (type 1) = msgpack [shape, dtype, bytes].
  const msgpack::object& step = Get(state, "step");
  ASSERT_EQ(step.type, msgpack::type::EXT);
  EXPECT_EQ(step.via.ext.type(), 1);
  {
    msgpack::object_handle eh =
        msgpack::unpack(step.via.ext.data(), step.via.ext.size);
    const msgpack::object& t = eh.get();
    ASSERT_EQ(t.type, msgpack::type::ARRAY);
    ASSERT_EQ(t.via.array.size, 3u);
    EXPECT_EQ(t.via.array.ptr[0].type, msgpack::type::ARRAY);
    EXPECT_EQ(t.via.array.ptr[0].via.array.size, 0u);
    EXPECT_EQ(t.via.array.ptr[1].as<std::string>(), "int32");
    ASSERT_EQ(t.via.array.ptr[2].type, msgpack::type::BIN);
    ASSERT_EQ(t.via.array.ptr[2].via.bin.size, 4u);
    int32_t s;
    std::memcpy(&s, t.via.array.ptr[2].via.bin.ptr, 4);
    EXPECT_EQ(s, 7);
  }

  // Nested params become TensorStore specs with relative paths.
  const msgpack::object& q = Get(Get(Get(Get(Get(opt, "target"), "encoder"),
                                         "layers_0"), "attention"), "query");
  const msgpack::object& spec = Get(q, "kernel");
  ASSERT_EQ(spec.type, msgpack::type::MAP);
  EXPECT_EQ(Get(spec, "driver").as<std::string>(), "zarr");
  EXPECT_EQ(Get(spec, "dtype").as<std::string>(), "float32");
  const msgpack::object& kv = Get(spec, "kvstore");
  EXPECT_EQ(Get(kv, "driver").as<std::string>(), "file");
  EXPECT_EQ(Get(kv, "path").as<std::string>(),
            "target.encoder.layers_0.attention.query.kernel/");
  const msgpack::object& meta = Get(spec, "metadata");
  EXPECT_EQ(Get(meta, "shape").as<std::vector<int64_t>>(),
            (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(Get(meta, "chunks").as<std::vector<int64_t>>(),
            (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(Get(Get(meta, "compressor"), "id").as<std::string>(), "gzip");
  EXPECT_EQ(Get(Get(meta, "compressor"), "level").as<int>(), 1);

  const msgpack::object& emb =
      Get(Get(Get(opt, "target"), "token_embedder"), "embedding");
  EXPECT_EQ(Get(emb, "dtype").as<std::string>(), "bfloat16");

  const msgpack::object& vrow =
      Get(Get(Get(Get(Get(Get(Get(state, "param_states"), "encoder"),
                          "layers_0"), "attention"), "query"), "kernel"),
          "v_row");
  EXPECT_EQ(Get(Get(vrow, "kvstore"), "path").as<std::string>(),
            "state.param_states.encoder.layers_0.attention.query.kernel.v_row/");

  // store_inline arrays are flax ndarray exts, not specs; no zarr dir.
  const msgpack::object& counter = Get(Get(opt, "flax_mutables"), "counter");
  EXPECT_EQ(counter.type, msgpack::type::EXT);
  EXPECT_FALSE(fs::exists(fs::path(out) / "flax_mutables.counter"));
}

TEST_F(CheckpointsTest, ZarrayMetadataAndGzipChunks) {
  Fixture fx;
  const std::string out = SaveCheckpoint(dir_, 1, fx.Refs());
  struct Case {
    std::string path;
    std::string dtype;
    std::vector<int64_t> shape;
    std::string chunk_file;
    std::vector<uint8_t> raw;
  };
  std::vector<Case> cases = {
      {"target.encoder.layers_0.attention.query.kernel", "<f4", {4, 6}, "0.0",
       Bytes(fx.kernel)},
      {"target.decoder.cube", "<f4", {2, 3, 5}, "0.0.0", Bytes(fx.cube)},
      {"target.token_embedder.embedding", "bfloat16", {3, 4}, "0.0",
       Bytes(fx.bf)},
      {"target.ints", "<i4", {5}, "0", Bytes(fx.ints)},
      {"target.scalar", "<f4", {}, "0", Bytes(fx.scalar)},
      {"target.i64", "<i8", {2}, "0", Bytes(fx.i64)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    const fs::path d = fs::path(out) / c.path;
    std::vector<uint8_t> raw = ReadAll(d / ".zarray");
    json j = json::parse(raw.begin(), raw.end());
    EXPECT_EQ(j["zarr_format"], 2);
    EXPECT_EQ(j["dtype"], c.dtype);
    EXPECT_EQ(j["shape"].get<std::vector<int64_t>>(), c.shape);
    EXPECT_EQ(j["chunks"].get<std::vector<int64_t>>(), c.shape);
    EXPECT_EQ(j["order"], "C");
    EXPECT_TRUE(j["filters"].is_null());
    EXPECT_TRUE(j["fill_value"].is_null());
    EXPECT_EQ(j["dimension_separator"], ".");
    EXPECT_EQ(j["compressor"], json({{"id", "gzip"}, {"level", 1}}));
    // Exactly one chunk file plus .zarray.
    size_t files = 0;
    for (auto& e : fs::directory_iterator(d)) {
      (void)e;
      ++files;
    }
    EXPECT_EQ(files, 2u);
    std::vector<uint8_t> gz = ReadAll(d / c.chunk_file);
    ASSERT_GE(gz.size(), 2u);
    EXPECT_EQ(gz[0], 0x1f);  // gzip magic, as numcodecs/TensorStore write
    EXPECT_EQ(gz[1], 0x8b);
    EXPECT_EQ(Inflate(gz.data(), gz.size(), "test"), c.raw);
  }
}

TEST_F(CheckpointsTest, UncompressedChunksAreRawBytes) {
  std::vector<float> v = Floats(6, 0.f);
  SaveOptions opt;
  opt.gzip = false;
  const std::string out =
      SaveCheckpoint(dir_, 3, {{"target.w", DType::kFloat32, {2, 3}, v.data()}},
                     opt);
  json j = json::parse(ReadAll(fs::path(out) / "target.w" / ".zarray"));
  EXPECT_TRUE(j["compressor"].is_null());
  EXPECT_EQ(ReadAll(fs::path(out) / "target.w" / "0.0"), Bytes(v));
}

TEST_F(CheckpointsTest, ChooseChunkShapeMatchesT5xRule) {
  // Fits: unchanged.
  EXPECT_EQ(ChooseChunkShape({4, 6}, 24), (std::vector<int64_t>{4, 6}));
  // Largest dim is reduced to its next divisor first: 6 -> 3 (12 <= 12).
  EXPECT_EQ(ChooseChunkShape({4, 6}, 12), (std::vector<int64_t>{4, 3}));
  // Ties pick the first dimension.
  EXPECT_EQ(ChooseChunkShape({4, 4}, 8), (std::vector<int64_t>{2, 4}));
  // T5-small embedding 32128 x 512 f32 (62.75 MiB) fits in 64 MiB; the
  // T5-large one (32128 x 1024) is split: 32128 -> 16064.
  EXPECT_EQ(ChooseChunkShape({32128, 512}, 64 * 1024 * 1024 / 4),
            (std::vector<int64_t>{32128, 512}));
  EXPECT_EQ(ChooseChunkShape({32128, 1024}, 64 * 1024 * 1024 / 4),
            (std::vector<int64_t>{16064, 1024}));
  EXPECT_EQ(ChooseChunkShape({}, 1), (std::vector<int64_t>{}));
  EXPECT_EQ(ChooseChunkShape({7}, 1), (std::vector<int64_t>{1}));
}

TEST_F(CheckpointsTest, MultiChunkRoundTrip) {
  std::vector<float> v = Floats(8 * 6 * 4, 0.f);
  SaveOptions opt;
  opt.max_chunk_bytes = 48 * 4;  // at most 48 elements per chunk
  const std::string out = SaveCheckpoint(
      dir_, 5, {{"target.big", DType::kFloat32, {8, 6, 4}, v.data()}}, opt);
  json j = json::parse(ReadAll(fs::path(out) / "target.big" / ".zarray"));
  const auto chunks = j["chunks"].get<std::vector<int64_t>>();
  EXPECT_EQ(chunks, ChooseChunkShape({8, 6, 4}, 48));
  // 8 -> 4 (largest), then 6 -> 3: a 2 x 2 x 1 chunk grid.
  EXPECT_EQ(chunks, (std::vector<int64_t>{4, 3, 4}));
  for (const char* key : {"0.0.0", "0.1.0", "1.0.0", "1.1.0"}) {
    EXPECT_TRUE(fs::exists(fs::path(out) / "target.big" / key)) << key;
  }
  LoadedCheckpoint ck = LoadCheckpoint(out);
  EXPECT_EQ(ck.arrays.at("target.big").bytes, Bytes(v));
}

TEST_F(CheckpointsTest, ReadsEdgeChunksAndMissingChunks) {
  // A zarr array with non-dividing chunks (as zarr-python may write), one
  // chunk missing (= fill_value), '/' separator, zlib compressor.
  const fs::path ck = dir_ / "checkpoint_9";
  fs::create_directories(ck / "target.w");
  WriteAll(ck / "target.w" / ".zarray",
           R"({"chunks":[2,2],"compressor":{"id":"zlib","level":1},)"
           R"("dimension_separator":"/","dtype":"<i4","fill_value":-1,)"
           R"("filters":null,"order":"C","shape":[3,3],"zarr_format":2})");
  // Full 3x3 array: 0..8. Chunks are 2x2, stored full size (edges padded).
  auto chunk = [&](int r0, int c0) {
    std::vector<int32_t> c(4, 99);  // padding value must be ignored
    for (int r = 0; r < 2; ++r) {
      for (int cc = 0; cc < 2; ++cc) {
        if (r0 + r < 3 && c0 + cc < 3) c[r * 2 + cc] = (r0 + r) * 3 + c0 + cc;
      }
    }
    return c;
  };
  auto write_chunk = [&](const std::string& key, std::vector<int32_t> c) {
    std::vector<uint8_t> gz = GzipCompress(c.data(), 16, 1);
    fs::create_directories((ck / "target.w" / key).parent_path());
    WriteAll(ck / "target.w" / key, std::string(gz.begin(), gz.end()));
  };
  write_chunk("0/0", chunk(0, 0));
  write_chunk("0/1", chunk(0, 2));
  write_chunk("1/0", chunk(2, 0));
  // 1/1 missing -> fill_value -1 at [2,2].
  msgpack::sbuffer sb;
  msgpack::packer<msgpack::sbuffer> pk(sb);
  pk.pack_map(2);
  pk.pack(std::string("version"));
  pk.pack(3);
  pk.pack(std::string("optimizer"));
  pk.pack_map(1);
  pk.pack(std::string("target"));
  pk.pack_map(1);
  pk.pack(std::string("w"));
  pk.pack_map(3);  // gcs-style spec: kvstore without path + top-level path
  pk.pack(std::string("driver"));
  pk.pack(std::string("zarr"));
  pk.pack(std::string("kvstore"));
  pk.pack_map(2);
  pk.pack(std::string("bucket"));
  pk.pack(std::string("t5x-dummy-bucket"));
  pk.pack(std::string("driver"));
  pk.pack(std::string("gcs"));
  pk.pack(std::string("path"));
  pk.pack(std::string("target.w"));
  WriteAll(ck / "checkpoint", std::string(sb.data(), sb.size()));

  LoadedCheckpoint loaded = LoadCheckpoint(ck.string());
  EXPECT_EQ(loaded.step, 9);  // no state.step: taken from the dir name
  const LoadedArray& a = loaded.arrays.at("target.w");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 3}));
  std::vector<int32_t> got(9);
  std::memcpy(got.data(), a.bytes.data(), 36);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, -1}));
}

TEST_F(CheckpointsTest, AtomicCommitAndRefuseOverwrite) {
  std::vector<float> v = Floats(3, 1.f);
  std::vector<ArrayRef> arrays = {{"target.w", DType::kFloat32, {3}, v.data()}};
  SaveCheckpoint(dir_, 10, arrays);
  for (auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos)
        << e.path();
  }
  try {
    SaveCheckpoint(dir_, 10, arrays);
    FAIL() << "expected t5xx::Error";
  } catch (const t5xx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint_10"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos);
  }
  // The existing checkpoint is untouched and no temp dir is left behind.
  EXPECT_EQ(LoadCheckpoint((dir_ / "checkpoint_10").string()).step, 10);
  size_t entries = 0;
  for (auto& e : fs::directory_iterator(dir_)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
}

TEST_F(CheckpointsTest, FailedSaveLeavesNoTempDir) {
  std::vector<float> v = Floats(3, 1.f);
  // Conflicting paths: rejected before anything is written.
  EXPECT_THROW(SaveCheckpoint(dir_, 1,
                              {{"target.w", DType::kFloat32, {3}, v.data()},
                               {"target.w.x", DType::kFloat32, {3}, v.data()}}),
               t5xx::Error);
  EXPECT_THROW(SaveCheckpoint(dir_, 1,
                              {{"target.w", DType::kFloat32, {3}, v.data()},
                               {"target.w", DType::kFloat32, {3}, v.data()}}),
               t5xx::Error);
  EXPECT_THROW(
      SaveCheckpoint(dir_, 1, {{"target..w", DType::kFloat32, {3}, v.data()}}),
      t5xx::Error);
  EXPECT_THROW(
      SaveCheckpoint(dir_, 1, {{"state.step", DType::kInt32, {}, v.data()}}),
      t5xx::Error);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(CheckpointsTest, ListCheckpointSteps) {
  std::vector<float> v = Floats(3, 1.f);
  std::vector<ArrayRef> arrays = {{"target.w", DType::kFloat32, {3}, v.data()}};
  EXPECT_TRUE(ListCheckpointSteps((dir_ / "nope").string()).empty());
  for (int64_t s : {1000, 20, 300}) SaveCheckpoint(dir_, s, arrays);
  fs::create_directories(dir_ / "checkpoint_5.tmp-123");  // in-progress save
  WriteAll(dir_ / "checkpoint_7", "not a dir");
  fs::create_directories(dir_ / "checkpoint_x");
  EXPECT_EQ(ListCheckpointSteps(dir_.string()),
            (std::vector<int64_t>{20, 300, 1000}));
}

TEST_F(CheckpointsTest, FutureVersionRefused) {
  std::vector<float> v = Floats(3, 1.f);
  const std::string out =
      SaveCheckpoint(dir_, 2, {{"target.w", DType::kFloat32, {3}, v.data()}});
  msgpack::sbuffer sb;
  msgpack::packer<msgpack::sbuffer> pk(sb);
  pk.pack_map(2);
  pk.pack(std::string("version"));
  pk.pack(4);
  pk.pack(std::string("optimizer"));
  pk.pack_map(0);
  WriteAll(fs::path(out) / "checkpoint", std::string(sb.data(), sb.size()));
  // As a newer t5x writes it: without t5xx's checksums sidecar (which would
  // otherwise report the edited index as corrupted first).
  fs::remove(fs::path(out) / kChecksumsFile);
  try {
    LoadCheckpoint(out);
    FAIL() << "expected t5xx::Error";
  } catch (const t5xx::Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "written by a newer t5x/t5xx (version 4 > 3)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CheckpointsTest, MissingFilesAreNamed) {
  std::vector<float> v = Floats(3, 1.f);
  const std::string out =
      SaveCheckpoint(dir_, 2, {{"target.w", DType::kFloat32, {3}, v.data()}});
  fs::remove(fs::path(out) / "target.w" / ".zarray");
  try {
    LoadCheckpoint(out);
    FAIL() << "expected t5xx::Error";
  } catch (const t5xx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("target.w/.zarray"), std::string::npos)
        << e.what();
  }
  fs::remove(fs::path(out) / "checkpoint");
  try {
    LoadCheckpoint(out);
    FAIL() << "expected t5xx::Error";
  } catch (const t5xx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint_2/checkpoint"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(LoadCheckpoint((dir_ / "checkpoint_99").string()), t5xx::Error);
}

TEST_F(CheckpointsTest, CorruptChunkIsReported) {
  std::vector<float> v = Floats(64, 1.f);
  const std::string out =
      SaveCheckpoint(dir_, 2, {{"target.w", DType::kFloat32, {64}, v.data()}});
  WriteAll(fs::path(out) / "target.w" / "0", "garbage");
  try {
    LoadCheckpoint(out);
    FAIL() << "expected t5xx::Error";
  } catch (const t5xx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("target.w/0"), std::string::npos)
        << e.what();
  }
}

TEST_F(CheckpointsTest, LargeStepAndGzipLevels) {
  std::vector<float> v = Floats(1000, 1.f);
  for (int level : {0, 1, 9}) {
    SaveOptions opt;
    opt.gzip_level = level;
    const int64_t step = (1LL << 33) + level;  // does not fit int32
    const std::string out = SaveCheckpoint(
        dir_, step, {{"target.w", DType::kFloat32, {1000}, v.data()}}, opt);
    LoadedCheckpoint ck = LoadCheckpoint(out);
    EXPECT_EQ(ck.step, step);
    EXPECT_EQ(ck.arrays.at("target.w").bytes, Bytes(v));
  }
  SaveOptions bad;
  bad.gzip_level = 12;
  EXPECT_THROW(SaveCheckpoint(dir_, 1, {}, bad), t5xx::Error);
}

TEST_F(CheckpointsTest, GzipRoundTripLargeRandom) {
  std::mt19937 rng(1);
  std::vector<uint8_t> data(3 << 20);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = (i % 3 == 0) ? static_cast<uint8_t>(rng()) : 0;
  }
  std::vector<uint8_t> gz = GzipCompress(data.data(), data.size(), 1);
  EXPECT_LT(gz.size(), data.size());
  EXPECT_EQ(Inflate(gz.data(), gz.size(), "x"), data);
  std::vector<uint8_t> empty = GzipCompress(nullptr, 0, 1);
  EXPECT_TRUE(Inflate(empty.data(), empty.size(), "x").empty());
}

}  // namespace
}  // namespace t5xx::checkpoints
