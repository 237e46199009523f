// See protobuf_wire.h.
#include "t5xx/util/files/protobuf_wire.h"

namespace t5xx {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutKey(std::string* out, int field, int wire_type) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void PutFixedLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t LoadLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}

void PutLengthDelimited(std::string* out, int field, std::string_view data) {
  PutKey(out, field, 2);
  PutVarint(out, data.size());
  out->append(data.data(), data.size());
}

uint64_t WireReader::Varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_ >= end_) throw WireFormatError("truncated varint");
    const uint8_t b = static_cast<uint8_t>(*p_++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw WireFormatError("varint longer than 10 bytes");
}

uint32_t WireReader::Tag(int* wire_type) {
  const uint64_t tag = Varint();
  *wire_type = static_cast<int>(tag & 7);
  const uint64_t field = tag >> 3;
  if (field == 0 || field > 0x1fffffff) throw WireFormatError("invalid field number");
  return static_cast<uint32_t>(field);
}

std::pair<const char*, size_t> WireReader::Bytes() {
  const uint64_t n = Varint();
  if (n > static_cast<uint64_t>(end_ - p_)) {
    throw WireFormatError("truncated length-delimited field");
  }
  const char* start = p_;
  p_ += n;
  return {start, static_cast<size_t>(n)};
}

void WireReader::Skip(size_t n) {
  if (n > static_cast<size_t>(end_ - p_)) {
    throw WireFormatError("truncated fixed-width field");
  }
  p_ += n;
}

std::pair<const char*, size_t> WireReader::Fixed32Bytes() {
  const char* start = p_;
  Skip(4);
  return {start, 4};
}

void WireReader::SkipField(int wire_type) {
  switch (wire_type) {
    case 0: Varint(); return;
    case 1: Skip(8); return;
    case 2: Bytes(); return;
    case 5: Skip(4); return;
    default:
      throw WireFormatError("unsupported wire type " + std::to_string(wire_type));
  }
}

}  // namespace t5xx
