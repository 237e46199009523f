// Protocol-buffer wire format: the encoders (varints, keys, fixed-width and
// length-delimited fields) and a bounds-checked reader of one message.
//
// Behaviour source: https://protobuf.dev/programming-guides/encoding/ (wire
// types 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32), as used by
// tf.Example (seqio's TFExampleDataSource) and TensorBoard's Event protos.
// Fixed-width values are little-endian. Framework-free: no libtorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "t5xx/util/error.h"

namespace t5xx {

// Appends v as a base-128 varint (1 to 10 bytes; 300 -> "\xAC\x02").
void PutVarint(std::string* out, uint64_t v);

// Appends a field key: varint (field << 3) | wire_type.
void PutKey(std::string* out, int field, int wire_type);

// Appends the low `bytes` bytes of v, little-endian.
void PutFixedLE(std::string* out, uint64_t v, int bytes);

// Reads `bytes` (<= 8) bytes at p as a little-endian unsigned value.
uint64_t LoadLE(const char* p, int bytes);

// Appends a length-delimited field (wire type 2): key, varint length, bytes.
void PutLengthDelimited(std::string* out, int field, std::string_view data);

// A wire-format violation found by WireReader. The message says what is
// wrong ("truncated varint", ...) without context; callers that know what
// the bytes were meant to be catch it and rethrow with that context.
class WireFormatError : public Error {
 public:
  using Error::Error;
};

// A cursor over the bytes of one message (not owned; must outlive it). Every
// read throws WireFormatError instead of running past the end.
class WireReader {
 public:
  WireReader(const char* data, size_t size) : p_(data), end_(data + size) {}

  bool done() const { return p_ >= end_; }

  // Throws WireFormatError "truncated varint" / "varint longer than 10
  // bytes".
  uint64_t Varint();
  // Reads a key; returns the field number, stores the wire type. Throws
  // WireFormatError "invalid field number" for 0 or > 2^29-1.
  uint32_t Tag(int* wire_type);
  // A length-delimited payload as (start, size), pointing into the message.
  std::pair<const char*, size_t> Bytes();
  // A fixed32 field's 4 bytes (wire type 5) as (start, 4).
  std::pair<const char*, size_t> Fixed32Bytes();
  // Skips a field of `wire_type`; throws WireFormatError for wire types other
  // than 0, 1, 2, 5 ("unsupported wire type N") or a truncated field.
  void SkipField(int wire_type);

 private:
  void Skip(size_t n);

  const char* p_;
  const char* end_;
};

}  // namespace t5xx
