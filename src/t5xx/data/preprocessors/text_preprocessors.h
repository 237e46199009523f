// T5's text-to-text preprocessors (t5/data/preprocessors.py): translate,
// summarize and glue. They act on raw (string) examples, before tokenize.
//
// Example conventions (strings, int32 token lists and TFDS Arrays):
//  * translate: the example has one string feature per language, keyed by
//    the language code, as TFDS wmt examples {"de": ..., "en": ...}.
//  * glue: text fields are string features; the class label is the feature
//    "label": TFDS's ClassLabel (int64 scalar Array), a 1-element Tokens [i]
//    or a string holding the integer ("2", "-1"); -1 means "no label" (test
//    sets). "idx" (any type) is copied through unchanged.
// Errors (t5xx::Error) name the preprocessor, the 0-based example index in
// the stream, and the missing/invalid key. Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

// English name of a two-letter language code as t5 gets it from
// babel.Locale(code[:2]).english_name ("en" -> "English", "de" -> "German").
// Only the first two characters are used (t5 warns for codes like "zh-cn");
// the example feature key is still the full code.
// Throws t5xx::Error for codes outside the built-in table (WMT/common ones).
std::string LanguageName(const std::string& code);

// translate (t5): {"inputs": "translate <Src> to <Tgt>: " + ex[source],
// "targets": ex[target]}; all other features are dropped.
// E.g. ({en: "That is good.", de: "Das ist gut."}, "en", "de") ->
// {inputs: "translate English to German: That is good.",
//  targets: "Das ist gut."}. Throws t5xx::Error for an unknown language code
// (at construction) or an example lacking a language key.
Example TranslateExample(const Example& ex, const std::string& source_language,
                         const std::string& target_language,
                         uint64_t index = 0);
DatasetPtr Translate(DatasetPtr input, std::string source_language,
                     std::string target_language);
Preprocessor TranslatePreprocessor(std::string source_language,
                                   std::string target_language);

// summarize (t5): {"inputs": "summarize: " + ex[article_key],
// "targets": ex[summary_key]}; other features are dropped.
Example SummarizeExample(const Example& ex, const std::string& article_key,
                         const std::string& summary_key, uint64_t index = 0);
DatasetPtr Summarize(DatasetPtr input, std::string article_key,
                     std::string summary_key);
Preprocessor SummarizePreprocessor(std::string article_key,
                                   std::string summary_key);

// glue (t5/data/preprocessors.py glue), for classification benchmarks, as
// t5's get_glue_text_preprocessor (glue_utils.py) binds it:
//   inputs  = "<benchmark_name> k1: v1 k2: v2 ..." (space-joined) over
//             feature_names, or, when feature_names is nullopt or empty (t5:
//             `feature_names or sorted(...)`), over the example's top-level
//             feature names except "label" and "idx", sorted (a flattened
//             "idx/paragraph" counts as "idx");
//   targets = label_names[label], or "<unk>" when label == -1 (test sets);
//   "idx"   = ex[id_key] when id_key is non-empty (t5 default "idx"; None
//             in t5 = "" here), whatever its type.
// The label is TFDS's ClassLabel (an int64 scalar Array), a 1-token list or
// a string holding an integer. multirc (benchmark_name == "multirc"): the
// joined inputs lose their HTML markup as in t5 ("<br>" -> " ", then "<b>"
// and "</b>" -> ""), and the output carries "idx/paragraph",
// "idx/question" and "idx/answer" (TFDS's nested idx, flattened; t5's
// ex['idx/paragraph'] = x['idx']['paragraph']) instead of "idx"; id_key is
// not read. The joined features must be strings (t5's tf.strings.join
// fails on others). stsb: t5.data.preprocessors.stsb (glue_preprocessors.h);
// record: t5.data.preprocessors.record. Throws t5xx::Error if label_names
// is empty, or for an example lacking a feature / "label" / id_key / a
// multirc idx part, a non-string joined feature, or a label outside
// [-1, |label_names|) (t5's tf.gather fails there too); messages name the
// example index and the feature.
Example GlueExample(const Example& ex, const std::string& benchmark_name,
                    const std::vector<std::string>& label_names,
                    const std::optional<std::vector<std::string>>& feature_names,
                    const std::string& id_key = "idx", uint64_t index = 0);
DatasetPtr Glue(DatasetPtr input, std::string benchmark_name,
                std::vector<std::string> label_names,
                std::optional<std::vector<std::string>> feature_names = std::nullopt,
                std::string id_key = "idx");
Preprocessor GluePreprocessor(
    std::string benchmark_name, std::vector<std::string> label_names,
    std::optional<std::vector<std::string>> feature_names = std::nullopt,
    std::string id_key = "idx");

}  // namespace t5xx::seqio
