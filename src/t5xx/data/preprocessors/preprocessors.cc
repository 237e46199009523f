// seqio's generic preprocessors (rekey, tokenize, append_eos, ...) (see
// preprocessors.h).
#include "t5xx/data/preprocessors/preprocessors.h"

#include <utility>

#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

Preprocessor MakePreprocessor(std::function<DatasetPtr(DatasetPtr)> fn) {
  return [fn = std::move(fn)](DatasetPtr ds, const PreprocessContext&) {
    return fn(std::move(ds));
  };
}

// ---------------------------------------------------------------------------

Example RekeyExample(const Example& ex,
                     const std::map<std::string, std::string>& key_map) {
  Example out;
  for (const auto& [new_key, old_key] : key_map) {
    if (old_key.empty()) {
      out[new_key] = std::string();
      continue;
    }
    auto it = ex.find(old_key);
    if (it == ex.end()) {
      std::string have;
      for (const auto& kv : ex) have += (have.empty() ? "" : ", ") + kv.first;
      throw Error("rekey: example has no feature '" + old_key +
                  "' (wanted for new key '" + new_key + "'; features: [" +
                  have + "])");
    }
    out[new_key] = it->second;
  }
  return out;
}

DatasetPtr Rekey(DatasetPtr input, std::map<std::string, std::string> key_map) {
  return Map(std::move(input), [key_map = std::move(key_map)](Example ex) {
    return RekeyExample(ex, key_map);
  });
}

Preprocessor RekeyPreprocessor(std::map<std::string, std::string> key_map) {
  return [key_map = std::move(key_map)](DatasetPtr ds,
                                        const PreprocessContext&) {
    return Rekey(std::move(ds), key_map);
  };
}

// ---------------------------------------------------------------------------

namespace {

int32_t EosFor(const std::string& key, const Feature& f, const char* who) {
  T5XX_CHECK(f.vocabulary != nullptr, std::string(who) + ": output feature '" + key +
                                     "' has add_eos but no vocabulary");
  const int32_t eos = f.vocabulary->eos_id();
  T5XX_CHECK(eos >= 0, std::string(who) + ": the vocabulary of output feature '" + key +
                           "' has no EOS id (e.g. seqio.PassThroughVocabulary.eos_id = None); "
                           "give it one, or set add_eos = False on the feature");
  return eos;
}

}  // namespace

Example TokenizeExample(Example ex, const OutputFeatures& output_features,
                        bool copy_pretokenized, bool with_eos) {
  for (const auto& [key, feature] : output_features) {
    auto it = ex.find(key);
    if (it == ex.end() || !std::holds_alternative<std::string>(it->second))
      continue;
    T5XX_CHECK(feature.vocabulary != nullptr,
          "tokenize: output feature '" + key + "' has no vocabulary");
    std::string text = std::get<std::string>(it->second);
    Tokens ids = feature.vocabulary->Encode(text);
    if (with_eos && feature.add_eos) ids.push_back(EosFor(key, feature, "tokenize(with_eos)"));
    it->second = std::move(ids);
    if (copy_pretokenized) ex[key + "_pretokenized"] = std::move(text);
  }
  return ex;
}

DatasetPtr Tokenize(DatasetPtr input, OutputFeatures output_features,
                    bool copy_pretokenized, bool with_eos, int num_threads) {
  T5XX_CHECK(num_threads >= 0, "tokenize: num_threads must be >= 0, got " +
                                   std::to_string(num_threads));
  return ParallelMap(
      std::move(input),
      [of = std::move(output_features), copy_pretokenized, with_eos](Example ex) {
        return TokenizeExample(std::move(ex), of, copy_pretokenized, with_eos);
      },
      ResolveDataThreads(num_threads));
}

Preprocessor TokenizePreprocessor(bool copy_pretokenized, bool with_eos) {
  return [=](DatasetPtr ds, const PreprocessContext& ctx) {
    return Tokenize(std::move(ds), ctx.output_features, copy_pretokenized,
                    with_eos);
  };
}

// ---------------------------------------------------------------------------


DatasetPtr AppendEos(DatasetPtr input, OutputFeatures output_features) {
  return Map(std::move(input), [of = std::move(output_features)](Example ex) {
    for (const auto& [key, f] : of) {
      if (!f.add_eos) continue;
      auto it = ex.find(key);
      if (it == ex.end()) continue;
      GetMutableTokens(ex, key).push_back(EosFor(key, f, "append_eos"));
    }
    return ex;
  });
}

Preprocessor AppendEosPreprocessor() {
  return [](DatasetPtr ds, const PreprocessContext& ctx) {
    return AppendEos(std::move(ds), ctx.output_features);
  };
}

Tokens AppendEosAfterTrim(const Tokens& tokens, int32_t eos_id,
                          std::optional<int64_t> length) {
  Tokens out = tokens;
  if (length) {
    T5XX_CHECK(*length >= 1, "append_eos_after_trim: sequence length must be >= 1, "
                        "got " + std::to_string(*length));
    if (static_cast<int64_t>(out.size()) > *length - 1)
      out.resize(static_cast<size_t>(*length - 1));
  }
  out.push_back(eos_id);
  return out;
}

DatasetPtr AppendEosAfterTrim(DatasetPtr input, OutputFeatures output_features,
                              FeatureLengths sequence_length) {
  return Map(std::move(input), [of = std::move(output_features),
                                sl = std::move(sequence_length)](Example ex) {
    for (const auto& [key, f] : of) {
      if (!f.add_eos) continue;
      if (ex.find(key) == ex.end()) continue;
      Tokens& t = GetMutableTokens(ex, key);
      std::optional<int64_t> len;
      if (auto it = sl.find(key); it != sl.end()) len = it->second;
      t = AppendEosAfterTrim(t, EosFor(key, f, "append_eos_after_trim"), len);
    }
    return ex;
  });
}

Preprocessor AppendEosAfterTrimPreprocessor() {
  return [](DatasetPtr ds, const PreprocessContext& ctx) {
    return AppendEosAfterTrim(std::move(ds), ctx.output_features,
                              ctx.sequence_length);
  };
}

Tokens TruncateLeft(const Tokens& tokens, int64_t length) {
  T5XX_CHECK(length >= 0, "truncate_inputs_left: sequence length must be >= 0, "
                     "got " + std::to_string(length));
  if (static_cast<int64_t>(tokens.size()) <= length) return tokens;
  return Tokens(tokens.end() - length, tokens.end());
}

DatasetPtr TruncateInputsLeft(DatasetPtr input, FeatureLengths sequence_length) {
  auto it = sequence_length.find("inputs");
  T5XX_CHECK(it != sequence_length.end(),
        "truncate_inputs_left: sequence_length has no 'inputs' length");
  const int64_t L = it->second;
  T5XX_CHECK(L >= 0, "truncate_inputs_left: sequence length must be >= 0, got " +
                    std::to_string(L));
  return Map(std::move(input), [L](Example ex) {
    if (ex.find("inputs") == ex.end()) return ex;
    Tokens& t = GetMutableTokens(ex, "inputs");
    t = TruncateLeft(t, L);
    return ex;
  });
}

Preprocessor TruncateInputsLeftPreprocessor() {
  return [](DatasetPtr ds, const PreprocessContext& ctx) {
    return TruncateInputsLeft(std::move(ds), ctx.sequence_length);
  };
}

}  // namespace t5xx::seqio
