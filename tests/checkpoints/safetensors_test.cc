// safetensors.h: the bytes the safetensors library writes, read back, and
// hostile files refused with one clear error.
#include "t5xx/checkpoints/transformers/safetensors.h"

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"

namespace t5xx::checkpoints {
namespace {

using t5xx::testing::TempDir;

// Made with the safetensors library itself (0.4.3, in the Transformers venv):
//   from safetensors.numpy import save
//   save({'b': np.array([1.5, -2.0, 0.25], np.float32),
//         'a': np.array([[1, 2], [3, 4]], np.float32)},
//        metadata={'format': 'pt'}).hex()
constexpr char kLibraryBytesHex[] =
    "90000000000000007b225f5f6d657461646174615f5f223a7b22666f726d6174223a227074227d2c2261223a7b"
    "226474797065223a22463332222c227368617065223a5b322c325d2c22646174615f6f666673657473223a5b30"
    "2c31365d7d2c2262223a7b226474797065223a22463332222c227368617065223a5b335d2c22646174615f6f66"
    "6673657473223a5b31362c32385d7d7d200000803f0000004000004040000080400000c03f000000c00000803e";

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file of header `json` (padded to 8 bytes) and `data`.
std::string FileOf(std::string json, const std::string& data) {
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json + data;
}

TEST(SafetensorsTest, WritesTheLibrarysBytes) {
  TempDir dir;
  const float a[] = {1, 2, 3, 4}, b[] = {1.5f, -2.0f, 0.25f};
  const std::string path = dir.path + "/m.safetensors";
  WriteSafetensors(path, {{"b", "F32", {3}, b}, {"a", "F32", {2, 2}, a}}, {{"format", "pt"}});
  EXPECT_EQ(ReadAll(path), FromHex(kLibraryBytesHex));
}

TEST(SafetensorsTest, ReadsTheLibrarysFile) {
  TempDir dir;
  const std::string path = dir.path + "/m.safetensors";
  WriteAll(path, FromHex(kLibraryBytesHex));
  SafetensorsReader r(path);
  ASSERT_EQ(r.tensors().size(), 2u);
  EXPECT_EQ(r.metadata().at("format"), "pt");
  EXPECT_EQ(r.tensors().at("a").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r.tensors().at("b").begin, 16u);
  const std::vector<uint8_t> b = r.Read("b");
  ASSERT_EQ(b.size(), 12u);
  float v[3];
  std::memcpy(v, b.data(), 12);
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[2], 0.25f);
  EXPECT_ERROR_CONTAINS(r.Read("c"), "holds no tensor 'c'");
}

TEST(SafetensorsTest, HostileFilesAreRefusedNamingTheProblem) {
  TempDir dir;
  const std::string path = dir.path + "/bad.safetensors";
  const std::string f32x2 = R"("dtype":"F32","shape":[2])";
  auto refused = [&](const std::string& bytes, const std::string& why) {
    WriteAll(path, bytes);
    EXPECT_ERROR_CONTAINS(SafetensorsReader{path}, why);
  };
  refused("abc", "shorter than its 8-byte header length");
  refused(std::string("\xff\xff\xff\xff\x00\x00\x00\x00", 8) + "{}", "at most 100000000");
  refused(std::string("\x40\x00\x00\x00\x00\x00\x00\x00", 8) + "{}", "runs past the end");
  refused(FileOf("[1, 2]", ""), "not a JSON object");
  refused(FileOf("{\"a\": ", ""), "the header is not JSON");
  refused(FileOf(R"({"a":{"dtype":"F99","shape":[2],"data_offsets":[0,8]}})", std::string(8, 0)),
          "unknown dtype 'F99'");
  refused(FileOf(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,4]}})", std::string(4, 0)),
          "do not hold dtype F32 x shape [2]");
  refused(FileOf(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,8]},"b":{)" + f32x2 +
                     R"(,"data_offsets":[4,12]}})",
                 std::string(12, 0)),
          "(it overlaps the one before)");
  refused(FileOf(R"({"a":{)" + f32x2 + R"(,"data_offsets":[4,12]}})", std::string(12, 0)),
          "(bytes before it are unindexed)");
  refused(FileOf(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,8]}})", std::string(5, 0)),
          "(truncated?)");
  refused(FileOf(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,8]}})", std::string(9, 0)),
          "1 bytes at the end belong to no tensor");
  refused(FileOf(R"({"a":{)" + f32x2 + R"(,"data_offsets":[0,8]},"a":{)" + f32x2 +
                     R"(,"data_offsets":[8,16]}})",
                 std::string(16, 0)),
          "tensor 'a' is named twice");
  refused(FileOf(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", ""),
          "\"shape\" holds -1, not a size");
  refused(FileOf(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})",
                 std::string(8, 0)),
          "not a size");
  refused(FileOf(R"({"a":{"dtype":"F32","shape":[2]}})", ""), "needs \"dtype\", \"shape\"");
  refused(FileOf(R"({"__metadata__":{"n":1}})", ""), "is not a string");
  // An empty file of tensors is valid.
  WriteAll(path, FileOf("{}", ""));
  EXPECT_TRUE(SafetensorsReader(path).tensors().empty());
}

TEST(SafetensorsTest, WriterRefusesRepeatedNamesAndUnknownDtypes) {
  TempDir dir;
  const float x[] = {1};
  EXPECT_ERROR_CONTAINS(
      WriteSafetensors(dir.path + "/m", {{"a", "F32", {1}, x}, {"a", "F32", {1}, x}}, {}),
      "tensor 'a' is given twice");
  EXPECT_ERROR_CONTAINS(WriteSafetensors(dir.path + "/m", {{"a", "Q4", {1}, x}}, {}),
                        "unknown dtype 'Q4'");
}

}  // namespace
}  // namespace t5xx::checkpoints
