// t5's "simple" Winograd preprocessors for its task catalog: wsc_simple
// (SuperGLUE WSC), wnli_simple (GLUE WNLI) and
// definite_pronoun_resolution_simple (DPR). All give {"inputs": "<label>
// ... *pronoun* ...", "targets": "<referent>"}.
//
// (t5.data.preprocessors.wsc, the SuperGLUE wsc.fixed formatter, is not
// here: t5's tasks.py skips wsc.fixed in its SuperGLUE loop and uses
// wsc_simple instead.)
//
// Behaviour source: t5/data/preprocessors.py (_wsc_inputs, wsc_simple,
// wnli_simple, definite_pronoun_resolution_simple); checked against t5's
// own functions by tests/data/preprocessors/t5_catalog_preprocessors_test.cc.
// Errors (t5xx::Error) name the preprocessor, the example index and the
// feature. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

// t5's _wsc_inputs: the text split on ' ' (empty pieces kept) with the word
// at span2_index replaced by "X" and joined again -- except t5's two
// hard-coded WSC texts, whose fixed forms are returned. Throws t5xx::Error
// unless 0 < span2_index < |words| and words[span2_index] == span2_text
// (t5's tf.assert_* ops).
std::string WscInputs(const std::string& text, int64_t span2_index,
                      const std::string& span2_text);

// wsc_simple (t5). Each example ("text", "span1_text", "span2_text" strings;
// "span2_index" an integer scalar; "label" optional; "idx" any) becomes
//   "inputs":  label + " " + WscInputs(...) with every " X " replaced by
//              " *<span2_text>* " (t5 replaces them all, also an "X" the
//              text had);
//   "targets": span1_text; "label": ex["label"], or an int32 0 when the
//   example has none; "idx": ex["idx"].
// correct_referent_only first keeps only examples whose label is truthy:
// a missing label drops the example, and a test example's -1 is kept (t5's
// tf.cast(label, tf.bool)).
DatasetPtr WscSimple(DatasetPtr input, std::string label = "wsc:",
                     bool correct_referent_only = false);
Preprocessor WscSimplePreprocessor(std::string label = "wsc:",
                                   bool correct_referent_only = false);

// wnli_simple (t5): t5's pure-Python heuristic finds the premise's pronoun
// (he she they it her his their them him, in the premise's words lowercased
// with a trailing . , ? ! cut) whose neighbouring words best match the
// hypothesis (first best score), extracts the hypothesis words standing in
// its place (regular expressions as t5's, std::regex ECMAScript for
// Python's re; case folding and strip() are ASCII here, Unicode in
// Python), cleans up a leading article and a possessive 's or ', and gives
//   "inputs": label + " " + the premise (split on ' ') with that word as
//             "*word*" (a trailing . , ! ? left outside: "*it* ."),
//   "targets": the candidate, "premise": sentence1, "hypothesis":
//   sentence2, "label": ex["label"] or int32 0, "idx": ex["idx"].
// Throws t5xx::Error for a premise without a pronoun or a candidate that
// t5's search cannot find in the hypothesis (t5 raises there too).
Example WnliSimpleExample(const Example& ex, const std::string& label = "wsc:",
                          uint64_t index = 0);
DatasetPtr WnliSimple(DatasetPtr input, std::string label = "wsc:");
Preprocessor WnliSimplePreprocessor(std::string label = "wsc:");

// definite_pronoun_resolution_simple (t5): "inputs" = label + " " + the
// sentence with its first " <pronoun>" followed by ' ', '.' or ',' marked
// " *<pronoun>*" (unchanged when there is none); "targets" =
// candidates[label]. In: "sentence", "pronoun" strings, "candidates" a
// rank-1 string array, "label" an integer scalar. Other features are
// dropped. Throws t5xx::Error for a label outside the candidates.
Example DefinitePronounResolutionSimpleExample(const Example& ex,
                                               const std::string& label = "wsc:",
                                               uint64_t index = 0);
DatasetPtr DefinitePronounResolutionSimple(DatasetPtr input, std::string label = "wsc:");
Preprocessor DefinitePronounResolutionSimplePreprocessor(std::string label = "wsc:");

}  // namespace t5xx::seqio
