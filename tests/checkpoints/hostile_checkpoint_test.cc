// Hand-made hostile checkpoints (issue 17): each must be refused with one
// clear t5xx::Error, within a second, without allocating for what it
// declares. Built here byte by byte; the limits are those of
// checkpoints/zarr_array.h and msgpack_index.h.
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "t5xx/checkpoints/compression.h"
#include "t5xx/checkpoints/t5x/msgpack_index.h"
#include "t5xx/checkpoints/zarr_array.h"
#include "test_util.h"

namespace t5xx::checkpoints {
namespace {

namespace fs = std::filesystem;
using t5xx::testing::ErrorOf;
using t5xx::testing::TempDir;

void WriteBytes(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string Zarray(const std::string& shape, const std::string& chunks,
                   const std::string& compressor = "null") {
  return R"({"chunks":)" + chunks + R"(,"compressor":)" + compressor +
         R"(,"dtype":"<f4","fill_value":null,"filters":null,"order":"C","shape":)" + shape +
         R"(,"zarr_format":2})";
}

// Peak resident memory of this process so far, in bytes (Linux: KiB).
uint64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

// Runs `read`, which must throw t5xx::Error; checks it took under a second
// and raised peak memory by under 64 MiB; returns the message.
template <typename Fn>
std::string RefusedQuicklyAndSmall(Fn&& read) {
  const uint64_t rss_before = PeakRssBytes();
  const auto start = std::chrono::steady_clock::now();
  const std::string message = ErrorOf(read);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0) << message;
  EXPECT_LT(PeakRssBytes() - rss_before, uint64_t{64} << 20) << message;
  return message;
}

TEST(HostileCheckpointTest, ZarrShapeOf2To40ElementsIsRefusedBeforeAllocating) {
  TempDir tmp;
  const fs::path dir = fs::path(tmp.path) / "target.big";
  // 2^40 float32 elements: 4 TiB, in 1 MiB chunks; no chunk file exists, so
  // a reader that trusted the shape would allocate 4 TiB of fill value.
  WriteBytes(dir / ".zarray", Zarray("[1099511627776]", "[262144]"));
  const std::string message = RefusedQuicklyAndSmall(
      [&] { ReadZarrArray(dir, "target.big", std::nullopt, std::nullopt); });
  EXPECT_NE(message.find((dir / ".zarray").string()), std::string::npos) << message;
  EXPECT_NE(message.find("[1099511627776]"), std::string::npos) << message;
  EXPECT_NE(message.find("the limit, 1 TiB"), std::string::npos) << message;
}

TEST(HostileCheckpointTest, ZarrChunkOf2To40ElementsIsRefused) {
  TempDir tmp;
  const fs::path dir = fs::path(tmp.path) / "a";
  // A small array whose one chunk declares 2^40 elements (the chunk, not
  // the array, sizes the decode buffer).
  WriteBytes(dir / ".zarray", Zarray("[4]", "[1099511627776]"));
  const std::string message = RefusedQuicklyAndSmall(
      [&] { ReadZarrMetadata(dir, "a", std::nullopt, std::nullopt); });
  EXPECT_NE(message.find("per chunk (the limit, 2 GiB"), std::string::npos) << message;
}

TEST(HostileCheckpointTest, ShapeWhoseElementCountOverflowsIsRefused) {
  TempDir tmp;
  const fs::path dir = fs::path(tmp.path) / "a";
  // 2^32 * 2^32 * 4 bytes overflows 64 bits.
  WriteBytes(dir / ".zarray", Zarray("[4294967296, 4294967296]", "[1, 1]"));
  const std::string message = RefusedQuicklyAndSmall(
      [&] { ReadZarrMetadata(dir, "a", std::nullopt, std::nullopt); });
  EXPECT_NE(message.find("[4294967296, 4294967296]"), std::string::npos) << message;
}

// Found by fuzzing (fuzz/regressions/zarr_array/): a dimension written as a
// number beyond int64 is parsed as a double, which the vector conversion
// cast to int64 (undefined behaviour). Each such dimension is now an error
// naming the key and index; so are floats and non-lists. (The number's
// shortest round-trip form, 6.666666666666666e+83, is Python's repr of it.)
TEST(HostileCheckpointTest, ShapeEntriesThatAreNotInt64AreRefused) {
  TempDir tmp;
  const fs::path dir = fs::path(tmp.path) / "a";
  const std::string zarray = (dir / ".zarray").string();
  const struct {
    std::string shape, chunks, expected;
  } cases[] = {
      {"[666666666666666666666666666666666666666666666666666666666666666666666666666666666616]",
       "[16]", ": shape[0] is 6.666666666666666e+83, not an integer in int64 range"},
      {"[4, 9223372036854775808]", "[1, 1]",
       ": shape[1] is 9223372036854775808, not an integer in int64 range"},
      {"[4]", "[2.0]", ": chunks[0] is 2.0, not an integer in int64 range"},
      {"4", "[4]", ": shape is 4, not a list of integers"},
  };
  for (const auto& c : cases) {
    WriteBytes(dir / ".zarray", Zarray(c.shape, c.chunks));
    const std::string message = RefusedQuicklyAndSmall(
        [&] { ReadZarrMetadata(dir, "a", std::nullopt, std::nullopt); });
    EXPECT_EQ(message, zarray + c.expected) << c.shape;
  }
}

// Also found by fuzzing: zarr_format written as 1e69 was read by
// value<int>(), a cast with undefined behaviour.
TEST(HostileCheckpointTest, ZarrFormatThatIsNotAnIntegerIsRefused) {
  TempDir tmp;
  const fs::path dir = fs::path(tmp.path) / "a";
  std::string zarray = Zarray("[4]", "[4]");
  const std::string two = "\"zarr_format\":2";
  ASSERT_NE(zarray.find(two), std::string::npos);
  for (const auto& [written, shown] : std::vector<std::pair<std::string, std::string>>{
           {"1e69", "1e+69"}, {"2.0", "2.0"}, {"\"2\"", "\"2\""}, {"3", "3"}}) {
    WriteBytes(dir / ".zarray",
               std::string(zarray).replace(zarray.find(two), two.size(),
                                           "\"zarr_format\":" + written));
    EXPECT_EQ(ErrorOf([&] { ReadZarrMetadata(dir, "a", std::nullopt, std::nullopt); }),
              (dir / ".zarray").string() + ": zarr_format is " + shown + ", not 2");
  }
}

TEST(HostileCheckpointTest, MillionsOfTinyChunksAreRefusedWithoutLookingForThem) {
  TempDir tmp;
  const fs::path dir = fs::path(tmp.path) / "a";
  // 1 GiB in 4-byte chunks: 2^28 chunk files to look for (hours), so the
  // read is refused up front (limit 2^20 chunks per read).
  WriteBytes(dir / ".zarray", Zarray("[268435456]", "[1]"));
  const std::string message = RefusedQuicklyAndSmall(
      [&] { ReadZarrArray(dir, "a", std::nullopt, std::nullopt); });
  EXPECT_NE(message.find("268435456 chunk files, more than the limit of 1048576"),
            std::string::npos)
      << message;
}

// Found by fuzzing (fault 24, fuzz/regressions/zarr_array/timeout-f39af7c7…):
// a 2-row .zarray of shape [658925, 3] in chunks [2, 1] declares 988,389
// chunks (under the limit) and ships none; the read looked for each chunk
// file in the file system and ran past the fuzzer's 10 s. The directory is
// now listed once, so a read of the 2^20 chunks the limit allows, all but
// two of them missing, is fill_value plus the two chunks, read quickly: a
// Release build on 2 cores took 5.2 s before the change and 0.07 s after
// (the bound leaves room for sanitizer builds).
TEST(HostileCheckpointTest, AMillionMissingChunksAreFillValueReadQuickly) {
  TempDir tmp;
  const fs::path dir = fs::path(tmp.path) / "a";
  std::string zarray = Zarray("[1048576]", "[1]");
  const std::string fill = "\"fill_value\":null";
  ASSERT_NE(zarray.find(fill), std::string::npos);
  zarray.replace(zarray.find(fill), fill.size(), "\"fill_value\":1.5");
  WriteBytes(dir / ".zarray", zarray);
  const auto f32 = [](float v) {
    std::string b(4, '\0');
    std::memcpy(b.data(), &v, 4);  // little-endian, as "<f4" (x86/ARM hosts)
    return b;
  };
  WriteBytes(dir / "7", f32(-2.0f));
  WriteBytes(dir / "1048575", f32(3.25f));
  const auto start = std::chrono::steady_clock::now();
  const LoadedArray a = ReadZarrArray(dir, "a", std::nullopt, std::nullopt);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.5);
  ASSERT_EQ(a.shape, std::vector<int64_t>{1048576});
  ASSERT_EQ(a.bytes.size(), size_t{4} << 20);
  std::vector<float> v(1048576);
  std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[6], 1.5f);
  EXPECT_EQ(v[7], -2.0f);
  EXPECT_EQ(v[8], 1.5f);
  EXPECT_EQ(v[1048574], 1.5f);
  EXPECT_EQ(v[1048575], 3.25f);
  EXPECT_EQ(std::count(v.begin(), v.end(), 1.5f), 1048574);
}

// A msgpack index {"version": 3, "optimizer": {"a": {"a": ... nil}}} nested
// `depth` maps deep.
std::string NestedIndex(int depth) {
  std::string b;
  b += '\x82';  // fixmap, 2 entries
  b += "\xa7version";
  b += '\x03';
  b += "\xa9optimizer";
  for (int i = 0; i < depth; ++i) b += "\x81\xa1" "a";  // fixmap {"a": ...}
  b += '\xc0';                                           // nil
  return b;
}

TEST(HostileCheckpointTest, IndexNested10000DeepIsRefused) {
  TempDir tmp;
  WriteBytes(fs::path(tmp.path) / "checkpoint", NestedIndex(10000));
  const std::string message =
      RefusedQuicklyAndSmall([&] { ListIndex(tmp.path, tmp.path); });
  EXPECT_NE(message.find(tmp.path + "/checkpoint"), std::string::npos) << message;
  EXPECT_NE(message.find("nested more than 64 levels deep"), std::string::npos) << message;
}

TEST(HostileCheckpointTest, IndexNestedWithinTheLimitIsRead) {
  // The control: the same shape of index 40 levels deep is a valid (empty)
  // index, so the limit, not the format, refuses the deep one.
  TempDir tmp;
  WriteBytes(fs::path(tmp.path) / "checkpoint", NestedIndex(40));
  const IndexListing listing = ListIndex(tmp.path, tmp.path);
  EXPECT_EQ(listing.version, 3);
  EXPECT_TRUE(listing.entries.empty());
}

TEST(HostileCheckpointTest, IndexArrayDeclaringBillionsOfEntriesIsRefused) {
  TempDir tmp;
  // "optimizer": array32 declaring 2^32-1 entries, with 3 bytes behind it.
  std::string b = "\x82\xa7version\x03\xa9optimizer\xdd\xff\xff\xff\xff\xc0\xc0\xc0";
  WriteBytes(fs::path(tmp.path) / "checkpoint", b);
  const std::string message =
      RefusedQuicklyAndSmall([&] { ListIndex(tmp.path, tmp.path); });
  EXPECT_NE(message.find("declares more entries than the"), std::string::npos) << message;
}

// A gzip stream that inflates to `blocks` x 16 MiB of zeros: one 16 MiB
// block of deflate output ended by a full flush (byte-aligned, so it can be
// repeated), repeated. The stream is cut before its trailer: a reader that
// inflated it whole would hold blocks x 16 MiB before finding that out.
std::string GzipBomb(int blocks) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<uint8_t> zeros(size_t{16} << 20, 0);
  std::vector<uint8_t> out(size_t{1} << 20);
  // The gzip header comes out with the first block; the block alone is
  // what a zero-length full flush after it adds.
  zs.next_in = zeros.data();
  zs.avail_in = static_cast<uInt>(zeros.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FULL_FLUSH), Z_OK);
  const size_t first = out.size() - zs.avail_out;
  zs.next_in = zeros.data();
  zs.avail_in = static_cast<uInt>(zeros.size());
  EXPECT_EQ(deflate(&zs, Z_FULL_FLUSH), Z_OK);
  const size_t second = out.size() - zs.avail_out;
  deflateEnd(&zs);
  std::string bomb(reinterpret_cast<const char*>(out.data()), first);
  const std::string block(reinterpret_cast<const char*>(out.data()) + first, second - first);
  for (int i = 1; i < blocks; ++i) bomb += block;
  return bomb;
}

TEST(HostileCheckpointTest, GzipBombProbeInflatesAsDesigned) {
  // The bomb is what it claims: zlib (no limit) inflates 4 blocks to 64 MiB
  // of zeros before the stream runs out.
  const std::string bomb = GzipBomb(4);
  z_stream zs{};
  ASSERT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::vector<uint8_t> out(size_t{1} << 20);
  uint64_t total = 0;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bomb.data()));
  zs.avail_in = static_cast<uInt>(bomb.size());
  int ret = Z_OK;
  while (ret == Z_OK) {
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    ret = inflate(&zs, Z_NO_FLUSH);
    total += out.size() - zs.avail_out;
  }
  inflateEnd(&zs);
  EXPECT_EQ(total, uint64_t{64} << 20);
}

TEST(HostileCheckpointTest, ChunkInflatingToGigabytesIsRefusedAtItsSize) {
  TempDir tmp;
  const fs::path dir = fs::path(tmp.path) / "a";
  // A [1024] float32 array (4 KiB, one chunk) whose chunk inflates to
  // 256 x 16 MiB = 4 GiB.
  WriteBytes(dir / ".zarray", Zarray("[1024]", "[1024]", R"({"id":"gzip","level":1})"));
  const std::string bomb = GzipBomb(256);
  ASSERT_LT(bomb.size(), size_t{8} << 20);
  WriteBytes(dir / "0", bomb);
  const std::string message = RefusedQuicklyAndSmall(
      [&] { ReadZarrArray(dir, "a", std::nullopt, std::nullopt); });
  EXPECT_NE(message.find((dir / "0").string()), std::string::npos) << message;
  EXPECT_NE(message.find("inflates to more than 4096 bytes"), std::string::npos) << message;
}

TEST(HostileCheckpointTest, CutStreamWithoutExpectedSizeIsTruncatedError) {
  // Without an expected size (limit kMaxInflatedBytes, 4 GiB), a 32 MiB
  // stream cut before its end is refused as truncated, naming its source.
  const std::string bomb = GzipBomb(2);
  const std::string message = ErrorOf([&] { Inflate(bomb.data(), bomb.size(), "bomb"); });
  EXPECT_NE(message.find("truncated compressed data in bomb"), std::string::npos) << message;
}

TEST(HostileCheckpointTest, IndexThatIsAFifoIsRefusedWithoutWaiting) {
  // Opening a FIFO for reading waits for a writer; the index reader opens
  // without waiting and refuses what is not a regular file.
  TempDir tmp;
  const std::string fifo = tmp.path + "/checkpoint";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string message = RefusedQuicklyAndSmall([&] { ListIndex(tmp.path, tmp.path); });
  EXPECT_EQ(message, "cannot read checkpoint index " + fifo +
                         ": not a regular file (a directory, FIFO or device)");
}

}  // namespace
}  // namespace t5xx::checkpoints
