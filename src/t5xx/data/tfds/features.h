// TFDS's feature specification (features.json) and how its tf.Example
// records decode to seqio Examples, as tensorflow_datasets 4.9's
// example_serializer / example_parser and features/*.py define them (facts
// checked against records TFDS wrote: tests/testdata/tfds/):
//
//   features.json                          tf.Example                 Example value
//   Text                                   bytes_list [1]             string
//   Tensor / Scalar (dtype, shape S)       int64/float/bytes list     Array (dtype, S); S = () a scalar
//                                                                     (a string scalar: a string)
//   ClassLabel                             int64_list [1]             Array int64 scalar
//   Translation {lang: Text}               one bytes_list per lang    a string per lang ("de", "en")
//   FeaturesDict {k: f}                    keys "k/..."               one feature per leaf, "k/..."
//   Sequence(f), length -1 or N            the leaf's list, n * |S|   Array [n] + S (n = list / |S|)
//   Sequence(Sequence(f)) (and deeper)     "k/ragged_flat_values",    Array ragged: the row lengths of
//                                          "k/ragged_row_lengths_0".. each ragged dim
// int32, int16, int8, uint8 and bool tensors travel as int64 lists; float32
// and float64 as float lists; string tensors as bytes lists. A
// FeaturesDict inside a Sequence is a Sequence of each of its leaves.
// Dtypes: int8..uint16 are held as int32, int64/uint32/uint64 as int64,
// float16/bfloat16/float32/float64 as float32 (what their float lists
// carry). Anything else -- Image, Audio, Video, BBox, Tensor encodings other
// than 'none', complex dtypes -- is refused at load time with the feature's
// path in features.json.
// Framework-free: no libtorch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/example.h"
#include "t5xx/data/sources/tf_example.h"

namespace t5xx::seqio {

// One leaf of a features.json, flattened.
struct TfdsFeature {
  std::string key;   // the Example key: "label", "answers/text", "translation/de"
  enum Kind { kText, kTensor, kClassLabel } kind = kText;
  Array::DType dtype = Array::DType::kString;
  std::vector<int64_t> shape;  // the leaf's own shape (kTensor); -1 for unknown dims
  // Sequence levels around the leaf, outermost first: -1 variable, else fixed.
  std::vector<int64_t> sequence_lengths;
  std::string path;  // where in features.json, for messages
};

// Reads `path` (a features.json). Throws t5xx::Error naming the file and the
// feature's path for a feature kind or dtype t5xx does not read.
std::vector<TfdsFeature> LoadTfdsFeatures(const std::string& path);

// The Example of one record's raw features. `where` prefixes errors
// (file, record); throws t5xx::Error naming the feature when its list does
// not fit the spec (kind, length, row lengths).
Example DecodeTfdsExample(const std::map<std::string, RawFeature>& raw,
                          const std::vector<TfdsFeature>& features, const std::string& where);

}  // namespace t5xx::seqio
