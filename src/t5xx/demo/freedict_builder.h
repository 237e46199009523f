// The data of the demo translation task: FreeDict's English–German pairs
// (freedict_pairs.h), selected and split by a hash of the English phrase
// into train and validation JSON-lines files, the shape of TFDS's wmt
// examples ({"en": ..., "de": ...}) that t5's translate preprocessor reads.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>

#include "t5xx/demo/freedict_pairs.h"

namespace t5xx::seqio {

struct FreedictOptions {
  // Where the files are written (created if missing).
  std::string output_dir;
  // The dictd database (its .index beside it).
  std::string dictionary = kDefaultFreedictDictionary;
  // Which pairs are kept (SelectFreedictPairs).
  FreedictSelection selection;
  // An English phrase goes to validation when u(phrase) < validation_fraction,
  // u = the phrase's hash with `seed` mapped to [0, 1) (as
  // IsValidationDocument does for a C4 url): it depends on the phrase alone,
  // not on order, as seqio's hash-based splits. In [0, 1).
  double validation_fraction = 0.02;
  // At most this many validation examples (those of smallest u; the others
  // go to train), so evaluating with decoding stays quick. >= 0.
  int64_t max_validation_examples = 500;
  uint64_t seed = 0;
  // Replace complete data built with other options; without it that is an
  // error. Not part of the options compared for reuse.
  bool overwrite = false;
};

struct FreedictInfo {
  static constexpr int kFormatVersion = 1;
  std::string output_dir;
  std::string train_file;         // <output_dir>/train.jsonl
  std::string validation_file;    // <output_dir>/validation.jsonl
  int64_t train_examples = 0;
  int64_t validation_examples = 0;
  int64_t dictionary_pairs = 0;   // ReadFreedictPairs' count, before selection
  double build_seconds = 0;       // of the build that wrote it
  bool reused = false;            // true: found complete, not rebuilt
};

// Builds the task's data in options.output_dir:
//   train.jsonl, validation.jsonl: one {"en": english, "de": german} JSON
//     object per line, for the pairs SelectFreedictPairs keeps from
//     ReadFreedictPairs(options.dictionary), split as FreedictOptions says;
//     train lines are in the order of a second hash of the English phrase
//     (the dictionary is sorted by German headword, and a shuffle buffer
//     over that order would see one initial letter at a time), validation
//     lines in order of u;
//   freedict_info.json: counts and options, format_version 1 — written last
//     as the completion marker (build_marker.h).
// Idempotent as BuildCorpus: complete files built with the same options are
// returned (reused = true) untouched; a missing or damaged file (line count
// not the marker's) makes a rebuild; other options need `overwrite`.
// Real database: ~5 s on 2 shared cores (details at the top of
// freedict_builder.cc).
// Throws t5xx::Error: the database or its index missing (naming the file and
// the package dict-freedict-eng-deu), a malformed index, invalid options,
// no pair selected, other options without overwrite, I/O errors naming the
// file. Nothing is written before the database has been read.
FreedictInfo BuildFreedictData(const FreedictOptions& options);

// Reads <output_dir>/freedict_info.json. Throws t5xx::Error naming the file
// when it is missing or malformed (the data is then not built/complete).
FreedictInfo ReadFreedictInfo(const std::string& output_dir);

}  // namespace t5xx::seqio
