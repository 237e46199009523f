// The tf.Example codec: Examples to and from serialized tf.Example protos
// (see tf_example.h).
#include "t5xx/data/sources/tf_example.h"

#include <cstring>

#include <limits>
#include <map>
#include <set>
#include <utility>

#include "t5xx/util/error.h"
#include "t5xx/util/names.h"
#include "t5xx/util/files/protobuf_wire.h"

namespace t5xx::seqio {
namespace {

// Decodes one Feature message of feature `key`.
RawFeature DecodeRawFeature(const char* data, size_t size, const std::string& key,
                            const std::string& where) {
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
  RawFeature out;
  out.kind = kind == 1 ? RawFeature::kBytes : kind == 2 ? RawFeature::kFloat : RawFeature::kInt64;
  WireReader list(body.first, body.second);
  while (!list.done()) {
    int wt = 0;
    const uint32_t field = list.Tag(&wt);
    if (field != 1) {
      list.SkipField(wt);
    } else if (kind == 1 && wt == 2) {
      auto b = list.Bytes();
      out.bytes.emplace_back(b.first, b.second);
    } else if (kind == 3 && wt == 0) {
      out.ints.push_back(static_cast<int64_t>(list.Varint()));
    } else if (kind == 3 && wt == 2) {
      auto b = list.Bytes();
      WireReader packed(b.first, b.second);
      while (!packed.done()) out.ints.push_back(static_cast<int64_t>(packed.Varint()));
    } else if (kind == 2 && (wt == 5 || wt == 2)) {
      // Unpacked (fixed32, one value) or packed (a run of 4-byte values).
      std::pair<const char*, size_t> b = wt == 5 ? list.Fixed32Bytes() : list.Bytes();
      T5XX_CHECK(b.second % 4 == 0, where + ": feature '" + key + "': a float_list of " +
                                        std::to_string(b.second) + " bytes (not whole floats)");
      for (size_t i = 0; i < b.second; i += 4) {
        uint32_t bits = 0;
        for (int k = 0; k < 4; ++k) {
          bits |= static_cast<uint32_t>(static_cast<unsigned char>(b.first[i + k])) << (8 * k);
        }
        float f;
        std::memcpy(&f, &bits, 4);
        out.floats.push_back(f);
      }
    } else {
      list.SkipField(wt);
    }
  }
  return out;
}

// seqio's TFExampleDataSource view of one feature (see tf_example.h).
FeatureValue DecodeFeature(const char* data, size_t size,
                           const std::string& key, const std::string& where) {
  RawFeature raw = DecodeRawFeature(data, size, key, where);
  if (raw.kind == RawFeature::kFloat) {
    Array a;
    a.dtype = Array::DType::kFloat32;
    a.shape = {static_cast<int64_t>(raw.floats.size())};
    a.floats = std::move(raw.floats);
    return a;
  }
  if (raw.kind == RawFeature::kBytes) {
    if (raw.bytes.size() != 1) {
      throw Error(where + ": feature '" + key + "' is a bytes_list of " +
                  std::to_string(raw.bytes.size()) +
                  " elements; only single-element bytes_list (a string) is "
                  "supported");
    }
    return std::move(raw.bytes[0]);
  }
  Tokens tokens;
  tokens.reserve(raw.ints.size());
  for (int64_t v : raw.ints) {
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max()) {
      throw Error(where + ": feature '" + key + "' has int64 value " +
                  std::to_string(v) +
                  " that does not fit int32 (t5xx token ids are int32)");
    }
    tokens.push_back(static_cast<int32_t>(v));
  }
  return tokens;
}

// key -> raw Feature bytes (last entry wins, as for protobuf maps).
std::map<std::string, std::pair<const char*, size_t>> FeatureBytes(const std::string& serialized) {
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
  return raw;
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
    } else if (const auto* a = std::get_if<Array>(&value)) {
      // tf.Example holds flat lists: an array's elements in order (its
      // shape is the reader's to know, as TFDS's features.json says).
      std::string packed, list;
      if (a->dtype == Array::DType::kString) {
        for (const std::string& s : a->strings) PutLengthDelimited(&list, 1, s);
        PutLengthDelimited(&feature, 1, list);
      } else if (a->dtype == Array::DType::kFloat32) {
        for (float f : a->floats) {
          uint32_t bits;
          std::memcpy(&bits, &f, 4);
          for (int b = 0; b < 4; ++b) packed.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
        }
        if (!a->floats.empty()) PutLengthDelimited(&list, 1, packed);
        PutLengthDelimited(&feature, 2, list);
      } else {
        for (int64_t v : a->ints) PutVarint(&packed, static_cast<uint64_t>(v));
        if (!a->ints.empty()) PutLengthDelimited(&list, 1, packed);
        PutLengthDelimited(&feature, 3, list);
      }
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
  const auto raw = FeatureBytes(serialized);
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

std::map<std::string, RawFeature> ParseRawTFExample(const std::string& serialized,
                                                    const std::string& where) {
  try {
    std::map<std::string, RawFeature> out;
    for (const auto& [key, v] : FeatureBytes(serialized)) {
      out.emplace(key, DecodeRawFeature(v.first, v.second, key, where));
    }
    return out;
  } catch (const WireFormatError& e) {
    throw Error(where + ": malformed tf.Example: " + e.what() +
                " (is this a TFRecord of tf.Example protos?)");
  }
}

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
