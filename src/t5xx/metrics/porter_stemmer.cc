// NLTK's Porter stemmer (see porter_stemmer.h), on code points.
#include "t5xx/metrics/porter_stemmer.h"

#include <algorithm>
#include <string>
#include <map>
#include <vector>

#include "t5xx/metrics/unicode_properties.h"

namespace t5xx::seqio {
namespace {

using W = std::u32string;
using Mode = PorterStemmer::Mode;

bool IsVowel(char32_t c) { return c == U'a' || c == U'e' || c == U'i' || c == U'o' || c == U'u'; }

// A letter other than a, e, i, o, u, and other than a y preceded by a
// consonant (so a run of y's alternates, the first after a vowel or at the
// start being a consonant).
bool IsConsonant(const W& w, size_t i) {
  if (IsVowel(w[i])) return false;
  if (w[i] != U'y') return true;
  bool negate = false;
  while (i > 0 && w[i] == U'y') {
    negate = !negate;
    --i;
  }
  return !IsVowel(w[i]) != negate;
}

// IsConsonant of every position in one pass (a y is a consonant exactly
// when the letter before it is not one), so runs of y's stay linear.
std::vector<bool> ConsonantFlags(const W& w) {
  std::vector<bool> flags(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    flags[i] = IsVowel(w[i]) ? false : w[i] == U'y' ? (i == 0 || !flags[i - 1]) : true;
  }
  return flags;
}

// m in [C](VC){m}[V]: the number of vowel-to-consonant changes.
int Measure(const W& stem) {
  const std::vector<bool> c = ConsonantFlags(stem);
  int m = 0;
  for (size_t i = 1; i < c.size(); ++i) m += !c[i - 1] && c[i];
  return m;
}

bool PositiveMeasure(const W& stem) { return Measure(stem) > 0; }

bool ContainsVowel(const W& stem) {
  const std::vector<bool> c = ConsonantFlags(stem);
  return std::find(c.begin(), c.end(), false) != c.end();
}

bool EndsWith(const W& w, std::u32string_view suffix) {
  return w.size() >= suffix.size() && w.compare(w.size() - suffix.size(), suffix.size(), suffix) == 0;
}

W Drop(const W& w, size_t n) { return w.substr(0, w.size() - n); }

// *d: the word ends with a double consonant.
bool EndsDoubleConsonant(const W& w) {
  return w.size() >= 2 && w[w.size() - 1] == w[w.size() - 2] && IsConsonant(w, w.size() - 1);
}

// *o: the word ends consonant-vowel-consonant, the last not w, x or y (NLTK
// also: a two-letter word vowel-consonant).
bool EndsCvc(const W& w, Mode mode) {
  const size_t n = w.size();
  if (n >= 3 && IsConsonant(w, n - 3) && !IsConsonant(w, n - 2) && IsConsonant(w, n - 1) &&
      w[n - 1] != U'w' && w[n - 1] != U'x' && w[n - 1] != U'y') {
    return true;
  }
  return mode == Mode::kNltkExtensions && n == 2 && !IsConsonant(w, 0) && IsConsonant(w, 1);
}

// A rule's condition sees the stem left after removing the suffix, the word
// the rule list was applied to, and the mode.
using Condition = bool (*)(const W& stem, const W& word, Mode mode);

struct Rule {
  std::u32string_view suffix;  // U"*d": any double consonant
  std::u32string_view replacement;
  Condition condition;  // nullptr: always
};

bool PositiveMeasure3(const W& stem, const W&, Mode) { return PositiveMeasure(stem); }
bool MeasureAbove1(const W& stem, const W&, Mode) { return Measure(stem) > 1; }

// _apply_rule_list: the first rule whose suffix the word has decides; its
// condition failing leaves the word unchanged. A "*d" rule's replacement is
// the word's last letter (step 1b's single letter).
template <size_t N>
W ApplyRules(const W& w, const Rule (&rules)[N], Mode mode) {
  for (const Rule& r : rules) {
    const bool double_consonant = r.suffix == U"*d";
    if (double_consonant ? EndsDoubleConsonant(w) : EndsWith(w, r.suffix)) {
      const W stem = Drop(w, double_consonant ? 2 : r.suffix.size());
      if (r.condition && !r.condition(stem, w, mode)) return w;
      return double_consonant ? stem + w.back() : stem + W(r.replacement);
    }
  }
  return w;
}

W Step1a(const W& w, Mode mode) {
  if (mode == Mode::kNltkExtensions && EndsWith(w, U"ies") && w.size() == 4) return Drop(w, 3) + U"ie";
  static const Rule rules[] = {
      {U"sses", U"ss", nullptr}, {U"ies", U"i", nullptr}, {U"ss", U"ss", nullptr}, {U"s", U"", nullptr}};
  return ApplyRules(w, rules, mode);
}

W Step1b(const W& w, Mode mode) {
  if (mode == Mode::kNltkExtensions && EndsWith(w, U"ied")) {
    return Drop(w, 3) + (w.size() == 4 ? U"ie" : U"i");
  }
  if (EndsWith(w, U"eed")) {
    const W stem = Drop(w, 3);
    return Measure(stem) > 0 ? stem + U"ee" : w;
  }
  W stem;
  bool succeeded = false;
  for (const char32_t* suffix : {U"ed", U"ing"}) {
    if (EndsWith(w, suffix)) {
      stem = Drop(w, std::char_traits<char32_t>::length(suffix));
      if (ContainsVowel(stem)) {
        succeeded = true;
        break;
      }
    }
  }
  if (!succeeded) return w;
  static const Rule rules[] = {
      {U"at", U"ate", nullptr},
      {U"bl", U"ble", nullptr},
      {U"iz", U"ize", nullptr},
      // *d and not (*L or *S or *Z): single letter.
      {U"*d", U"", [](const W&, const W& word, Mode) {
         return word.back() != U'l' && word.back() != U's' && word.back() != U'z';
       }},
      // (m=1 and *o) -> E
      {U"", U"e", [](const W& s, const W&, Mode m) { return Measure(s) == 1 && EndsCvc(s, m); }},
  };
  return ApplyRules(stem, rules, mode);
}

W Step1c(const W& w, Mode mode) {
  static const Rule nltk[] = {{U"y", U"i", [](const W& s, const W&, Mode) {
                                 return s.size() > 1 && IsConsonant(s, s.size() - 1);
                               }}};
  static const Rule original[] = {
      {U"y", U"i", [](const W& s, const W&, Mode) { return ContainsVowel(s); }}};
  return mode == Mode::kNltkExtensions ? ApplyRules(w, nltk, mode) : ApplyRules(w, original, mode);
}

W Step2(const W& w, Mode mode) {
  if (mode == Mode::kNltkExtensions && EndsWith(w, U"alli") && PositiveMeasure(Drop(w, 4))) {
    return Step2(Drop(w, 4) + U"al", mode);
  }
  const Condition pm = PositiveMeasure3;
  // The table of the paper, with the mode's sixth rule and additions.
#define T5XX_PORTER_STEP2_RULES(SIXTH)                                                        \
  {U"ational", U"ate", pm}, {U"tional", U"tion", pm}, {U"enci", U"ence", pm},                 \
      {U"anci", U"ance", pm}, {U"izer", U"ize", pm}, SIXTH, {U"alli", U"al", pm},             \
      {U"entli", U"ent", pm}, {U"eli", U"e", pm}, {U"ousli", U"ous", pm},                     \
      {U"ization", U"ize", pm}, {U"ation", U"ate", pm}, {U"ator", U"ate", pm},                \
      {U"alism", U"al", pm}, {U"iveness", U"ive", pm}, {U"fulness", U"ful", pm},              \
      {U"ousness", U"ous", pm}, {U"aliti", U"al", pm}, {U"iviti", U"ive", pm},                \
      {U"biliti", U"ble", pm}
  static const Rule nltk[] = {
      T5XX_PORTER_STEP2_RULES((Rule{U"bli", U"ble", pm})),
      {U"fulli", U"ful", pm},
      // The condition reads the word less "ogi" (the stem keeps its "l").
      {U"logi", U"log", [](const W&, const W& word, Mode) { return PositiveMeasure(Drop(word, 3)); }},
  };
  static const Rule martin[] = {T5XX_PORTER_STEP2_RULES((Rule{U"bli", U"ble", pm})),
                                {U"logi", U"log", pm}};
  static const Rule original[] = {T5XX_PORTER_STEP2_RULES((Rule{U"abli", U"able", pm}))};
#undef T5XX_PORTER_STEP2_RULES
  switch (mode) {
    case Mode::kNltkExtensions: return ApplyRules(w, nltk, mode);
    case Mode::kMartinExtensions: return ApplyRules(w, martin, mode);
    case Mode::kOriginalAlgorithm: break;
  }
  return ApplyRules(w, original, mode);
}

W Step3(const W& w, Mode mode) {
  const Condition pm = PositiveMeasure3;
  static const Rule rules[] = {{U"icate", U"ic", pm}, {U"ative", U"", pm}, {U"alize", U"al", pm},
                               {U"iciti", U"ic", pm}, {U"ical", U"ic", pm}, {U"ful", U"", pm},
                               {U"ness", U"", pm}};
  return ApplyRules(w, rules, mode);
}

W Step4(const W& w, Mode mode) {
  const Condition gt1 = MeasureAbove1;
  static const Rule rules[] = {
      {U"al", U"", gt1},   {U"ance", U"", gt1}, {U"ence", U"", gt1},  {U"er", U"", gt1},
      {U"ic", U"", gt1},   {U"able", U"", gt1}, {U"ible", U"", gt1},  {U"ant", U"", gt1},
      {U"ement", U"", gt1}, {U"ment", U"", gt1}, {U"ent", U"", gt1},
      {U"ion", U"", [](const W& s, const W&, Mode) {
         return Measure(s) > 1 && (s.back() == U's' || s.back() == U't');
       }},
      {U"ou", U"", gt1},   {U"ism", U"", gt1},  {U"ate", U"", gt1},   {U"iti", U"", gt1},
      {U"ous", U"", gt1},  {U"ive", U"", gt1},  {U"ize", U"", gt1},
  };
  return ApplyRules(w, rules, mode);
}

W Step5a(const W& w, Mode mode) {
  if (EndsWith(w, U"e")) {
    const W stem = Drop(w, 1);
    if (Measure(stem) > 1) return stem;
    if (Measure(stem) == 1 && !EndsCvc(stem, mode)) return stem;
  }
  return w;
}

W Step5b(const W& w, Mode mode) {
  static const Rule rules[] = {
      {U"ll", U"l", [](const W&, const W& word, Mode) { return Measure(Drop(word, 1)) > 1; }}};
  return ApplyRules(w, rules, mode);
}

// NLTK_EXTENSIONS' irregular forms: word -> stem.
const std::map<W, W>& Pool() {
  static const std::map<W, W> pool = {
      {U"sky", U"sky"},          {U"skies", U"sky"},        {U"dying", U"die"},
      {U"lying", U"lie"},        {U"tying", U"tie"},        {U"news", U"news"},
      {U"innings", U"inning"},   {U"inning", U"inning"},    {U"outings", U"outing"},
      {U"outing", U"outing"},    {U"cannings", U"canning"}, {U"canning", U"canning"},
      {U"howe", U"howe"},        {U"proceed", U"proceed"},  {U"exceed", U"exceed"},
      {U"succeed", U"succeed"},
  };
  return pool;
}

}  // namespace

std::string PorterStemmer::stem(std::string_view word) const {
  const W original = unicode::Decode(word);
  W w = unicode::Lower(original);
  if (mode_ == Mode::kNltkExtensions) {
    auto it = Pool().find(w);
    if (it != Pool().end()) return unicode::Encode(it->second);
  }
  if (mode_ != Mode::kOriginalAlgorithm && original.size() <= 2) return unicode::Encode(w);
  w = Step1a(w, mode_);
  w = Step1b(w, mode_);
  w = Step1c(w, mode_);
  w = Step2(w, mode_);
  w = Step3(w, mode_);
  w = Step4(w, mode_);
  w = Step5a(w, mode_);
  w = Step5b(w, mode_);
  return unicode::Encode(w);
}

std::string PorterStemmer::Stem(std::string_view word) {
  static const PorterStemmer stemmer(Mode::kNltkExtensions);
  return stemmer.stem(word);
}

}  // namespace t5xx::seqio
