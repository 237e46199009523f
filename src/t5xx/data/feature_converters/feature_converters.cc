// seqio's feature converters (declared in feature_converters.h): the
// FeatureConverter base (length checks, per-example validation, the model
// output check), the EncDec/LM/PrefixLM conversions and their specs, and the
// PassThrough and Decoder converters.
#include "t5xx/data/feature_converters/feature_converters.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/data/pipeline/data_threads.h"
#include "t5xx/util/error.h"
#include "t5xx/util/names.h"

namespace t5xx::seqio {
namespace {

Tokens NonPadding(const Tokens& t) {
  Tokens out(t.size());
  for (size_t i = 0; i < t.size(); ++i) out[i] = t[i] != 0 ? 1 : 0;
  return out;
}

Tokens Take(Example& ex, const std::string& key) {
  return std::move(GetMutableTokens(ex, key));
}

// Moves ex["targets"] (and, when packed, its segment ids/positions) into the
// decoder_* model features of `out` (shared by EncDec and LM converters).
void AddDecoderFeatures(Example& ex, bool packed, int32_t bos, Example& out) {
  Tokens targets = Take(ex, "targets");
  if (packed) {
    Tokens tseg = Take(ex, "targets_segment_ids");
    out["decoder_input_tokens"] = MakeAutoregressiveInputs(targets, tseg, bos);
    out["decoder_segment_ids"] = std::move(tseg);
    out["decoder_positions"] = Take(ex, "targets_positions");
  } else {
    out["decoder_input_tokens"] = MakeAutoregressiveInputs(targets, bos);
  }
  out["decoder_loss_weights"] = NonPadding(targets);
  out["decoder_target_tokens"] = std::move(targets);
}

// Validates each example against the task feature lengths (lazily).
class ValidateDataset : public Dataset {
 public:
  // keep_other: pass features not in `lengths` through instead of dropping.
  ValidateDataset(DatasetPtr input, FeatureLengths lengths, std::string who,
                  bool keep_other = false)
      : input_(std::move(input)), lengths_(std::move(lengths)),
        who_(std::move(who)), keep_other_(keep_other) {}
  std::optional<Example> Next() override {
    auto ex = input_->Next();
    if (!ex) return std::nullopt;
    // Built only for an error: this runs once per example.
    const int64_t index = index_++;
    auto where = [&] { return who_ + " example " + std::to_string(index) + ": "; };
    Example out;
    if (keep_other_) {
      for (auto& kv : *ex)
        if (!lengths_.count(kv.first)) out[kv.first] = std::move(kv.second);
    }
    for (const auto& [k, L] : lengths_) {
      auto it = ex->find(k);
      if (it == ex->end()) {
        std::string have;
        for (const auto& kv : *ex) have += (have.empty() ? "" : ", ") + kv.first;
        throw Error(where() + "missing task feature '" + k + "' (features: [" +
                    have + "])");
      }
      if (!std::holds_alternative<Tokens>(it->second))
        throw Error(where() + "task feature '" + k +
                    "' is a string; tokenize it first");
      const int64_t n = static_cast<int64_t>(std::get<Tokens>(it->second).size());
      if (n > L)
        throw Error(where() + k + " longer than its task feature length (" +
                    std::to_string(n) + " > " + std::to_string(L) +
                    "); raise the length, or let the task trim it (seqio's "
                    "trim_output_features = True, the default)");
      out[k] = std::move(it->second);
    }
    return out;
  }
  nlohmann::json SaveState() const override {
    return {{"index", index_}, {"input", input_->SaveState()}};
  }
  void RestoreState(const nlohmann::json& state) override {
    index_ = StateField(state, "index", "feature converter check").get<int64_t>();
    input_->RestoreState(StateField(state, "input", "feature converter check"));
  }

 private:
  DatasetPtr input_;
  FeatureLengths lengths_;
  std::string who_;
  bool keep_other_ = false;
  int64_t index_ = 0;
};

// Internal invariant: output keys and lengths are exactly the model's.
Example CheckModelOutput(Example ex, const FeatureLengths& model_lengths,
                         const std::string& who) {
  if (ex.size() != model_lengths.size())
    throw std::logic_error(who + ": produced " + std::to_string(ex.size()) +
                           " features, expected " +
                           std::to_string(model_lengths.size()));
  for (const auto& [k, L] : model_lengths) {
    auto it = ex.find(k);
    if (it == ex.end() || !std::holds_alternative<Tokens>(it->second) ||
        static_cast<int64_t>(std::get<Tokens>(it->second).size()) != L)
      throw std::logic_error(who + ": model feature '" + k +
                             "' missing or not of length " + std::to_string(L));
  }
  return ex;
}

// Throws t5xx::Error naming `converter` unless every length is >= 1.
void CheckLengthsPositive(const std::string& converter,
                          const FeatureLengths& task_feature_lengths) {
  for (const auto& [k, L] : task_feature_lengths)
    T5XX_CHECK(L >= 1, converter + ": task feature length of '" + k +
                           "' must be >= 1, got " + std::to_string(L));
}

// The converter and task named in per-example errors.
std::string Who(const std::string& converter, const std::string& task_name) {
  std::string who = converter;
  if (!task_name.empty()) who += " (task '" + task_name + "')";
  return who;
}

// The seqio conversions (each a FeatureConverterSpec::convert) and specs.

DatasetPtr ConvertEncDec(DatasetPtr input, const FeatureLengths& lengths,
                         bool pack, int32_t bos) {
  if (pack) {
    return Map(TrimAndPackDataset(std::move(input), lengths), [bos](Example ex) {
      Example out;
      AddDecoderFeatures(ex, /*packed=*/true, bos, out);
      out["encoder_input_tokens"] = Take(ex, "inputs");
      out["encoder_segment_ids"] = Take(ex, "inputs_segment_ids");
      out["encoder_positions"] = Take(ex, "inputs_positions");
      return out;
    });
  }
  return Map(std::move(input), [bos, lengths](Example ex) {
    ex = TrimAndPad(std::move(ex), lengths);
    Example out;
    AddDecoderFeatures(ex, /*packed=*/false, bos, out);
    out["encoder_input_tokens"] = Take(ex, "inputs");
    return out;
  });
}

DatasetPtr ConvertLM(DatasetPtr input, const FeatureLengths& lengths,
                     bool packed, int32_t bos) {
  DatasetPtr ds = packed ? TrimAndPackDataset(std::move(input), lengths)
                         : Map(std::move(input), [lengths](Example ex) {
                             return TrimAndPad(std::move(ex), lengths);
                           });
  return Map(std::move(ds), [bos, packed](Example ex) {
    Example out;
    AddDecoderFeatures(ex, packed, bos, out);
    return out;
  });
}

// Builds the PrefixLM outputs from per-position tokens, positions and
// (per-position) input widths.
void FinishPrefixLM(Example& out, const Tokens& tok, const Tokens& pos,
                    const Tokens& width, const Tokens& width_add_pos) {
  Tokens loss(tok.size()), causal(tok.size());
  for (size_t i = 0; i < tok.size(); ++i) {
    loss[i] = ((pos[i] < width[i]) != (tok[i] != 0)) ? 1 : 0;
    causal[i] = pos[i] < width_add_pos[i] ? 1 : 0;
  }
  out["decoder_loss_weights"] = std::move(loss);
  out["decoder_causal_attention"] = std::move(causal);
}

DatasetPtr ConvertPrefixLM(DatasetPtr input, const FeatureLengths& lengths,
                           bool packed, int32_t bos) {
  const int64_t L = lengths.at("inputs") + lengths.at("targets");
  // Concatenate inputs ++ targets into "targets" (and, for packing,
  // per-position copies of |inputs| and |inputs|+1 that pack alongside it,
  // so padding gets width 0 and neither loss nor causal attention).
  DatasetPtr concat = Map(std::move(input), [packed](Example ex) {
    Tokens inputs = Take(ex, "inputs");
    Tokens targets = Take(ex, "targets");
    const int32_t width = static_cast<int32_t>(inputs.size());
    Tokens x = std::move(inputs);
    x.insert(x.end(), targets.begin(), targets.end());
    Example out;
    if (packed) {
      // A width of 0 would be read as padding by the packer: store -1 and
      // restore 0 after packing (as seqio does). Width+1 is always >= 1.
      out["inputs_width"] = Tokens(x.size(), width == 0 ? -1 : width);
      out["inputs_width_add_pos"] = Tokens(x.size(), width + 1);
    } else {
      out["inputs_width"] = Tokens{width};
    }
    out["targets"] = std::move(x);
    return out;
  });
  if (packed) {
    FeatureLengths pack_lengths = {
        {"targets", L}, {"inputs_width", L}, {"inputs_width_add_pos", L}};
    return Map(TrimAndPackDataset(std::move(concat), pack_lengths),
               [bos](Example ex) {
                 Example out;
                 Tokens tok = Take(ex, "targets");
                 Tokens seg = Take(ex, "targets_segment_ids");
                 Tokens pos = Take(ex, "targets_positions");
                 Tokens width = Take(ex, "inputs_width");
                 for (auto& w : width) w = std::max(w, 0);
                 FinishPrefixLM(out, tok, pos, width,
                                Take(ex, "inputs_width_add_pos"));
                 out["decoder_input_tokens"] =
                     MakeAutoregressiveInputs(tok, seg, bos);
                 out["decoder_target_tokens"] = std::move(tok);
                 out["decoder_segment_ids"] = std::move(seg);
                 out["decoder_positions"] = std::move(pos);
                 return out;
               });
  }
  return Map(std::move(concat), [bos, L](Example ex) {
    const int32_t w = GetTokens(ex, "inputs_width").at(0);
    Tokens tok = Take(ex, "targets");
    tok.resize(static_cast<size_t>(L), 0);
    Tokens pos(tok.size());
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
    Example out;
    FinishPrefixLM(out, tok, pos, Tokens(tok.size(), w),
                   Tokens(tok.size(), w + 1));
    out["decoder_input_tokens"] = MakeAutoregressiveInputs(tok, bos);
    out["decoder_target_tokens"] = std::move(tok);
    return out;
  });
}

FeatureConverterSpec EncDecSpec() {
  return {"EncDecFeatureConverter",
          {"inputs", "targets"},
          {"encoder_input_tokens", "decoder_target_tokens",
           "decoder_input_tokens", "decoder_loss_weights"},
          {"encoder_segment_ids", "encoder_positions", "decoder_segment_ids",
           "decoder_positions"},
          [](const std::string& k, const FeatureLengths& lengths) {
            return lengths.at(k.rfind("encoder_", 0) == 0 ? "inputs" : "targets");
          },
          ConvertEncDec};
}

FeatureConverterSpec LMSpec() {
  return {"LMFeatureConverter",
          {"targets"},
          {"decoder_target_tokens", "decoder_input_tokens",
           "decoder_loss_weights"},
          {"decoder_segment_ids", "decoder_positions"},
          [](const std::string&, const FeatureLengths& lengths) {
            return lengths.at("targets");
          },
          ConvertLM};
}

FeatureConverterSpec PrefixLMSpec(std::string name = "PrefixLMFeatureConverter") {
  return {std::move(name),
          {"inputs", "targets"},
          {"decoder_target_tokens", "decoder_input_tokens",
           "decoder_loss_weights", "decoder_causal_attention"},
          {"decoder_segment_ids", "decoder_positions"},
          [](const std::string&, const FeatureLengths& lengths) {
            return lengths.at("inputs") + lengths.at("targets");
          },
          ConvertPrefixLM};
}

}  // namespace

std::vector<std::string> FeatureConverter::ModelFeatures() const {
  std::vector<std::string> f = spec_.model_features;
  if (pack_)
    f.insert(f.end(), spec_.packing_features.begin(),
             spec_.packing_features.end());
  return f;
}

FeatureLengths FeatureConverter::GetModelFeatureLengths(
    const FeatureLengths& task_feature_lengths) const {
  ValidateLengths(task_feature_lengths);
  FeatureLengths out;
  for (const auto& k : ModelFeatures())
    out[k] = spec_.model_feature_length(k, task_feature_lengths);
  return out;
}

DatasetPtr FeatureConverter::ConvertValidated(
    DatasetPtr input, const FeatureLengths& task_feature_lengths) const {
  return spec_.convert(std::move(input), task_feature_lengths, pack_, bos_id_);
}

void FeatureConverter::ValidateLengths(
    const FeatureLengths& task_feature_lengths) const {
  const std::vector<std::string>& expected = TaskFeatures();
  std::vector<std::string> missing, extra;
  for (const auto& k : expected)
    if (!task_feature_lengths.count(k)) missing.push_back(k);
  for (const auto& kv : task_feature_lengths)
    if (std::find(expected.begin(), expected.end(), kv.first) == expected.end())
      extra.push_back(kv.first);
  if (!missing.empty() || !extra.empty()) {
    std::string msg = name() + ": task_feature_lengths must have exactly the "
                      "keys " + BracketedList(expected);
    if (!missing.empty()) msg += "; missing " + BracketedList(missing);
    if (!extra.empty()) msg += "; unexpected " + BracketedList(extra);
    throw Error(msg);
  }
  CheckLengthsPositive(name(), task_feature_lengths);
}

DatasetPtr FeatureConverter::operator()(
    DatasetPtr input, const FeatureLengths& task_feature_lengths,
    const std::string& task_name) const {
  T5XX_CHECK(input != nullptr, name() + ": input dataset is null");
  ValidateLengths(task_feature_lengths);
  const std::string who = Who(name(), task_name);
  // Pipeline parallelism: the task's steps on one thread, packing on this.
  input = Prefetch(std::move(input), DataThreads() > 1 ? kConverterPrefetch : 0);
  DatasetPtr ds = std::make_unique<ValidateDataset>(std::move(input),
                                                    task_feature_lengths, who);
  ds = ConvertValidated(std::move(ds), task_feature_lengths);
  FeatureLengths model_lengths = GetModelFeatureLengths(task_feature_lengths);
  return Map(std::move(ds), [model_lengths, who](Example ex) {
    return CheckModelOutput(std::move(ex), model_lengths, who);
  });
}

std::vector<Example> FeatureConverter::Convert(
    std::vector<Example> examples, const FeatureLengths& task_feature_lengths,
    const std::string& task_name) const {
  auto ds = (*this)(FromVector(std::move(examples)), task_feature_lengths,
                    task_name);
  return Collect(*ds);
}

EncDecFeatureConverter::EncDecFeatureConverter(bool pack, int32_t bos_id)
    : FeatureConverter(EncDecSpec(), pack, bos_id) {}

LMFeatureConverter::LMFeatureConverter(bool pack, int32_t bos_id)
    : FeatureConverter(LMSpec(), pack, bos_id) {}

PrefixLMFeatureConverter::PrefixLMFeatureConverter(bool pack, int32_t bos_id)
    : FeatureConverter(PrefixLMSpec(), pack, bos_id) {}

// ---- PassThroughFeatureConverter -------------------------------------------

PassThroughFeatureConverter::PassThroughFeatureConverter(bool pack,
                                                         int32_t bos_id)
    : FeatureConverter({"PassThroughFeatureConverter", {}, {}, {}, nullptr, nullptr},
                       pack, bos_id) {
  T5XX_CHECK(!pack, "PassThroughFeatureConverter: pack must be false (it passes "
               "task features through unchanged and cannot pack)");
}

void PassThroughFeatureConverter::ValidateLengths(
    const FeatureLengths& task_feature_lengths) const {
  CheckLengthsPositive(name(), task_feature_lengths);
}

FeatureLengths PassThroughFeatureConverter::GetModelFeatureLengths(
    const FeatureLengths& task_feature_lengths) const {
  ValidateLengths(task_feature_lengths);
  return task_feature_lengths;
}

DatasetPtr PassThroughFeatureConverter::operator()(
    DatasetPtr input, const FeatureLengths& task_feature_lengths,
    const std::string& task_name) const {
  T5XX_CHECK(input != nullptr, name() + ": input dataset is null");
  ValidateLengths(task_feature_lengths);
  return std::make_unique<ValidateDataset>(std::move(input),
                                           task_feature_lengths,
                                           Who(name(), task_name),
                                           /*keep_other=*/true);
}

DatasetPtr PassThroughFeatureConverter::ConvertValidated(
    DatasetPtr input, const FeatureLengths&) const {
  return input;
}

// ---- DecoderFeatureConverter ------------------------------------------------

DecoderFeatureConverter::DecoderFeatureConverter(bool pack, int32_t bos_id)
    : FeatureConverter(PrefixLMSpec("DecoderFeatureConverter"), pack, bos_id),
      lm_(pack, bos_id),
      prefix_lm_(pack, bos_id) {}

const FeatureConverter& DecoderFeatureConverter::Choose(
    const FeatureLengths& task_feature_lengths) const {
  const bool has_inputs = task_feature_lengths.count("inputs") > 0;
  const bool has_targets = task_feature_lengths.count("targets") > 0;
  if (has_targets && task_feature_lengths.size() == 1) return lm_;
  if (has_inputs && has_targets && task_feature_lengths.size() == 2)
    return prefix_lm_;
  std::vector<std::string> keys;
  for (const auto& kv : task_feature_lengths) keys.push_back(kv.first);
  throw Error(name() + ": task_feature_lengths must have the keys ['targets'] "
              "(LMFeatureConverter) or ['inputs', 'targets'] "
              "(PrefixLMFeatureConverter); got " +
              (keys.empty() ? std::string("no keys") : BracketedList(keys)));
}

std::string DecoderFeatureConverter::ChosenName(
    const FeatureLengths& task_feature_lengths) const {
  return Choose(task_feature_lengths).name();
}

void DecoderFeatureConverter::ValidateLengths(
    const FeatureLengths& task_feature_lengths) const {
  Choose(task_feature_lengths).ValidateLengths(task_feature_lengths);
}

FeatureLengths DecoderFeatureConverter::GetModelFeatureLengths(
    const FeatureLengths& task_feature_lengths) const {
  return Choose(task_feature_lengths)
      .GetModelFeatureLengths(task_feature_lengths);
}

DatasetPtr DecoderFeatureConverter::operator()(
    DatasetPtr input, const FeatureLengths& task_feature_lengths,
    const std::string& task_name) const {
  return Choose(task_feature_lengths)(std::move(input), task_feature_lengths,
                                      task_name);
}

DatasetPtr DecoderFeatureConverter::ConvertValidated(
    DatasetPtr, const FeatureLengths&) const {
  // Not reached: operator() delegates to the chosen converter.
  throw std::logic_error(name() + ": ConvertValidated is not used");
}

}  // namespace t5xx::seqio
