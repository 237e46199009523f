// Tests for util/md5.h: RFC 1321's test suite (appendix A.5) and longer
// inputs checked against Python's hashlib.
#include "t5xx/util/md5.h"

#include <gtest/gtest.h>

#include <string>

namespace t5xx {
namespace {

TEST(Md5Test, Rfc1321TestSuite) {
  // RFC 1321, appendix A.5 "Test suite".
  EXPECT_EQ(Md5Hex(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5Hex(Md5("a")), "0cc175b9c0f1b6a831c399e269772661");
  EXPECT_EQ(Md5Hex(Md5("abc")), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Md5Hex(Md5("message digest")), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(Md5Hex(Md5("abcdefghijklmnopqrstuvwxyz")), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(Md5Hex(Md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")),
            "d174ab98d277d9f5a5611c2c9f419d9f");
  EXPECT_EQ(Md5Hex(Md5("1234567890123456789012345678901234567890123456789012345678901234567890"
                       "1234567890")),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Md5Test, LongInputsAndEveryByte) {
  // python3 -c "import hashlib; print(hashlib.md5(b'x'*1000000).hexdigest())"
  EXPECT_EQ(Md5Hex(Md5(std::string(1000000, 'x'))), "ec78dbd963d2fc01e51176ed4dec299e");
  // python3 -c "import hashlib; print(hashlib.md5(bytes(range(256))*3).hexdigest())"
  std::string bytes;
  for (int rep = 0; rep < 3; ++rep) {
    for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  }
  EXPECT_EQ(Md5Hex(Md5(bytes)), "e6899eaaf06fd702f3ed3f988eb19362");
}

TEST(Md5Test, IncrementalEqualsOneShotAtEverySplit) {
  const std::string text = "The quick brown fox jumps over the lazy dog, again and again and again.";
  const Md5Digest whole = Md5(text);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    Md5Hasher h;
    h.Update(std::string_view(text).substr(0, cut));
    h.Update(std::string_view(text).substr(cut));
    EXPECT_EQ(h.Final(), whole) << "cut at " << cut;
  }
  // Python: hashlib.md5(b"The quick brown fox jumps over the lazy dog").hexdigest()
  EXPECT_EQ(Md5Hex(Md5("The quick brown fox jumps over the lazy dog")),
            "9e107d9d372bb6826bd81d3542a419d6");
}

TEST(Md5Test, DigestByteOrderIsHashlibs) {
  // hashlib.md5(b"abc").digest()[0] == 0x90 and [15] == 0x72.
  const Md5Digest d = Md5("abc");
  EXPECT_EQ(d[0], 0x90);
  EXPECT_EQ(d[15], 0x72);
}

}  // namespace
}  // namespace t5xx
