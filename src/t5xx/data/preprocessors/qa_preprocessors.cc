// t5's squad, squad_span_space_tokenized, trivia_qa and
// trivia_qa_truncate_inputs (see qa_preprocessors.h).
#include "t5xx/data/preprocessors/qa_preprocessors.h"

#include <algorithm>
#include <memory>
#include <regex>
#include <utility>

#include "t5xx/data/pipeline/utils.h"
#include "t5xx/data/preprocessors/catalog_features.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

using catalog::PadPunctuation;
using catalog::RequireText;
using catalog::RequireTexts;
using catalog::StringJoin;

namespace {

// The stream of trivia_qa_truncate_inputs' window draws (t5xx's own; see
// data/pipeline/seed_purposes.h for the others).
constexpr uint64_t kTriviaQaWindow = 0x7471617472756E63ULL;  // "tqatrunc"

}  // namespace

Example SquadExample(const Example& ex, bool include_context, uint64_t index) {
  const char* who = "squad";
  const std::vector<std::string>& answers = RequireTexts(ex, "answers/text", who, index);
  T5XX_CHECK(!answers.empty(), catalog::Where(who, index) +
                                   " has no answers ('answers/text' is empty; t5 takes "
                                   "answers[0] as the targets)");
  std::vector<std::string> padded;
  padded.reserve(answers.size());
  for (const std::string& a : answers) padded.push_back(PadPunctuation(a));
  const std::string q = PadPunctuation(RequireText(ex, "question", who, index));
  const std::string c = PadPunctuation(RequireText(ex, "context", who, index));
  Example out;
  out["inputs"] = include_context ? StringJoin({"question:", q, "context:", c})
                                  : StringJoin({"squad trivia question:", q});
  out["targets"] = padded[0];
  out["id"] = catalog::Require(ex, "id", who, index);
  out["context"] = c;
  out["question"] = q;
  out["answers"] = Array::Strings(std::move(padded));
  return out;
}

DatasetPtr Squad(DatasetPtr input, bool include_context) {
  return MapIndexed(std::move(input), [include_context](Example ex, uint64_t index) {
    return SquadExample(ex, include_context, index);
  });
}

Preprocessor SquadPreprocessor(bool include_context) {
  return MakePreprocessor(
      [include_context](DatasetPtr ds) { return Squad(std::move(ds), include_context); });
}

std::string SpanAnswer(const std::string& context, const std::string& answer) {
  const std::vector<std::string> n = catalog::SplitOnSpace(catalog::NonWordToSpace(answer));
  const std::vector<std::string> h = catalog::SplitOnSpace(catalog::NonWordToSpace(context));
  const int64_t ln = static_cast<int64_t>(n.size());
  const int64_t lh = static_cast<int64_t>(h.size());
  for (int64_t i = 0; i < lh - ln; ++i) {  // t5: range(0, l_h - l_n)
    if (std::equal(n.begin(), n.end(), h.begin() + i)) {
      return "start: " + std::to_string(i) + " end: " + std::to_string(i + ln - 1);
    }
  }
  return "";
}

DatasetPtr SquadSpanSpaceTokenized(DatasetPtr input) {
  return MapIndexed(Squad(std::move(input), true),
                    [](Example ex, uint64_t) -> std::optional<Example> {
                      std::string span = SpanAnswer(GetString(ex, "context"),
                                                    GetString(ex, "targets"));
                      if (span.empty()) return std::nullopt;
                      ex["targets"] = std::move(span);
                      return ex;
                    });
}

Preprocessor SquadSpanSpaceTokenizedPreprocessor() {
  return MakePreprocessor([](DatasetPtr ds) { return SquadSpanSpaceTokenized(std::move(ds)); });
}

namespace {

bool HasRe2Meta(const std::string& s) {
  return s.find_first_of("\\.+*?()|[]{}^$") != std::string::npos;
}

}  // namespace

std::vector<Example> TriviaQaExamples(const Example& ex, uint64_t index) {
  const char* who = "trivia_qa";
  std::vector<std::string> contexts;
  if (catalog::HasTopLevel(ex, "entity_pages")) {
    const auto& c = RequireTexts(ex, "entity_pages/wiki_context", who, index);
    contexts.insert(contexts.end(), c.begin(), c.end());
  }
  if (catalog::HasTopLevel(ex, "search_results")) {
    const auto& c = RequireTexts(ex, "search_results/search_context", who, index);
    contexts.insert(contexts.end(), c.begin(), c.end());
  }
  const std::vector<std::string>& answers =
      RequireTexts(ex, "answer/normalized_aliases", who, index);
  const std::string q = PadPunctuation(RequireText(ex, "question", who, index));
  std::vector<Example> out;
  if (answers.empty()) return out;
  std::vector<std::string> padded_answers;
  std::vector<std::string> patterns;  // lowered; "" when matched as a substring
  std::vector<std::unique_ptr<std::regex>> regexes;
  for (const std::string& a : answers) {
    padded_answers.push_back(PadPunctuation(a));
    const std::string lowered = catalog::AsciiLower(padded_answers.back());
    patterns.push_back(lowered);
    if (HasRe2Meta(lowered)) {
      try {
        regexes.push_back(std::make_unique<std::regex>(".*" + lowered + ".*",
                                                       std::regex::ECMAScript));
      } catch (const std::regex_error& e) {
        throw Error(catalog::Where(who, index) + ": answer '" + a +
                    "' is not a valid regular expression after t5's punctuation padding "
                    "(t5 matches answers as regular expressions): " + e.what());
      }
    } else {
      regexes.push_back(nullptr);
    }
  }
  for (const std::string& context : contexts) {
    const std::string c = PadPunctuation(context);
    const std::string lowered = catalog::AsciiLower(c);
    // '.' never meets a newline: P collapsed them to spaces.
    std::string inputs;
    for (size_t j = 0; j < answers.size(); ++j) {
      const bool found = regexes[j] ? std::regex_match(lowered, *regexes[j])
                                    : lowered.find(patterns[j]) != std::string::npos;
      if (!found) continue;
      if (inputs.empty()) inputs = StringJoin({"question:", q, "context:", c});
      Example e;
      e["inputs"] = inputs;
      e["targets"] = padded_answers[j];
      out.push_back(std::move(e));
    }
  }
  return out;
}

DatasetPtr TriviaQa(DatasetPtr input) {
  auto counter = std::make_shared<uint64_t>(0);  // names examples in messages
  return FlatMap(std::move(input),
                 [counter](Example ex) { return TriviaQaExamples(ex, (*counter)++); });
}

Preprocessor TriviaQaPreprocessor() {
  return MakePreprocessor([](DatasetPtr ds) { return TriviaQa(std::move(ds)); });
}

std::optional<TruncateRange> TriviaQaTruncateRange(const Tokens& inputs,
                                                   const Tokens& targets,
                                                   int64_t max_input_tokens) {
  const int64_t n = static_cast<int64_t>(inputs.size());
  const int64_t m = static_cast<int64_t>(targets.size());
  T5XX_CHECK(m > 0, "trivia_qa_truncate_inputs: empty targets (no answer to keep in the "
                    "truncated inputs)");
  int64_t start = -1;
  for (int64_t i = 0; i + m <= n; ++i) {
    if (std::equal(targets.begin(), targets.end(), inputs.begin() + i)) {
      start = i;
      break;
    }
  }
  if (start < 0) return std::nullopt;
  TruncateRange r;
  r.lo = std::max<int64_t>(0, start - (max_input_tokens - m));
  r.hi = std::min<int64_t>(start, n - max_input_tokens) + 1;
  T5XX_CHECK(r.lo < r.hi,
             "trivia_qa_truncate_inputs: the targets (" + std::to_string(m) +
                 " tokens) cannot fit a window of sequence_length['inputs'] = " +
                 std::to_string(max_input_tokens) +
                 " tokens (t5's window draw fails here too: minval >= maxval)");
  return r;
}

DatasetPtr TriviaQaTruncateInputs(DatasetPtr input, const FeatureLengths& sequence_length,
                                  uint64_t seed) {
  auto it = sequence_length.find("inputs");
  T5XX_CHECK(it != sequence_length.end(),
             "trivia_qa_truncate_inputs: sequence_length has no 'inputs' entry");
  const int64_t max_tokens = it->second;
  T5XX_CHECK(max_tokens >= 1, "trivia_qa_truncate_inputs: sequence_length['inputs'] must "
                              "be >= 1, got " + std::to_string(max_tokens));
  return MapIndexed(std::move(input), [=](Example ex,
                                          uint64_t index) -> std::optional<Example> {
    const char* who = "trivia_qa_truncate_inputs";
    Tokens inputs = catalog::RequireTokens(ex, "inputs", who, index);
    const Tokens& targets = catalog::RequireTokens(ex, "targets", who, index);
    if (static_cast<int64_t>(inputs.size()) > max_tokens) {
      std::optional<TruncateRange> r;
      try {
        r = TriviaQaTruncateRange(inputs, targets, max_tokens);
      } catch (const Error& e) {
        throw Error(catalog::Where(who, index) + ": " + e.what());
      }
      if (!r) return std::nullopt;
      StatelessRng rng(seed, index, kTriviaQaWindow);
      const int64_t s = r->lo + rng.UniformInt(r->hi - r->lo);
      inputs = Tokens(inputs.begin() + s, inputs.begin() + s + max_tokens);
    }
    if (inputs.empty()) return std::nullopt;
    Example out;
    out["inputs"] = std::move(inputs);
    out["targets"] = targets;
    return out;
  });
}

Preprocessor TriviaQaTruncateInputsPreprocessor() {
  return [](DatasetPtr ds, const PreprocessContext& ctx) {
    return TriviaQaTruncateInputs(std::move(ds), ctx.sequence_length, ctx.seed);
  };
}

}  // namespace t5xx::seqio
