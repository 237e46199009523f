// t5's wsc_simple, wnli_simple and definite_pronoun_resolution_simple (see
// wsc_preprocessors.h).
#include "t5xx/data/preprocessors/wsc_preprocessors.h"

#include <algorithm>
#include <regex>
#include <utility>
#include <vector>

#include "t5xx/data/preprocessors/catalog_features.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio {

using catalog::RequireText;

std::string WscInputs(const std::string& text, int64_t span2_index,
                      const std::string& span2_text) {
  const std::vector<std::string> words = catalog::SplitOnSpace(text);
  T5XX_CHECK(span2_index > 0 && span2_index < static_cast<int64_t>(words.size()),
             "span2_index " + std::to_string(span2_index) + " must be in [1, " +
                 std::to_string(words.size()) + ") (t5 cannot blank the first word or "
                 "one past the text's " + std::to_string(words.size()) + " words)");
  // t5's two hard-coded WSC texts (SuperGLUE's span2_index is off there).
  static const std::string kPony =
      "The boy continued to whip the pony , and eventually the pony threw him over. "
      "John laughed out quite loud. \"Good for him,\" he said. ";
  static const std::string kPebble =
      "When they had eventually calmed down a bit , and had gotten home, Mr. Farley "
      "put the magic pebble in an iron safe . Some day they might want to use it , but "
      "really for now, what more could they wish for?";
  if (text == kPony)
    return "The boy continued to whip the pony , and eventually the pony threw him over. "
           "John laughed out quite loud. \"Good for X ,\" he said.";
  if (text == kPebble)
    return "When they had eventually calmed down a bit , and had gotten home, Mr. Farley "
           "put the magic pebble in an iron safe . Some day they might want to use X , "
           "but really for now, what more could they wish for?";
  const size_t p = static_cast<size_t>(span2_index);
  T5XX_CHECK(words[p] == span2_text, "word " + std::to_string(p) + " of the text is '" +
                                         words[p] + "', not span2_text '" + span2_text + "'");
  return catalog::JoinOnSpace(words, 0, p) + " X " + catalog::JoinOnSpace(words, p + 1);
}

namespace {

FeatureValue LabelOrZero(const Example& ex) {
  auto it = ex.find("label");
  return it == ex.end() ? FeatureValue(Array::Int32(0)) : it->second;
}

Example WscSimpleExample(const Example& ex, const std::string& label, uint64_t index) {
  const char* who = "wsc_simple";
  const std::string& span2_text = RequireText(ex, "span2_text", who, index);
  std::string inputs;
  try {
    inputs = WscInputs(RequireText(ex, "text", who, index),
                       catalog::RequireInt(ex, "span2_index", who, index), span2_text);
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(who, 0) == 0) throw;
    throw Error(catalog::Where(who, index) + ": " + msg);
  }
  Example out;
  out["inputs"] = label + " " + catalog::ReplaceAll(inputs, " X ", " *" + span2_text + "* ");
  out["targets"] = RequireText(ex, "span1_text", who, index);
  out["label"] = LabelOrZero(ex);
  out["idx"] = catalog::Require(ex, "idx", who, index);
  return out;
}

}  // namespace

DatasetPtr WscSimple(DatasetPtr input, std::string label, bool correct_referent_only) {
  return MapIndexed(std::move(input), [=](Example ex, uint64_t index) -> std::optional<Example> {
    if (correct_referent_only) {
      if (!ex.count("label")) return std::nullopt;  // t5: x.get('label', False)
      if (catalog::RequireInt(ex, "label", "wsc_simple", index) == 0) return std::nullopt;
    }
    return WscSimpleExample(ex, label, index);
  });
}

Preprocessor WscSimplePreprocessor(std::string label, bool correct_referent_only) {
  return MakePreprocessor([=](DatasetPtr ds) {
    return WscSimple(std::move(ds), label, correct_referent_only);
  });
}

// ----------------------------------------------------------------- wnli_simple
namespace {

std::string AsciiStrip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool IsEndPunct(char c) { return c == '.' || c == ',' || c == '?' || c == '!'; }

// t5's split_clean: strip, lower, split on ' ', cut one trailing . , ? !,
// drop empty words.
std::vector<std::string> SplitClean(const std::string& s) {
  std::vector<std::string> out;
  for (std::string w : catalog::SplitOnSpace(catalog::AsciiLower(AsciiStrip(s)))) {
    if (!w.empty() && IsEndPunct(w.back())) w.pop_back();
    if (!w.empty()) out.push_back(std::move(w));
  }
  return out;
}

// t5's get_post_match_size: the longest prefix of `words` whose ' '-join is
// a substring of the ' '-joined hypothesis.
size_t PostMatchSize(const std::vector<std::string>& hypothesis,
                     const std::vector<std::string>& words) {
  const std::string hyp = catalog::JoinOnSpace(hypothesis);
  for (size_t i = 0; i < words.size(); ++i)
    if (hyp.find(catalog::JoinOnSpace(words, 0, i + 1)) == std::string::npos) return i;
  return words.size();
}

size_t PreMatchSize(std::vector<std::string> hypothesis, std::vector<std::string> words) {
  std::reverse(hypothesis.begin(), hypothesis.end());
  std::reverse(words.begin(), words.end());
  return PostMatchSize(hypothesis, words);
}

struct PronounMatch {
  size_t score = 0;
  size_t index = 0;
  std::string candidate;
};

std::optional<std::string> SearchGroup1(const std::string& pattern, const std::string& text) {
  std::smatch m;
  if (std::regex_search(text, m, std::regex(pattern, std::regex::ECMAScript)))
    return m[1].str();
  return std::nullopt;
}

PronounMatch GetPronounMatch(const std::vector<std::string>& premise,
                             const std::vector<std::string>& hypothesis, size_t index) {
  const std::vector<std::string> pre(premise.begin(), premise.begin() + index);
  const std::vector<std::string> post(premise.begin() + index + 1, premise.end());
  const size_t pre_size = PreMatchSize(hypothesis, pre);
  const size_t post_size = PostMatchSize(hypothesis, post);
  PronounMatch match;
  match.score = pre_size + post_size;
  match.index = index;
  if (match.score == 0) return match;
  // t5: pre[-pre_match_size or len(pre):] -- all of pre when pre_match_size is 0.
  const size_t keep = pre_size == 0 ? pre.size() : pre_size;
  const std::vector<std::string> pre_match(pre.end() - keep, pre.end());
  const std::vector<std::string> post_match(post.begin(), post.begin() + post_size);
  const std::string hyp = catalog::JoinOnSpace(hypothesis);
  auto join = [](std::vector<std::string> parts) { return catalog::JoinOnSpace(parts); };
  std::vector<std::string> p1 = pre_match;
  p1.push_back("(.+)");
  p1.insert(p1.end(), post_match.begin(), post_match.end());
  std::vector<std::string> p2{"^(.+)"};
  p2.insert(p2.end(), post_match.begin(), post_match.end());
  std::vector<std::string> p3 = pre_match;
  p3.push_back("(.+)$");
  std::optional<std::string> m = SearchGroup1(join(p1), hyp);
  if (!m) m = SearchGroup1(join(p2), hyp);
  if (!m) m = SearchGroup1(join(p3), hyp);
  if (m) match.candidate = *m;
  return match;
}

std::string RegexEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string("\\^$.|?*+()[]{}/").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string ProcessCandidate(const std::string& raw, const std::string& hypothesis) {
  // clean_up: drop everything before the last-placed first article.
  std::vector<std::string> words = catalog::SplitOnSpace(raw);
  size_t article = 0;
  for (const char* art : {"a", "an", "the"}) {
    auto it = std::find(words.begin(), words.end(), art);
    if (it != words.end()) article = std::max(article, static_cast<size_t>(it - words.begin()));
  }
  const std::string candidate = catalog::JoinOnSpace(words, article);
  std::string pattern = "(";
  const std::vector<std::string> pieces = catalog::SplitOnSpace(candidate);
  for (size_t i = 0; i < pieces.size(); ++i)
    pattern += (i ? " " : "") + RegexEscape(pieces[i]) + "(?:\\.|,|\\?|\\!)?";
  pattern += ")";
  std::smatch m;
  T5XX_CHECK(std::regex_search(hypothesis, m,
                               std::regex(pattern, std::regex::ECMAScript | std::regex::icase)),
             "unable to find candidate \"" + candidate + "\" in hypothesis \"" + hypothesis +
                 "\"");
  std::string out = m[1].str();
  if (!out.empty() && IsEndPunct(out.back())) out.pop_back();
  // make_nonpossessive
  if (out.size() >= 1 && out.back() == '\'') {
    out.pop_back();
  } else if (out.size() >= 2 && out.compare(out.size() - 2, 2, "'s") == 0) {
    out.resize(out.size() - 2);
  }
  return out;
}

std::string Highlight(const std::string& sentence, size_t index) {
  std::vector<std::string> words = catalog::SplitOnSpace(sentence);
  T5XX_CHECK(index < words.size() && !words[index].empty(),
             "the pronoun's index " + std::to_string(index) +
                 " does not name a word of the premise split on ' ' (t5 fails here too)");
  std::string& w = words[index];
  if (IsEndPunct(w.back())) {
    w = "*" + w.substr(0, w.size() - 1) + "* " + w.back();
  } else {
    w = "*" + w + "*";
  }
  return catalog::JoinOnSpace(words);
}

}  // namespace

Example WnliSimpleExample(const Example& ex, const std::string& label, uint64_t index) {
  const char* who = "wnli_simple";
  const std::string& premise = RequireText(ex, "sentence1", who, index);
  const std::string& hypothesis = RequireText(ex, "sentence2", who, index);
  Example out;
  try {
    static const std::vector<std::string> kPronouns = {"he",  "she",   "they", "it", "her",
                                                       "his", "their", "them", "him"};
    const std::vector<std::string> p = SplitClean(premise);
    const std::vector<std::string> h = SplitClean(hypothesis);
    std::optional<PronounMatch> best;
    for (size_t i = 0; i < p.size(); ++i) {
      if (std::find(kPronouns.begin(), kPronouns.end(), p[i]) == kPronouns.end()) continue;
      PronounMatch m = GetPronounMatch(p, h, i);
      if (!best || m.score > best->score) best = std::move(m);
    }
    T5XX_CHECK(best.has_value(), "the premise has no pronoun (he she they it her his their "
                                 "them him; t5's max() of no candidates fails)");
    out["targets"] = ProcessCandidate(best->candidate, hypothesis);
    out["inputs"] = label + " " + Highlight(premise, best->index);
  } catch (const std::regex_error& e) {
    throw Error(catalog::Where(who, index) + ": a regular expression t5 builds from the "
                "words is invalid: " + e.what());
  } catch (const Error& e) {
    throw Error(catalog::Where(who, index) + ": " + e.what());
  }
  out["premise"] = premise;
  out["hypothesis"] = hypothesis;
  out["label"] = LabelOrZero(ex);
  out["idx"] = catalog::Require(ex, "idx", who, index);
  return out;
}

DatasetPtr WnliSimple(DatasetPtr input, std::string label) {
  return MapIndexed(std::move(input), [label](Example ex, uint64_t index) {
    return WnliSimpleExample(ex, label, index);
  });
}

Preprocessor WnliSimplePreprocessor(std::string label) {
  return MakePreprocessor([label](DatasetPtr ds) { return WnliSimple(std::move(ds), label); });
}

// ---------------------------------------------------------------------- DPR
Example DefinitePronounResolutionSimpleExample(const Example& ex, const std::string& label,
                                               uint64_t index) {
  const char* who = "definite_pronoun_resolution_simple";
  const std::string& sentence = RequireText(ex, "sentence", who, index);
  const std::string& pronoun = RequireText(ex, "pronoun", who, index);
  const std::vector<std::string>& candidates =
      catalog::RequireTexts(ex, "candidates", who, index);
  int64_t k = catalog::RequireInt(ex, "label", who, index);
  const int64_t n = static_cast<int64_t>(candidates.size());
  // t5's x['candidates'][x['label']]: a negative index counts from the end.
  T5XX_CHECK(k >= -n && k < n, catalog::Where(who, index) + " has label " + std::to_string(k) +
                                   ", outside its " + std::to_string(n) + " candidates");
  if (k < 0) k += n;
  // regex_replace(' (<pronoun>)( |\.|,)', ' *\1*\2', replace_global=False).
  std::string marked = sentence;
  for (size_t i = 0; i < sentence.size(); ++i) {
    const size_t after = i + 1 + pronoun.size();
    if (sentence[i] == ' ' && sentence.compare(i + 1, pronoun.size(), pronoun) == 0 &&
        after < sentence.size() &&
        (sentence[after] == ' ' || sentence[after] == '.' || sentence[after] == ',')) {
      marked = sentence.substr(0, i) + " *" + pronoun + "*" + sentence.substr(after);
      break;
    }
  }
  Example out;
  out["inputs"] = label + " " + marked;
  out["targets"] = candidates[static_cast<size_t>(k)];
  return out;
}

DatasetPtr DefinitePronounResolutionSimple(DatasetPtr input, std::string label) {
  return MapIndexed(std::move(input), [label](Example ex, uint64_t index) {
    return DefinitePronounResolutionSimpleExample(ex, label, index);
  });
}

Preprocessor DefinitePronounResolutionSimplePreprocessor(std::string label) {
  return MakePreprocessor([label](DatasetPtr ds) {
    return DefinitePronounResolutionSimple(std::move(ds), label);
  });
}

}  // namespace t5xx::seqio
