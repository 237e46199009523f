// sacrebleu's BLEU tokenizers (see sacrebleu_tokenizers.h), on code points.
#include "t5xx/metrics/sacrebleu_tokenizers.h"

#include "t5xx/metrics/unicode_properties.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio::sacrebleu {
namespace {

// Python str.replace(from, to): every non-overlapping occurrence, left to
// right.
std::u32string ReplaceAll(const std::u32string& s, std::u32string_view from,
                          std::u32string_view to) {
  std::u32string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::u32string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos, std::u32string::npos);
  return out;
}

// re.sub of a two-character pattern (A)(B) with a replacement built from
// the pair: scanning left to right, a match consumes both characters and the
// scan resumes after them, as Python's re.sub does.
template <typename A, typename B, typename Emit>
std::u32string SubPairs(const std::u32string& s, A first, B second, Emit emit) {
  std::u32string out;
  out.reserve(s.size() + s.size() / 2);
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
  return out;
}

// " ".join(s.split())
std::string JoinSplit(std::u32string_view s) {
  std::u32string out;
  for (const std::u32string& token : unicode::Split(s)) {
    if (!out.empty()) out.push_back(U' ');
    out += token;
  }
  return unicode::Encode(out);
}

bool IsDigit(char32_t c) { return c >= U'0' && c <= U'9'; }
bool IsPeriodOrComma(char32_t c) { return c == U'.' || c == U','; }

// The first 13a class: [\{-\~\[-\` -\&\(-\+\:-\@\/].
bool Is13aSplitChar(char32_t c) {
  return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
         (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F;
}

}  // namespace

Tokenizer TokenizerFromName(const std::string& name) {
  if (name == "none") return Tokenizer::kNone;
  if (name == "13a") return Tokenizer::k13a;
  if (name == "intl") return Tokenizer::kIntl;
  throw Error("sacrebleu: unknown tokenizer '" + name +
              "'; t5xx implements sacrebleu's 'intl' (t5's default), '13a' and 'none'");
}

std::string TokenizerName(Tokenizer tokenizer) {
  switch (tokenizer) {
    case Tokenizer::kNone: return "none";
    case Tokenizer::k13a: return "13a";
    case Tokenizer::kIntl: return "intl";
  }
  return "?";
}

std::string Tokenize13a(std::string_view line_utf8) {
  std::u32string line = unicode::Decode(line_utf8);
  line = ReplaceAll(line, U"<skipped>", U"");
  line = ReplaceAll(line, U"-\n", U"");
  line = ReplaceAll(line, U"\n", U" ");
  if (line.find(U'&') != std::u32string::npos) {
    line = ReplaceAll(line, U"&quot;", U"\"");
    line = ReplaceAll(line, U"&amp;", U"&");
    line = ReplaceAll(line, U"&lt;", U"<");
    line = ReplaceAll(line, U"&gt;", U">");
  }
  std::u32string s = U" " + line + U" ";
  // ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> ' \1 '
  std::u32string split;
  split.reserve(s.size() * 2);
  for (char32_t c : s) {
    if (Is13aSplitChar(c)) {
      split.push_back(U' ');
      split.push_back(c);
      split.push_back(U' ');
    } else {
      split.push_back(c);
    }
  }
  auto not_digit = [](char32_t c) { return !IsDigit(c); };
  // ([^0-9])([\.,]) -> '\1 \2 '
  s = SubPairs(split, not_digit, IsPeriodOrComma, [](std::u32string& o, char32_t a, char32_t b) {
    o.push_back(a), o.push_back(U' '), o.push_back(b), o.push_back(U' ');
  });
  // ([\.,])([^0-9]) -> ' \1 \2'
  s = SubPairs(s, IsPeriodOrComma, not_digit, [](std::u32string& o, char32_t a, char32_t b) {
    o.push_back(U' '), o.push_back(a), o.push_back(U' '), o.push_back(b);
  });
  // ([0-9])(-) -> '\1 \2 '
  s = SubPairs(s, IsDigit, [](char32_t c) { return c == U'-'; },
               [](std::u32string& o, char32_t a, char32_t b) {
                 o.push_back(a), o.push_back(U' '), o.push_back(b), o.push_back(U' ');
               });
  return JoinSplit(s);
}

std::string TokenizeIntl(std::string_view line_utf8) {
  const std::u32string line = unicode::Decode(line_utf8);
  auto not_number = [](char32_t c) { return !unicode::IsNumber(c); };
  // (\P{N})(\p{P}) -> '\1 \2 '
  std::u32string s = SubPairs(line, not_number, unicode::IsPunctuation,
                              [](std::u32string& o, char32_t a, char32_t b) {
                                o.push_back(a), o.push_back(U' '), o.push_back(b),
                                    o.push_back(U' ');
                              });
  // (\p{P})(\P{N}) -> ' \1 \2'
  s = SubPairs(s, unicode::IsPunctuation, not_number,
               [](std::u32string& o, char32_t a, char32_t b) {
                 o.push_back(U' '), o.push_back(a), o.push_back(U' '), o.push_back(b);
               });
  // (\p{S}) -> ' \1 '
  std::u32string out;
  out.reserve(s.size() * 2);
  for (char32_t c : s) {
    if (unicode::IsSymbol(c)) {
      out.push_back(U' ');
      out.push_back(c);
      out.push_back(U' ');
    } else {
      out.push_back(c);
    }
  }
  return JoinSplit(out);
}

std::string Tokenize(Tokenizer tokenizer, std::string_view line) {
  switch (tokenizer) {
    case Tokenizer::kNone: return std::string(line);
    case Tokenizer::k13a: return Tokenize13a(line);
    case Tokenizer::kIntl: return TokenizeIntl(line);
  }
  return std::string(line);
}

}  // namespace t5xx::seqio::sacrebleu
