// The tf.Example codec: Examples to and from serialized tf.Example protos
// (see tf_example.h).
#include "t5xx/data/sources/tf_example.h"

#include <limits>
#include <map>
#include <set>
#include <utility>

#include "t5xx/util/error.h"
#include "t5xx/util/names.h"
#include "t5xx/util/files/protobuf_wire.h"

namespace t5xx::seqio {
namespace {

// Decodes one Feature message into the Example value of feature `key`.
FeatureValue DecodeFeature(const char* data, size_t size,
                           const std::string& key, const std::string& where) {
  WireReader r(data, size);
  int kind = 0;  // last oneof field seen wins, as in protobuf
  std::pair<const char*, size_t> body{nullptr, 0};
  while (!r.done()) {
    int wt = 0;
    const uint32_t field = r.Tag(&wt);
    if (field >= 1 && field <= 3 && wt == 2) {
      kind = static_cast<int>(field);
      body = r.Bytes();
    } else {
      r.SkipField(wt);
    }
  }
  if (kind == 0) {
    throw Error(where + ": feature '" + key +
                "' has no value (none of bytes_list, float_list, int64_list "
                "is set)");
  }
  if (kind == 2) {
    throw Error(where + ": feature '" + key +
                "' is a float_list: float features are not supported yet "
                "(t5xx Examples hold strings and int32 tokens); drop it from "
                "the requested features or store it as int64/bytes");
  }
  WireReader list(body.first, body.second);
  if (kind == 1) {
    std::vector<std::string> values;
    while (!list.done()) {
      int wt = 0;
      const uint32_t field = list.Tag(&wt);
      if (field == 1 && wt == 2) {
        auto b = list.Bytes();
        values.emplace_back(b.first, b.second);
      } else {
        list.SkipField(wt);
      }
    }
    if (values.size() != 1) {
      throw Error(where + ": feature '" + key + "' is a bytes_list of " +
                  std::to_string(values.size()) +
                  " elements; only single-element bytes_list (a string) is "
                  "supported");
    }
    return std::move(values[0]);
  }
  Tokens tokens;
  auto push = [&](uint64_t raw) {
    const int64_t v = static_cast<int64_t>(raw);
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max()) {
      throw Error(where + ": feature '" + key + "' has int64 value " +
                  std::to_string(v) +
                  " that does not fit int32 (t5xx token ids are int32)");
    }
    tokens.push_back(static_cast<int32_t>(v));
  };
  while (!list.done()) {
    int wt = 0;
    const uint32_t field = list.Tag(&wt);
    if (field == 1 && wt == 0) {
      push(list.Varint());
    } else if (field == 1 && wt == 2) {
      auto b = list.Bytes();
      WireReader packed(b.first, b.second);
      while (!packed.done()) push(packed.Varint());
    } else {
      list.SkipField(wt);
    }
  }
  return tokens;
}

}  // namespace

// ---- tf.Example -------------------------------------------------------------

std::string SerializeTFExample(const Example& example) {
  std::string features;
  for (const auto& [key, value] : example) {
    std::string feature;
    if (const auto* s = std::get_if<std::string>(&value)) {
      std::string list;
      PutLengthDelimited(&list, 1, *s);
      PutLengthDelimited(&feature, 1, list);
    } else {
      const Tokens& toks = std::get<Tokens>(value);
      std::string packed;
      for (int32_t t : toks) {
        PutVarint(&packed, static_cast<uint64_t>(static_cast<int64_t>(t)));
      }
      std::string list;
      if (!toks.empty()) PutLengthDelimited(&list, 1, packed);
      PutLengthDelimited(&feature, 3, list);
    }
    std::string entry;
    PutLengthDelimited(&entry, 1, key);
    PutLengthDelimited(&entry, 2, feature);
    PutLengthDelimited(&features, 1, entry);
  }
  std::string out;
  PutLengthDelimited(&out, 1, features);
  return out;
}

namespace {

// ParseTFExample without the context of wire-format errors.
Example ParseTFExampleFields(const std::string& serialized,
                             const std::vector<std::string>& features,
                             const std::string& where) {
  const std::set<std::string> wanted(features.begin(), features.end());
  // key -> raw Feature bytes (last entry wins, as for protobuf maps).
  std::map<std::string, std::pair<const char*, size_t>> raw;
  WireReader ex(serialized.data(), serialized.size());
  while (!ex.done()) {
    int wt = 0;
    const uint32_t field = ex.Tag(&wt);
    if (field != 1 || wt != 2) {
      ex.SkipField(wt);
      continue;
    }
    auto fs = ex.Bytes();
    WireReader feats(fs.first, fs.second);
    while (!feats.done()) {
      const uint32_t ff = feats.Tag(&wt);
      if (ff != 1 || wt != 2) {
        feats.SkipField(wt);
        continue;
      }
      auto e = feats.Bytes();
      WireReader entry(e.first, e.second);
      std::string key;
      std::pair<const char*, size_t> value{"", 0};
      while (!entry.done()) {
        const uint32_t ef = entry.Tag(&wt);
        if (ef == 1 && wt == 2) {
          auto k = entry.Bytes();
          key.assign(k.first, k.second);
        } else if (ef == 2 && wt == 2) {
          value = entry.Bytes();
        } else {
          entry.SkipField(wt);
        }
      }
      raw[key] = value;
    }
  }
  Example out;
  if (features.empty()) {
    for (const auto& [key, v] : raw) {
      out.emplace(key, DecodeFeature(v.first, v.second, key, where));
    }
    return out;
  }
  for (const auto& key : wanted) {
    auto it = raw.find(key);
    if (it == raw.end()) {
      std::vector<std::string> present;
      for (const auto& [k, v] : raw) present.push_back(k);
      throw Error(where + ": missing feature '" + key + "' (the record has " +
                  (present.empty() ? std::string("no features")
                                   : QuotedList(present)) +
                  ")");
    }
    out.emplace(key, DecodeFeature(it->second.first, it->second.second, key,
                                   where));
  }
  return out;
}

}  // namespace

Example ParseTFExample(const std::string& serialized,
                       const std::vector<std::string>& features,
                       const std::string& where) {
  try {
    return ParseTFExampleFields(serialized, features, where);
  } catch (const WireFormatError& e) {
    throw Error(where + ": malformed tf.Example: " + e.what() +
                " (is this a TFRecord of tf.Example protos?)");
  }
}

}  // namespace t5xx::seqio
