// sacrebleu's BLEU tokenizers, character for character: 'none', '13a'
// (mteval-v13a.pl, sacrebleu/tokenizers/tokenizer_13a.py + tokenizer_re.py)
// and 'intl' (mteval-v14.pl's international tokenization,
// sacrebleu/tokenizers/tokenizer_intl.py). Framework-free: no libtorch.
//
// Text is UTF-8 (ill-formed bytes read as U+FFFD, see unicode_properties.h).
// The result is the tokens joined by single spaces, as sacrebleu returns it.
#pragma once

#include <string>
#include <string_view>

namespace t5xx::seqio::sacrebleu {

enum class Tokenizer {
  kNone,  // 'none': the line unchanged
  k13a,   // '13a': sacrebleu's default
  kIntl,  // 'intl': t5's metrics.bleu default
};

// "none", "13a" or "intl" -> the tokenizer. Throws t5xx::Error naming the
// three for any other name (sacrebleu's 'zh', 'char', 'ja-mecab', 'spm', ...
// are not implemented).
Tokenizer TokenizerFromName(const std::string& name);
std::string TokenizerName(Tokenizer tokenizer);

// '13a' (sacrebleu Tokenizer13a): "<skipped>" and "-\n" deleted, "\n" -> " ",
// then (only when the line has a '&') "&quot;" -> '"', "&amp;" -> '&',
// "&lt;" -> '<', "&gt;" -> '>' in that order; the line padded with a space
// on each side; then, as regular-expression substitutions applied left to
// right without overlap:
//   [{-~[-` -&(-+:-@/]  -> " c "   (ASCII punctuation except ' , - .)
//   ([^0-9])([.,])      -> "\1 \2 "
//   ([.,])([^0-9])      -> " \1 \2"
//   ([0-9])(-)          -> "\1 \2 "
// and finally Python's " ".join(line.split()).
std::string Tokenize13a(std::string_view line);

// 'intl' (sacrebleu TokenizerV14International), with \p{..} as the `regex`
// module's Unicode general categories:
//   (\P{N})(\p{P})  -> "\1 \2 "    punctuation after a non-number
//   (\p{P})(\P{N})  -> " \1 \2"    punctuation before a non-number
//   (\p{S})         -> " \1 "      every symbol
// then " ".join(line.split()). (So "1,000" and "3.5" stay whole, and so does
// a number's final period, "in 2019.", as in mteval-v14.pl.)
std::string TokenizeIntl(std::string_view line);

// The tokenizer `tokenizer` applied to `line`.
std::string Tokenize(Tokenizer tokenizer, std::string_view line);

}  // namespace t5xx::seqio::sacrebleu
