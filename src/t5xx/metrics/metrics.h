// t5's evaluation metrics (t5/evaluation/metrics.py, t5/evaluation/qa_utils.py)
// without NumPy/sklearn/scipy/sacrebleu/rouge-score: the same numbers from the
// same inputs. Framework-free: no libtorch.
//
// Every metric takes (targets, predictions) of equal, non-zero length and
// returns a std::map from metric name to value, scaled ×100 like t5 (so a
// perfect score is 100.0). Errors a caller can cause — mismatched lengths,
// empty input, out-of-domain labels, a squad example without references —
// throw t5xx::Error whose message starts with "metrics.<name>: ".
//
// Text is UTF-8 and is read as Python str: ill-formed bytes become U+FFFD
// (unicode_properties.h), lowercasing and character classes are Python's.
//
// Implemented: accuracy, sequence_accuracy, f1_score_with_invalid,
// mean_multiclass_f1, squad, trivia_qa, bleu, rouge, rouge_mean,
// pearson_corrcoef, spearman_corrcoef, edit_distance, sklearn's
// matthews_corrcoef, span_squad (catalog_metrics.cc); over dicts and groups
// (multirc_f1_over_all_answers, all_match, mean_group_metric,
// deduplicate_metric): metric_fns.h.
// rank_classification (with sklearn's weighted roc_auc_score and
// average_precision_score): rank_classification.h.
// Not implemented: auc, coqa_f1 (no task of t5's catalog uses them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace t5xx::seqio::metrics {

// Metric name -> value (×100).
using Metrics = std::map<std::string, double>;

// t5 metrics.accuracy: 100 * fraction of i with targets[i] == predictions[i]
// (sklearn.metrics.accuracy_score). Output key: "accuracy".
// Throws t5xx::Error on mismatched lengths or empty input.
Metrics accuracy(const std::vector<std::string>& targets,
                 const std::vector<std::string>& predictions);
Metrics accuracy(const std::vector<int64_t>& targets,
                 const std::vector<int64_t>& predictions);

// t5 metrics.sequence_accuracy: 100 * fraction of examples whose predicted
// string equals the target string exactly (no normalisation).
// Output key: "sequence_accuracy".
// Throws t5xx::Error on mismatched lengths or empty input.
Metrics sequence_accuracy(const std::vector<std::string>& targets,
                          const std::vector<std::string>& predictions);

// t5 metrics.f1_score_with_invalid: binary F1 (positive label 1) ×100.
// A prediction outside {0, 1} is invalid and replaced by 1 - target, i.e. it
// always counts as wrong. F1 = 2TP / (2TP + FP + FN); 0 when TP+FP+FN == 0
// (sklearn's zero_division result). Output key: "f1".
// Throws t5xx::Error on mismatched lengths, empty input, or a target outside
// {0, 1}.
Metrics f1_score_with_invalid(const std::vector<int64_t>& targets,
                              const std::vector<int64_t>& predictions);

// t5 metrics.mean_multiclass_f1(num_classes): macro-averaged F1 over the
// labels 0..num_classes-1 (sklearn fbeta_score, beta=1, average="macro",
// labels=range(num_classes)) ×100. Per class c, F1 = 2TP/(2TP+FP+FN), 0 when
// the class occurs in neither targets nor predictions. Values outside the
// label range contribute only as FN/FP of the classes they are paired with.
// Output key: "mean_<N>class_f1" (e.g. "mean_3class_f1").
// Throws t5xx::Error if num_classes < 1 (at construction), and on mismatched
// lengths or empty input (at call).
using IntMetricFn = std::function<Metrics(const std::vector<int64_t>&,
                                          const std::vector<int64_t>&)>;
IntMetricFn mean_multiclass_f1(int num_classes);
Metrics mean_multiclass_f1(int num_classes, const std::vector<int64_t>& targets,
                           const std::vector<int64_t>& predictions);

// t5 qa_utils.normalize_squad (_normalize_answer with string.punctuation
// removed): Python str.lower(); delete ASCII punctuation (string.punctuation);
// replace the whole words "a", "an", "the" with a space (word boundaries as
// Python re's \b: Unicode \w); " ".join(s.split()) (Unicode whitespace).
std::string normalize_squad(const std::string& answer);

// t5 qa_utils.normalize_trivia_qa: as normalize_squad, but string.punctuation
// and the characters ‘ ’ ´ ` _ are replaced by a space instead of deleted.
std::string normalize_trivia_qa(const std::string& answer);

// t5 metrics.squad -> qa_utils.qa_metrics: targets[i] is the list of
// reference answers for predictions[i]. All strings are normalised with
// normalize_squad; per example, EM (exact string equality) and token F1
// (bag-of-tokens overlap: P = common/|pred|, R = common/|ref|,
// F1 = 2PR/(P+R), 0 if nothing in common) are each maxed over the
// references, then averaged over examples and ×100. Output keys: "em", "f1".
// Throws t5xx::Error on mismatched lengths, empty input, or an example with
// no references.
Metrics squad(const std::vector<std::vector<std::string>>& targets,
              const std::vector<std::string>& predictions);

// t5 metrics.trivia_qa: squad's EM and token F1 over normalize_trivia_qa'd
// strings. Output keys: "em", "f1". Errors as squad.
Metrics trivia_qa(const std::vector<std::vector<std::string>>& targets,
                  const std::vector<std::string>& predictions);

// t5 metrics.bleu(targets, predictions, tokenizer="intl"):
// sacrebleu.corpus_bleu(predictions, [targets], smooth_method="exp",
// smooth_value=0.0, force=False, lowercase=False, tokenize=tokenizer,
// use_effective_order=False).score (sacrebleu.h; already in [0, 100]).
// tokenizer: "intl" is t5's default: t5's first public metrics.py (2019)
// already passed tokenize="intl", so the T5 paper's WMT BLEU scores use it,
// and when the argument became selectable (2022) "intl" stayed the default
// so that scores stay comparable. It is mteval-v14's international
// tokenization (splits at every Unicode punctuation or symbol character
// unless a number is on that side of a punctuation mark), where sacrebleu's
// own default "13a" splits only at ASCII punctuation. "13a" and "none" are
// also accepted (sacrebleu_tokenizers.h). Output key: "bleu".
// Throws t5xx::Error on mismatched lengths, empty input or another tokenizer.
Metrics bleu(const std::vector<std::string>& targets, const std::vector<std::string>& predictions,
             const std::string& tokenizer = "intl");
// With several references per example, t5 hands the per-example lists to
// sacrebleu unchanged, and sacrebleu reads them as reference *streams*:
// stream k is targets[k], so prediction i is scored against targets[k][i]
// for every k, and only the first min(predictions.size(), every
// targets[k].size()) predictions are scored. t5xx does the same (so scores
// equal t5's); it agrees with per-example references when targets is square
// and symmetric, as in t5's own test. Throws t5xx::Error on mismatched outer
// lengths, empty input, or no prediction left to score.
Metrics bleu(const std::vector<std::vector<std::string>>& targets,
             const std::vector<std::string>& predictions, const std::string& tokenizer = "intl");

// t5's _prepare_summary_rouge: every " . " becomes " .\n" (Python
// str.replace: left to right, without overlap), so that rougeLsum sees one
// sentence per line.
std::string prepare_summary_rouge(const std::string& summary);

// t5 metrics.rouge_mean(targets, predictions, score_keys, use_stemmer=...):
// per example, rouge_scorer.RougeScorer(score_keys, use_stemmer).score(
// prepare_summary_rouge(target), prepare_summary_rouge(prediction)); per key,
// the F-measures summed in example order, divided by the number of examples,
// ×100 (bit-identical to rouge-score). score_keys: rouge1..rouge9, rougeL,
// rougeLsum. use_stemmer is a RougeScorer keyword t5 passes through
// (**kwargs, default False). Output keys: score_keys.
// Throws t5xx::Error on mismatched lengths, empty input or a bad score key.
Metrics rouge_mean(const std::vector<std::string>& targets,
                   const std::vector<std::string>& predictions,
                   const std::vector<std::string>& score_keys = {"rouge1", "rouge2", "rougeLsum"},
                   bool use_stemmer = false);

// t5 metrics.rouge: t5 reports the "mid" of rouge-score's
// BootstrapAggregator, i.e. the median of the means of 1000 resamples of the
// examples drawn with NumPy's global, unseeded random state, so its value
// changes from run to run around the examples' mean. t5xx returns that mean,
// exactly rouge_mean, which is what the bootstrap median estimates (and
// needs no random draws). Measured gaps |t5 mid - mean| (rouge-score 0.1.2):
// 15 summaries, 100 draws: sd 0.35-0.40 points, max 1.26, i.e. at most 3.4%
// of the 95% interval (~37 points wide); 1000 pairs, 20 draws: sd 0.010-0.016
// points, max 0.036 (interval ~2 points). That is t5's own run-to-run
// spread; tests/metrics/metrics_live_test.py requires the gap to stay below a
// quarter of the interval. Same arguments, keys and errors as rouge_mean.
Metrics rouge(const std::vector<std::string>& targets, const std::vector<std::string>& predictions,
              const std::vector<std::string>& score_keys = {"rouge1", "rouge2", "rougeLsum"},
              bool use_stemmer = false);

// t5 metrics.pearson_corrcoef: 100 * scipy.stats.pearsonr(targets,
// predictions)[0], computed as scipy >= 1.9 does (centred, scaled by the
// largest deviation, normalised, dotted, clipped to [-1, 1]; exactly ±1 for
// two examples). NaN (as scipy) when either side is constant or holds a NaN.
// Output key: "pearson_corrcoef". Throws t5xx::Error on mismatched lengths or
// fewer than 2 examples (scipy raises ValueError).
Metrics pearson_corrcoef(const std::vector<double>& targets,
                         const std::vector<double>& predictions);

// t5 metrics.spearman_corrcoef: 100 * scipy.stats.spearmanr(targets,
// predictions)[0]: the Pearson correlation (numpy.corrcoef) of the ranks,
// tied values getting the average of their ranks. NaN (as scipy) for one
// example, a constant side, or a NaN value. Output key: "spearman_corrcoef".
// Throws t5xx::Error on mismatched lengths or empty input.
Metrics spearman_corrcoef(const std::vector<double>& targets,
                          const std::vector<double>& predictions);

// t5 metrics.edit_distance(targets, predictions, lower=True): per example,
// both strings (Python str.lower()d when `lower`) are cut at every character
// that is not re's \w (re.split("[^\\w]", s), so empty pieces count as
// tokens), and the Levenshtein distance between the two token sequences is
// taken (editdistance.distance). Output keys (not ×100): "min_edit",
// "max_edit", "mean_edit", "median_edit" (numpy.median: the mean of the two
// middle values for an even count), "sum_edit".
// Throws t5xx::Error on mismatched lengths or empty input.
Metrics edit_distance(const std::vector<std::string>& targets,
                      const std::vector<std::string>& predictions, bool lower = true);

// sklearn.metrics.matthews_corrcoef(targets, predictions) (scikit-learn
// 1.5), NOT ×100: over the confusion matrix C of the labels seen on either
// side (any integers, e.g. -1 for an unknown label), with t = row sums,
// p = column sums, c = trace, n = size: (c*n - t.p) / sqrt((n² - p.p) *
// (n² - t.t)), and 0.0 when the denominator is 0 (one class on either side,
// or one example; also for no examples, as sklearn). Throws t5xx::Error on
// mismatched lengths.
double matthews_corrcoef(const std::vector<int64_t>& targets,
                         const std::vector<int64_t>& predictions);

// The answer text t5's span_squad reads from a span prediction: both the
// context and the prediction are cut into tokens by re.sub(r"\W", " ", s)
// .split() (Unicode \w, Python whitespace); with fewer than 4 prediction
// tokens, or when token 1 or token 3 is no Python int() (Unicode decimal
// digits, '_' between digits allowed), "" ; else the context tokens
// [start, end] (Python slice context[start:end+1]) joined by spaces.
std::string span_answer_text(const std::string& context, const std::string& prediction);

// t5 metrics.span_squad: squad(answers, [span_answer_text(contexts[i],
// predictions[i])]). Output keys "em", "f1". Throws t5xx::Error as squad, or
// when contexts and answers differ in length.
Metrics span_squad(const std::vector<std::vector<std::string>>& answers,
                   const std::vector<std::string>& contexts,
                   const std::vector<std::string>& predictions);

}  // namespace t5xx::seqio::metrics
