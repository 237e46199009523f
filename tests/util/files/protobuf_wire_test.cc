// Tests for util/files/protobuf_wire.h; expected bytes follow the encoding guide
// (protobuf.dev/programming-guides/encoding: 150 -> 96 01, 300 -> ac 02,
// field 1 length-delimited "testing" -> 0a 07 74 65 73 74 69 6e 67).
#include "t5xx/util/files/protobuf_wire.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace t5xx {
namespace {

std::string Varint(uint64_t v) {
  std::string out;
  PutVarint(&out, v);
  return out;
}

TEST(ProtobufWireTest, Varints) {
  EXPECT_EQ(Varint(0), std::string("\x00", 1));
  EXPECT_EQ(Varint(1), "\x01");
  EXPECT_EQ(Varint(150), "\x96\x01");
  EXPECT_EQ(Varint(300), "\xac\x02");
  EXPECT_EQ(Varint(UINT64_MAX), "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
  // int64 -1 as its two's complement: 10 bytes.
  EXPECT_EQ(Varint(static_cast<uint64_t>(int64_t{-1})).size(), 10u);
}

TEST(ProtobufWireTest, KeysFixedAndLengthDelimited) {
  std::string out;
  PutKey(&out, 1, 0);   // field 1, varint
  PutKey(&out, 2, 1);   // field 2, fixed64
  PutKey(&out, 16, 2);  // field 16 needs two bytes
  EXPECT_EQ(out, "\x08\x11\x82\x01");
  out.clear();
  PutLengthDelimited(&out, 1, "testing");
  EXPECT_EQ(out, "\x0a\x07testing");
  out.clear();
  PutFixedLE(&out, 0x0102030405060708ULL, 8);
  EXPECT_EQ(out, "\x08\x07\x06\x05\x04\x03\x02\x01");
  EXPECT_EQ(LoadLE(out.data(), 8), 0x0102030405060708ULL);
  EXPECT_EQ(LoadLE(out.data(), 2), 0x0708u);
}

TEST(ProtobufWireTest, ReaderWalksAMessage) {
  // {1: varint 150, 2: "testing", 3: fixed32, 4: fixed64}
  std::string msg = "\x08\x96\x01\x12\x07testing\x1d\x01\x02\x03\x04";
  msg += "\x21";
  msg += std::string(8, '\0');
  WireReader r(msg.data(), msg.size());
  int wt = -1;
  EXPECT_EQ(r.Tag(&wt), 1u);
  EXPECT_EQ(wt, 0);
  EXPECT_EQ(r.Varint(), 150u);
  EXPECT_EQ(r.Tag(&wt), 2u);
  EXPECT_EQ(wt, 2);
  auto [p, n] = r.Bytes();
  EXPECT_EQ(std::string(p, n), "testing");
  EXPECT_EQ(r.Tag(&wt), 3u);
  r.SkipField(wt);
  EXPECT_EQ(r.Tag(&wt), 4u);
  r.SkipField(wt);
  EXPECT_TRUE(r.done());
}

TEST(ProtobufWireTest, ReaderErrors) {
  auto message_of = [](const std::string& bytes, auto read) {
    WireReader r(bytes.data(), bytes.size());
    try {
      read(r);
    } catch (const WireFormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of("\x96", [](WireReader& r) { r.Varint(); }), "truncated varint");
  EXPECT_EQ(message_of(std::string(11, '\xff'), [](WireReader& r) { r.Varint(); }),
            "varint longer than 10 bytes");
  int wt = 0;
  EXPECT_EQ(message_of(std::string("\x00", 1), [&](WireReader& r) { r.Tag(&wt); }),
            "invalid field number");
  EXPECT_EQ(message_of("\x05" "abc", [](WireReader& r) { r.Bytes(); }),
            "truncated length-delimited field");
  EXPECT_EQ(message_of("abc", [](WireReader& r) { r.SkipField(5); }),
            "truncated fixed-width field");
  EXPECT_EQ(message_of("", [](WireReader& r) { r.SkipField(3); }),
            "unsupported wire type 3");
  static_assert(std::is_base_of_v<Error, WireFormatError>);
}

}  // namespace
}  // namespace t5xx
