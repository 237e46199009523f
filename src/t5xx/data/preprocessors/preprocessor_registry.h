// A name -> factory map of preprocessors under their seqio/t5 Python names
// ("seqio.preprocessors.rekey", "t5.data.preprocessors.span_corruption",
// ...), so that config-defined (gin) tasks can name their steps.
//
// A factory takes the keyword arguments as a JSON object (nlohmann::json)
// and returns a Preprocessor; sequence_length, output_features and the seed
// are not arguments -- they come from the PreprocessContext as in seqio.
// Before a factory runs, Create() validates the arguments against the
// entry's ArgSpec list: kwargs must be an object (null = {}), every name must
// be declared (else t5xx::Error with a "did you mean" suggestion by
// t5xx::EditDistance), required arguments must be present, and each value
// must have the declared type. Nothing is registered by static initializers:
// RegisterSeqioPreprocessors(registry) fills a registry explicitly.
// Framework-free: no libtorch.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

enum class ArgType {
  kBool,
  kInt,         // JSON integer
  kNumber,      // JSON integer or float
  kString,
  kStringList,  // array of strings
  kStringOrStringList,  // a string or an array of strings (Python: str or list)
  kStringMap,   // object of string -> string or null
};

struct ArgSpec {
  std::string name;
  ArgType type;
  bool required = false;
  bool nullable = false;  // JSON null accepted (means "default"/None)
};

using PreprocessorFactory = std::function<Preprocessor(const nlohmann::json&)>;

// What seqio's Task._validate_preprocessors reads off a preprocessor's
// Python signature (inspect.signature), declared here since a C++ factory
// has none: whether the Python function has a `sequence_length` parameter
// (it may then not come before a seqio.CacheDatasetPlaceholder: an error)
// and whether it has a `seed` or `seeds` parameter (before the placeholder:
// a warning, the cache freezing one draw). Set from the Python source of
// each function, not from whether the C++ step uses a length or a seed.
struct PreprocessorSignature {
  bool takes_sequence_length = false;
  bool takes_seed = false;
};

class PreprocessorRegistry {
 public:
  // Adds `name` with the Python function's signature traits (see
  // PreprocessorSignature). Throws t5xx::Error if it is already registered.
  void Register(const std::string& name, std::vector<ArgSpec> args,
                PreprocessorFactory factory, PreprocessorSignature signature);
  bool Contains(const std::string& name) const;
  // Sorted names.
  std::vector<std::string> Names() const;
  // The declared arguments of `name` (t5xx::Error if unknown).
  const std::vector<ArgSpec>& Args(const std::string& name) const;
  // The declared signature traits of `name` (t5xx::Error if unknown).
  const PreprocessorSignature& Signature(const std::string& name) const;
  // Validates kwargs (see above) and calls the factory. Throws t5xx::Error
  // for an unknown name (with "did you mean") or bad arguments; messages
  // name the preprocessor and the argument.
  Preprocessor Create(const std::string& name,
                      const nlohmann::json& kwargs = nlohmann::json::object()) const;

 private:
  struct Entry {
    std::vector<ArgSpec> args;
    PreprocessorFactory factory;
    PreprocessorSignature signature;
  };
  const Entry& Find(const std::string& name) const;
  std::map<std::string, Entry> entries_;
};

// Registers (arguments in parentheses; * = required; [L] = the Python
// function takes sequence_length, read from seqio 0.0.19's preprocessors.py
// and t5's t5/data/preprocessors.py; none of them takes seed/seeds):
//   seqio.preprocessors.rekey (key_map*: {new: old|null})
//   seqio.preprocessors.tokenize (copy_pretokenized: bool, with_eos: bool)
//   seqio.preprocessors.tokenize_and_append_eos (copy_pretokenized: bool)
//   seqio.preprocessors.append_eos ()
//   seqio.preprocessors.append_eos_after_trim () [L]
//   seqio.preprocessors.truncate_inputs_left () [L]
//   t5.data.preprocessors.span_corruption [L] (mean_noise_span_length: number,
//       noise_density: number, num_threads: int -- t5xx only, default 1; the
//       output is the same for any count)
//   t5.data.preprocessors.prefix_lm [L] (noise_density: number, default 0.5)
//   t5.data.preprocessors.full_lm () [L]
//   t5.data.preprocessors.iid_denoising [L] (noise_density: number, default 0.15)
//   t5.data.preprocessors.select_random_chunk [L] (max_length: int, feature_key: str)
//   t5.data.preprocessors.reduce_concat_tokens (batch_size: int, feature_key: str)
//   t5.data.preprocessors.split_tokens (max_tokens_per_segment*: int,
//       feature_key: str)
//   t5.data.preprocessors.translate (source_language*: str, target_language*: str)
//   t5.data.preprocessors.summarize (article_key*: str, summary_key*: str)
//   t5.data.preprocessors.glue (benchmark_name*: str, label_names*: [str],
//       feature_names: [str]|null, id_key: str|null)
//   t5.data.preprocessors.rekey (key_map*: {new: old|null}; t5 re-exports
//       seqio's rekey)
// and RegisterT5CatalogPreprocessors' steps. Throws t5xx::Error if any name
// is already registered.
void RegisterSeqioPreprocessors(PreprocessorRegistry& registry);

// The rest of what t5's task catalog (t5/data/tasks.py, glue_utils.py)
// names, under t5's Python names with its parameter names (catalog_registry.cc;
// the functions: glue_preprocessors.h, qa_preprocessors.h,
// wsc_preprocessors.h, prefix_lm_objective.h):
//   t5.data.preprocessors.stsb ()
//   t5.data.preprocessors.record ()
//   t5.data.preprocessors.squad (include_context: bool, default true)
//   t5.data.preprocessors.squad_span_space_tokenized ()
//   t5.data.preprocessors.trivia_qa ()
//   t5.data.preprocessors.trivia_qa_truncate_inputs () [L]
//   t5.data.preprocessors.wsc_simple (label: str "wsc:",
//       correct_referent_only: bool false)
//   t5.data.preprocessors.wnli_simple (label: str "wsc:")
//   t5.data.preprocessors.definite_pronoun_resolution_simple (label: str "wsc:")
//   t5.data.preprocessors.rank_classification_formatter (inputs_formats*:
//       str|[str], targets_formats*: str|[str], mode: str "eval", label_key:
//       str "label", weight_key: str|null)
//   t5.data.preprocessors.targets_for_prefix_lm_objective () [L]
//   t5.data.preprocessors.pack_prefix_lm_encoder_decoder (pad_id: int 0) [L]
//   t5.data.preprocessors.pack_prefix_lm_decoder_only (loss_on_targets_only:
//       bool true, pad_id: int 0) [L]
//   t5.data.preprocessors.unsupervised (preprocessors: [str]|null) [L]: the
//       steps are names in this registry, each created with its default
//       arguments when unsupervised is created (the factory keeps a
//       reference to `registry`: create unsupervised only from it); null or
//       [] (t5's default None) leaves the dataset unchanged.
// None takes seed/seeds in Python. Throws t5xx::Error if a name is already
// registered.
void RegisterT5CatalogPreprocessors(PreprocessorRegistry& registry);

}  // namespace t5xx::seqio
