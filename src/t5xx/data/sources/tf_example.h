// The tf.Example codec: Examples to and from serialized tf.Example protos,
// without TensorFlow or protobuf (util/files/protobuf_wire.h).
//
// Behaviour source: tensorflow/core/example/{example,feature}.proto and
// tf.io.parse_single_example. Wire format:
//   Example  { Features features = 1; }
//   Features { map<string, Feature> feature = 1; }   // entries: key=1 value=2
//   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2;
//                           Int64List int64_list = 3; } }
//   BytesList { repeated bytes value = 1; }
//   FloatList { repeated float value = 1 [packed]; }
//   Int64List { repeated int64 value = 1 [packed]; }
// Packed and unpacked encodings of the repeated scalars are both accepted;
// unknown fields are skipped.
//
// Mapping to t5xx::seqio::Example:
//   bytes_list with exactly one element -> std::string
//   int64_list (any length, incl. 0)     -> Tokens (each value must fit int32)
//   float_list (any length)              -> Array float32 [n]
//   (SerializeTFExample also writes Arrays: int32/int64/bool as int64_list,
//   float32 as float_list, strings as bytes_list, flattened row-major.)
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/example.h"

namespace t5xx::seqio {

// Serializes an Example as a tf.Example: std::string -> bytes_list of one
// element; Tokens -> packed int64_list. Keys are written in sorted order, so
// the output is deterministic.
std::string SerializeTFExample(const Example& example);

// One Feature of a tf.Example as it is: its list kind and values.
struct RawFeature {
  enum Kind { kBytes, kFloat, kInt64 } kind = kBytes;
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

// Every feature of a serialized tf.Example, undecoded beyond its lists
// (what TFDS's features.json then gives a shape and dtype: data/tfds/features.h).
// Throws t5xx::Error "<where>: ..." for malformed protobuf or a Feature
// with no kind set.
std::map<std::string, RawFeature> ParseRawTFExample(const std::string& serialized,
                                                    const std::string& where);

// Parses a serialized tf.Example. `features` selects keys (empty = all); a
// feature not selected is never decoded, so it may have any kind. `where`
// prefixes error messages (e.g. "<file>: record 3"). Throws t5xx::Error
// "<where>: ..." for malformed protobuf, a missing requested key, a
// bytes_list without exactly one element, an int64 value outside int32
// (naming the feature and value) or a Feature with no kind set.
Example ParseTFExample(const std::string& serialized,
                       const std::vector<std::string>& features,
                       const std::string& where);

}  // namespace t5xx::seqio
