// t5's question-answering preprocessors for its task catalog (SQuAD,
// TriviaQA): squad, squad_span_space_tokenized, trivia_qa and the token
// step trivia_qa_truncate_inputs.
//
// Behaviour source: t5/data/preprocessors.py (squad, _span_answer,
// squad_span_space_tokenized, trivia_qa, _pad_punctuation, _string_join,
// trivia_qa_truncate_inputs); checked against t5's own functions by
// tests/data/preprocessors/t5_catalog_preprocessors_test.cc. Features as
// TFDS decodes them (catalog_features.h): SQuAD's x["answers"]["text"] is
// the flattened "answers/text", a rank-1 string Array. Errors (t5xx::Error)
// name the preprocessor, the example index and the feature.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

// squad (t5). With P = PadPunctuation (catalog_features.h) and J =
// StringJoin:
//   "inputs":   J(["question:", P(question), "context:", P(context)]), or
//               J(["squad trivia question:", P(question)]) when
//               !include_context;
//   "targets":  P(answers/text[0]);
//   "answers":  P of every answer (string [n]);
//   "context":  P(context); "question": P(question); "id": ex["id"].
// Other features are dropped. P keeps a leading or trailing space (t5 does
// not strip). Throws t5xx::Error for a missing feature or an example with
// no answers (t5's a[0] fails there too).
Example SquadExample(const Example& ex, bool include_context = true, uint64_t index = 0);
DatasetPtr Squad(DatasetPtr input, bool include_context = true);
Preprocessor SquadPreprocessor(bool include_context = true);

// t5's _span_answer: the context and answer are space-tokenized (every
// character other than [0-9A-Za-z_] -> ' ', then split on ' ' keeping empty
// pieces); the answer's first occurrence as a run of tokens at a start i in
// [0, |context| - |answer|) -- t5's range excludes the last possible start,
// so an answer ending the context is not found -- gives
// "start: <i> end: <i + |answer| - 1>", else "".
std::string SpanAnswer(const std::string& context, const std::string& answer);

// squad_span_space_tokenized (t5): squad(include_context=true), then
// "targets" = SpanAnswer(context, targets) (both already padded); examples
// whose span is "" are dropped.
DatasetPtr SquadSpanSpaceTokenized(DatasetPtr input);
Preprocessor SquadSpanSpaceTokenizedPreprocessor();

// trivia_qa (t5): the contexts are "entity_pages/wiki_context" then
// "search_results/search_context" (rank-1 string arrays; a group is read
// only when the example has that top-level feature, as t5's
// `'entity_pages' in x`), the answers "answer/normalized_aliases". For each
// context c (in that order) and each answer a (inner loop), with
// P = PadPunctuation: when AsciiLower(P(c)) fully matches the RE2 pattern
// AsciiLower(".*" + P(a) + ".*") -- t5 uses the answer as a regular
// expression -- one example {"inputs": J(["question:", P(question),
// "context:", P(c)]), "targets": P(a)}. No match, no context or no answer
// gives no example. An answer with no RE2 metacharacter (\.+*?()|[]{}^$) is
// matched as a substring (the same thing); one with them goes through
// std::regex (ECMAScript), which differs from RE2 only where '.' would
// meet a multi-byte character (RE2 matches one character, std::regex one
// byte). Throws t5xx::Error naming the example for a missing feature or an
// answer that is not a valid regular expression (t5 fails there too).
std::vector<Example> TriviaQaExamples(const Example& ex, uint64_t index = 0);
DatasetPtr TriviaQa(DatasetPtr input);
Preprocessor TriviaQaPreprocessor();

// trivia_qa_truncate_inputs' window for one example with |inputs| = N >
// L = max_input_tokens: the first start s of `targets` (length M) in
// `inputs`; nullopt when the targets do not occur. Else the range
// [lo, hi) of window starts t5 draws from uniformly:
// lo = max(0, s - (L - M)), hi = min(s, N - L) + 1. Throws t5xx::Error when
// lo >= hi (the answer cannot fit a window of L tokens: t5's
// stateless_uniform fails) or targets is empty.
struct TruncateRange {
  int64_t lo = 0;
  int64_t hi = 0;
};
std::optional<TruncateRange> TriviaQaTruncateRange(const Tokens& inputs,
                                                   const Tokens& targets,
                                                   int64_t max_input_tokens);

// trivia_qa_truncate_inputs (t5), after tokenize: for each example with
// |inputs| > L = sequence_length["inputs"], inputs = the L tokens from a
// start drawn uniformly in TriviaQaTruncateRange (the window holds the
// targets' first occurrence), or [] when the targets do not occur; shorter
// inputs are kept as they are. Examples whose inputs end up empty are
// dropped. Outputs only "inputs" and "targets". The draw is seeded by
// (seed, example index) -- t5 draws with TF's stateless_uniform, so the
// chosen window differs, its range does not. Throws t5xx::Error if
// sequence_length has no "inputs", or as TriviaQaTruncateRange.
DatasetPtr TriviaQaTruncateInputs(DatasetPtr input, const FeatureLengths& sequence_length,
                                  uint64_t seed);
Preprocessor TriviaQaTruncateInputsPreprocessor();

}  // namespace t5xx::seqio
