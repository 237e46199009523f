// Tests for util/crc32c.h (CRC-32C check values from RFC 3720 B.4) and
// util/files/record_frame.h (TFRecord frames worked out from record_writer.cc's
// layout).
#include "t5xx/util/crc32c.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "t5xx/util/files/record_frame.h"

namespace t5xx {
namespace {

TEST(Crc32cTest, KnownValues) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // RFC 3720 B.4: 32 bytes of zeros.
  const std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  // RFC 3720 B.4: 32 bytes of 0xff.
  const std::string ones(32, '\xff');
  EXPECT_EQ(Crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  // Extending continues the running value.
  EXPECT_EQ(Crc32c("6789", 4, Crc32c("12345", 5)), 0xE3069283u);
}

// Every length 0..100 at every alignment 0..7 against CRC-32C computed bit
// by bit from its definition (reflected polynomial 0x82F63B78), so the
// 8-bytes-at-a-time hardware path and its tail agree with it.
TEST(Crc32cTest, AnyLengthAndAlignmentMatchesTheBitwiseDefinition) {
  std::vector<unsigned char> buf(128);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(i * 131 + 7);
  auto bitwise = [](const unsigned char* p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) {
      c ^= p[i];
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
  };
  for (size_t off = 0; off < 8; ++off) {
    for (size_t n = 0; n + off <= 108; ++n) {
      ASSERT_EQ(Crc32c(buf.data() + off, n), bitwise(buf.data() + off, n)) << off << " " << n;
    }
  }
}

TEST(Crc32cTest, MaskedIsRotatedPlusDelta) {
  const uint32_t c = 0xE3069283u;
  EXPECT_EQ(MaskedCrc32c("123456789", 9), ((c >> 15) | (c << 17)) + 0xa282ead8u);
  EXPECT_EQ(MaskedCrc32c("", 0), 0xA282EAD8u);
  EXPECT_EQ(MaskedCrc32c("a", 1), 0x28E46E78u);
}

TEST(RecordFrameTest, EmptyAndOneByteRecords) {
  // length 0 | masked CRC of 8 zero bytes | (no data) | masked CRC of "".
  EXPECT_EQ(TFRecordFrame(""),
            std::string("\0\0\0\0\0\0\0\0", 8) + std::string("\x29\x03\x98\x07", 4) +
                std::string("\xd8\xea\x82\xa2", 4));
  std::string out = "x";
  AppendTFRecordFrame(&out, "a");
  ASSERT_EQ(out.size(), 1 + kTFRecordHeaderSize + 1 + kTFRecordFooterSize);
  EXPECT_EQ(out.substr(1, 8), std::string("\x01\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(out.substr(9, 4), std::string("\x01\x75\xde\x41", 4));
  EXPECT_EQ(out.substr(13, 1), "a");
  EXPECT_EQ(out.substr(14, 4), std::string("\x78\x6e\xe4\x28", 4));
}

}  // namespace
}  // namespace t5xx
