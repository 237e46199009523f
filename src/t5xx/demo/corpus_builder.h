// Demo pre-training corpus from Debian text packages, in C4 format, plus a
// T5-convention SentencePiece model trained on it.
//
// Stand-in for TFDS c4/en + the T5 SentencePiece model (t5x's default
// pre-training mixture reads C4 through seqio; see seqio.md §2-3). The sources are
// described in corpus_sources.h.
// Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/demo/corpus_sources.h"

namespace t5xx::seqio {

// $T5XX_DATA_DIR if set and non-empty, else $XDG_CACHE_HOME/t5xx, else
// $HOME/.cache/t5xx. Throws t5xx::Error when none of them is set.
std::string DefaultDataDir();

struct CorpusOptions {
  // Where everything is written (created if missing).
  std::string output_dir;
  // Replace a complete corpus in output_dir that was built with other
  // options; without it that is an error (nothing is deleted). Not part of
  // the options compared for reuse.
  bool overwrite = false;
  // Fraction of documents in the validation split, chosen by a hash of
  // (seed, url): independent of document order. In [0, 1).
  double validation_fraction = 0.02;
  // Number of c4-train.json-NNNNN-of-MMMMM.gz files; a document's shard is
  // also chosen by the hash of its url. >= 1.
  int num_train_shards = 4;
  uint64_t seed = 0;
  // SentencePiece base vocabulary size (pieces incl. pad/eos/unk and the 256
  // byte-fallback pieces); sentinels are added later by
  // SentencePieceVocabulary(extra_ids). The trainer uses
  // hard_vocab_limit=false, so a tiny corpus may yield fewer pieces; the
  // actual size is CorpusInfo::base_vocab_size.
  int vocab_size = 8000;
  // Keep only the first max_documents documents in source order (0 = all).
  size_t max_documents = 0;
  // Files or glob patterns. A name ending in .dict, .dict.dz or .dict.gz is
  // read as a dictd database, anything else as a fortune file (plain or
  // gzip).
  std::vector<std::string> sources = DefaultCorpusSources();
  // SentencePiece training input: at most this many sentences (lines of
  // train documents; lines over 4000 bytes are cut at spaces), sampled
  // deterministically by hash with `seed` when there are more. 0 = all.
  size_t spm_input_sentence_size = 200000;
  // Threads for SentencePiece training.
  int spm_num_threads = 2;
};

struct CorpusSplitInfo {
  int64_t documents = 0;
  int64_t characters = 0;           // Unicode code points of "text"
  std::vector<std::string> files;   // absolute or as given by output_dir
};

struct CorpusSourceInfo {
  std::string path;
  std::string kind;                 // "fortune" or "dictd"
  int64_t documents = 0;
};

struct CorpusInfo {
  static constexpr int kFormatVersion = 1;
  std::string output_dir;
  CorpusSplitInfo train;
  CorpusSplitInfo validation;
  std::vector<CorpusSourceInfo> sources;  // expanded source files, in order
  std::string vocab_model_file;           // <output_dir>/sentencepiece.model
  int32_t base_vocab_size = 0;            // pieces in the trained model
  int64_t spm_training_sentences = 0;
  double build_seconds = 0;               // of the build that wrote it
  bool reused = false;                    // true: found complete, not rebuilt

  // Glob patterns for JsonLinesDataSource, e.g.
  // "<dir>/c4-train.json-*-of-00004.gz".
  std::string TrainFilePattern() const;
  std::string ValidationFilePattern() const;
};

// Fixed "timestamp" field of every document (the sources have no dates).
inline constexpr char kCorpusTimestamp[] = "2022-11-20T00:00:00Z";

// Builds the corpus in options.output_dir:
//   c4-train.json-00000-of-0000N.gz ... (N = num_train_shards),
//   c4-validation.json-00000-of-00001.gz: gzip JSON lines
//     {"text": str, "timestamp": kCorpusTimestamp,
//      "url": "file://<source path>#<k>"} where k is the 0-based index of the
//     document within its source file; documents keep source order;
//   sentencepiece.model / sentencepiece.vocab: unigram model, T5 ids
//     (pad=0, eos=1, unk=2, no bos), byte_fallback, character_coverage
//     0.9999, trained on the train split only, deterministic for a seed;
//   corpus_info.json: counts, sources, options, format_version 1 — written
//     last as the completion marker.
// Idempotent: when corpus_info.json exists with the same options (all
// fields but output_dir) and its files exist, returns it (reused = true)
// without touching anything. Otherwise the marker is removed first and
// every file is rewritten (temp name + rename).
//
// Default build on the Debian sources: ~1 minute on 2 cores (57 s
// measured; details at the top of corpus_builder.cc).
//
// Not re-entrant within one process: SentencePiece's trainer uses global
// state (random seed, log level); run one BuildCorpus at a time.
//
// Throws t5xx::Error: a missing source file or a pattern matching nothing
// (names the path and the Debian package to install: fortunes /
// dict-gcide); invalid options; no documents; SentencePiece training
// failure; I/O errors naming the file.
CorpusInfo BuildCorpus(const CorpusOptions& options);

// Reads <output_dir>/corpus_info.json. Throws t5xx::Error naming the file
// when it is missing or malformed (the corpus is then not built/complete).
CorpusInfo ReadCorpusInfo(const std::string& output_dir);

// True when the document with this url goes to the validation split.
bool IsValidationDocument(const std::string& url, uint64_t seed,
                          double validation_fraction);

}  // namespace t5xx::seqio
