// `t5xx import`: a Hugging Face Transformers T5 directory (save_pretrained's
// output: config.json, the weights as model.safetensors, sharded safetensors
// with model.safetensors.index.json, or PyTorch's pytorch_model.bin [with its
// index], and the tokenizer files) written as a t5x checkpoint t5xx and t5x
// restore, and a gin file for it:
//
//   OUTPUT_DIR/checkpoint_0/   the parameters (`target.*`, float32; no
//                              optimizer state: finetune with
//                              utils.RestoreCheckpointConfig.strict = False)
//   OUTPUT_DIR/model.gin       the model: T5.1.1's or T5.1.0's base.gin with
//                              the config's sizes and the vocabulary
//   OUTPUT_DIR/spiece.model    the SentencePiece model (when there is one)
//
// docs/transformers_import.md is the user's page.
#pragma once

#include <cstdint>
#include <string>

namespace t5xx::run {

struct TransformersImport {
  std::string checkpoint_dir;
  std::string gin_file;
  std::string weights;   // the weight file(s) read, as named in the directory
  int64_t parameters = 0;
};

// Reads `hf_dir` and writes `output_dir` (which must not exist, or be
// empty) through a temporary directory renamed at the end: on any error
// nothing is written. Throws t5xx::Error naming the file and key for a
// config.json t5xx cannot import (ReadTransformersT5Config), a tokenizer
// that is not SentencePiece or ByT5's, no weight file, a weight file that is
// not safetensors or a PyTorch state dict, a tensor missing, of a shape the
// config disagrees with, of an integer dtype, or not part of a T5 model
// (e.g. umT5's per-layer position biases), and a relative-position
// setting t5x's network fixes (32 buckets, max distance 128).
TransformersImport ImportFromTransformers(const std::string& hf_dir,
                                          const std::string& output_dir);

}  // namespace t5xx::run
