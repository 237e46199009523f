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
//   float_list                           -> error "float features are not
//                                           supported yet" (only when the
//                                           feature is requested)
// Framework-free: no libtorch.
#pragma once

#include <string>
#include <vector>

#include "t5xx/data/pipeline/example.h"

namespace t5xx::seqio {

// Serializes an Example as a tf.Example: std::string -> bytes_list of one
// element; Tokens -> packed int64_list. Keys are written in sorted order, so
// the output is deterministic.
std::string SerializeTFExample(const Example& example);

// Parses a serialized tf.Example. `features` selects keys (empty = all); a
// feature not selected is never decoded, so it may have any kind. `where`
// prefixes error messages (e.g. "<file>: record 3"). Throws t5xx::Error
// "<where>: ..." for malformed protobuf, a missing requested key, a
// bytes_list without exactly one element, an int64 value outside int32
// (naming the feature and value), a float_list ("float features are not
// supported yet", naming the feature) or a Feature with no kind set.
Example ParseTFExample(const std::string& serialized,
                       const std::vector<std::string>& features,
                       const std::string& where);

}  // namespace t5xx::seqio
