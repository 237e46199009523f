// The tokenizer files of a Transformers T5 directory beside seqio's
// vocabularies, and the output-directory rule export and import share.
//
//   seqio.SentencePieceVocabulary(file, extra_ids=N)
//     <-> spiece.model + tokenizer_config.json {"tokenizer_class":
//         "T5Tokenizer", "extra_ids": N}  (both put <extra_id_0> at the
//         last id and count down)
//   seqio.ByteVocabulary(extra_ids=N)
//     <-> tokenizer_config.json {"tokenizer_class": "ByT5Tokenizer",
//         "extra_ids": N}  (3 special ids, then the 256 bytes)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/run/train_config.h"

namespace t5xx::run {

// The output directory of export and import, which never overwrite:
// `dir` made absolute and normal ("out/", "out/." are "out"). Throws
// t5xx::Error naming `flag` when it exists and is not an empty directory,
// or when a parent is not a directory.
std::string CheckOutputDir(const std::string& dir, const std::string& flag);
// Runs `write` on the temporary directory `out`.tmp-<pid>, then renames it
// to `out` (replacing an empty directory); on any error the temporary
// directory is removed and the error rethrown, so nothing is left. Errors
// of making or renaming it name `flag` and the system's reason.
void WriteOutputDir(const std::string& out, const std::string& flag,
                    const std::function<void(const std::string& tmp)>& write);

// Loads the vocabulary (checking a SentencePiece file parses and follows
// T5's ids) and checks that its ids fit the model's `vocab_size`. Throws
// t5xx::Error starting with `where` otherwise. `sentencepiece_path` is the
// resolved file for a SentencePiece vocabulary.
void CheckVocabularyFits(const VocabularyConfig& vocabulary, const std::string& sentencepiece_path,
                         int64_t vocab_size, const std::string& where);

struct TokenizerFiles {
  std::vector<std::pair<std::string, std::string>> files;  // name, content
};

// The tokenizer files of the model's vocabulary (a relative SentencePiece
// path is under `data_dir`). Throws t5xx::Error naming the file when the
// SentencePiece model cannot be read (a gs:// path: copy it locally and
// bind the local path) or its ids do not fit the model's `vocab_size`.
TokenizerFiles TokenizerFilesOf(const VocabularyConfig& vocabulary, const std::string& data_dir,
                                int64_t vocab_size);

// The vocabulary of a Transformers directory's tokenizer files; for
// SentencePiece, `sentencepiece_model_file` is the directory's
// spiece.model. Throws t5xx::Error naming the directory and the files
// when there is no SentencePiece model or ByT5 tokenizer (e.g. only a fast
// tokenizer.json: t5x's vocabularies are SentencePiece or bytes).
VocabularyConfig VocabularyOfTokenizerFiles(const std::string& hf_dir);

}  // namespace t5xx::run
