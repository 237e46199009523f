// What t5's catalog preprocessors (glue_preprocessors.h, qa_preprocessors.h,
// wsc_preprocessors.h) share: reading TFDS features off an Example and the
// few TensorFlow string ops t5 applies to them, reproduced byte for byte.
//
// TFDS features arrive as data/tfds/features.h decodes them: a FeaturesDict
// nested in another is flattened with '/' ("answers/text" is what seqio's
// Python reads as x["answers"]["text"]); Text is a string; ClassLabel an
// int64 scalar Array; a Sequence of Text a rank-1 string Array; a float
// scalar a float32 Array. The accessors below throw t5xx::Error naming the
// preprocessor (`who`, t5's function name), the 0-based example index in the
// stream and the feature, and say what the feature holds when it has another
// type. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/example.h"

namespace t5xx::seqio::catalog {

// "<who>: example <index>" -- the start of every message.
std::string Where(const char* who, uint64_t index);

// The feature `key`, or t5xx::Error "<who>: example <i> has no feature
// '<key>' (it has [k1, k2, ...])".
const FeatureValue& Require(const Example& ex, const std::string& key,
                            const char* who, uint64_t index);
// A string (tf.string scalar) feature.
const std::string& RequireText(const Example& ex, const std::string& key,
                               const char* who, uint64_t index);
// A rank-1 string Array (a TFDS Sequence(Text)); also a string scalar Array
// as [1] is refused.
const std::vector<std::string>& RequireTexts(const Example& ex, const std::string& key,
                                             const char* who, uint64_t index);
// An integer scalar: an int32/int64/bool scalar Array (ClassLabel, TFDS int
// features) or a 1-token list.
int64_t RequireInt(const Example& ex, const std::string& key, const char* who,
                   uint64_t index);
// A float32 scalar Array (e.g. STS-B's label); an integer scalar is accepted
// as its value.
float RequireFloat(const Example& ex, const std::string& key, const char* who,
                   uint64_t index);
// An int32 token list (what tokenize leaves).
const Tokens& RequireTokens(const Example& ex, const std::string& key,
                            const char* who, uint64_t index);

// Whether seqio's Python would find `name` among the example's top-level
// keys: a feature `name` or any flattened feature "name/...".
bool HasTopLevel(const Example& ex, const std::string& name);
// The top-level names of an example's features (sorted, unique): "idx" for
// "idx/paragraph".
std::vector<std::string> TopLevelNames(const Example& ex);

// ---------------------------------------------------------------------------
// TensorFlow's string ops as t5 uses them (RE2 semantics, bytes in, bytes
// out; RE2 reads the bytes as UTF-8).

// tf.strings.regex_replace(s, r'\s+', ' '): every run of RE2 whitespace
// [\t\n\f\r ] (not \v, nor Unicode spaces) becomes one space. Nothing is
// stripped.
std::string CollapseWhitespace(const std::string& s);
// t5's _pad_punctuation: a space on both sides of every ASCII punctuation
// character (RE2's [[:punct:]]: !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~), then
// CollapseWhitespace.
std::string PadPunctuation(const std::string& s);
// t5's _string_join: the parts joined with ' ', then CollapseWhitespace.
std::string StringJoin(const std::vector<std::string>& parts);
// tf.strings.lower with its default encoding '': ASCII letters only.
std::string AsciiLower(std::string s);
// tf.strings.regex_replace(s, r'\W', ' '): every character other than
// [0-9A-Za-z_] becomes one space -- one space per UTF-8 character (a
// multi-byte character is one RE2 character), and one per byte of an
// ill-formed sequence.
std::string NonWordToSpace(const std::string& s);
// tf.strings.split([s], sep=' ').values, Python's s.split(' '): empty pieces
// are kept ("a  b" -> ["a", "", "b"]; "" -> [""]).
std::vector<std::string> SplitOnSpace(const std::string& s);
// The pieces joined with ' ' (tf.strings.reduce_join(separator=' ')).
std::string JoinOnSpace(const std::vector<std::string>& pieces, size_t begin = 0,
                        size_t end = static_cast<size_t>(-1));
// Every non-overlapping occurrence of `from` (non-empty), left to right,
// replaced by `to` (tf.strings.regex_replace with a literal pattern).
std::string ReplaceAll(const std::string& s, const std::string& from,
                       const std::string& to);

}  // namespace t5xx::seqio::catalog
