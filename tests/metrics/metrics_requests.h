// The JSON request protocol shared by metrics_json_tool (which the live
// comparison metrics_live_test.py drives) and metrics_golden_test (which
// replays the stored requests of metrics_goldens.json): one request object
// in, one response out. metrics_reference.py answers the same requests with
// the Python libraries.
//
// Requests ("fn" and its fields):
//   bleu            targets (strings or lists), predictions, tokenizer
//   corpus_bleu     hypotheses, references (streams), tokenize, smooth_method,
//                   smooth_value (or null), lowercase, use_effective_order
//                   -> {score, counts, totals, precisions, bp, sys_len, ref_len}
//   tokenize        tokenizer ('13a', 'intl', 'none'), lines -> [string]
//   rouge, rouge_mean  targets, predictions, score_keys, use_stemmer
//   rouge_score     target, prediction, rouge_types, use_stemmer
//                   -> {type: [precision, recall, fmeasure]}
//   rouge_tokenize  texts, use_stemmer -> [[token]]
//   porter_stem     words, mode ('NLTK_EXTENSIONS', 'MARTIN_EXTENSIONS',
//                   'ORIGINAL_ALGORITHM') -> [stem]
//   pearson_corrcoef, spearman_corrcoef  targets, predictions (numbers)
//   edit_distance   targets, predictions, lower
//   squad, trivia_qa  targets (lists), predictions
//   normalize_squad, normalize_trivia_qa  texts -> [string]
//   python_lower    texts -> [string]
//   unicode_ranges  -> {space, word, punctuation, symbol, number: [[first,
//                   last]], lower: [[code point, lowered string]]} over all
//                   code points (the tables as the lookups see them)
// Metric responses are {key: value}, NaN as null. A t5xx::Error becomes
// {"error": message}.
#pragma once

#include <nlohmann/json.hpp>

namespace t5xx::seqio::testing {

nlohmann::json AnswerMetricsRequest(const nlohmann::json& request);

}  // namespace t5xx::seqio::testing
