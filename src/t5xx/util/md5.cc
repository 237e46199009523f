// MD5 (RFC 1321): see md5.h. Written from the RFC's description: four rounds
// of sixteen steps over 64-byte blocks of little-endian 32-bit words, the
// message padded with 0x80, zeros, and its bit length as a 64-bit
// little-endian number.
#include "t5xx/util/md5.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace t5xx {
namespace {

// T[i] = floor(2^32 * |sin(i + 1)|) (RFC 1321 section 3.4), computed once.
struct SineTable {
  uint32_t t[64];
  SineTable() {
    for (int i = 0; i < 64; ++i) {
      t[i] = static_cast<uint32_t>(std::floor(std::fabs(std::sin(i + 1.0)) * 4294967296.0));
    }
  }
};

// The rotation amounts of each round, four per round repeated four times.
constexpr int kShift[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

inline uint32_t RotateLeft(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

}  // namespace

Md5Hasher::Md5Hasher()
    : state_{0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u}, buffer_{} {}

void Md5Hasher::Block(const uint8_t* block) {
  static const SineTable kSine;
  uint32_t x[16];
  for (int i = 0; i < 16; ++i) {
    x[i] = static_cast<uint32_t>(block[4 * i]) | static_cast<uint32_t>(block[4 * i + 1]) << 8 |
           static_cast<uint32_t>(block[4 * i + 2]) << 16 |
           static_cast<uint32_t>(block[4 * i + 3]) << 24;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  for (int step = 0; step < 64; ++step) {
    const int round = step / 16;
    uint32_t f = 0;
    int word = 0;
    switch (round) {
      case 0:  // F(b, c, d) = (b & c) | (~b & d), words in order
        f = (b & c) | (~b & d);
        word = step;
        break;
      case 1:  // G = (b & d) | (c & ~d), words 1, 6, 11, ... (mod 16)
        f = (b & d) | (c & ~d);
        word = (5 * step + 1) % 16;
        break;
      case 2:  // H = b ^ c ^ d, words 5, 8, 11, ...
        f = b ^ c ^ d;
        word = (3 * step + 5) % 16;
        break;
      default:  // I = c ^ (b | ~d), words 0, 7, 14, ...
        f = c ^ (b | ~d);
        word = (7 * step) % 16;
        break;
    }
    const uint32_t sum = a + f + kSine.t[step] + x[word];
    a = d;
    d = c;
    c = b;
    b = b + RotateLeft(sum, kShift[round][step % 4]);
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
}

void Md5Hasher::Update(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  length_ += size;
  while (size > 0) {
    const size_t take = std::min(size, sizeof(buffer_) - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    size -= take;
    if (buffered_ == sizeof(buffer_)) {
      Block(buffer_);
      buffered_ = 0;
    }
  }
}

Md5Digest Md5Hasher::Final() {
  const uint64_t bits = length_ * 8;
  const uint8_t one = 0x80;
  Update(&one, 1);
  const uint8_t zero = 0;
  while (buffered_ != 56) Update(&zero, 1);
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(bits >> (8 * i));
  Update(len, 8);
  Md5Digest out{};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(state_[i] >> (8 * j));
  }
  return out;
}

Md5Digest Md5(std::string_view data) {
  Md5Hasher h;
  h.Update(data);
  return h.Final();
}

std::string Md5Hex(const Md5Digest& digest) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace t5xx
