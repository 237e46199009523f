// seqio's unit of data: an Example maps feature names to values.
//
// A value is either a string of bytes, text as the source holds it (usually
// UTF-8, but bytes that are not pass through unchanged, as tf.string's do;
// util/utf8.h) (e.g. "text", "inputs_pretokenized") or a rank-1 sequence of
// int32 token ids (e.g. "inputs", "targets"). This mirrors
// the tf.data dictionaries of seqio (seqio/dataset_providers.py) without
// TensorFlow. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace t5xx::seqio {

using Tokens = std::vector<int32_t>;
using FeatureValue = std::variant<std::string, Tokens>;
using Example = std::map<std::string, FeatureValue>;

// Accessors that throw t5xx::Error naming the feature when it is missing or
// has the other type.
const std::string& GetString(const Example& ex, const std::string& key);
const Tokens& GetTokens(const Example& ex, const std::string& key);
Tokens& GetMutableTokens(Example& ex, const std::string& key);

}  // namespace t5xx::seqio
