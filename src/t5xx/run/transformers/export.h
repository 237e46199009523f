// `t5xx export`: a t5x checkpoint of an encoder-decoder T5 (T5.1.0, T5.1.1,
// mT5, ByT5) written as a Hugging Face Transformers model directory, so
// T5ForConditionalGeneration.from_pretrained(dir) and the tokenizer classes
// load it:
//
//   config.json              Transformers' T5Config (feed_forward_proj from
//                            mlp_activations, tie_word_embeddings from
//                            logits_via_embedding)
//   generation_config.json   decoder start 0, EOS 1, PAD 0 (t5x's ids)
//   model.safetensors        float32, Transformers' names and layouts
//                            (checkpoints/transformers/transformers_t5.h)
//   spiece.model, tokenizer_config.json, special_tokens_map.json
//                            T5Tokenizer over the model's SentencePiece
//                            vocabulary (extra_ids kept), or ByT5Tokenizer
//
// docs/transformers_export.md is the user's page.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/run/train_config.h"

namespace t5xx::run {

// The model a set of gin files configures, from the macro MODEL alone (a
// model file such as models/t5_1_1/base.gin is enough: DROPOUT_RATE, which
// run files set, is taken as 0.0 while it is %gin.REQUIRED). `config` holds
// the parsed files (not finalized). Throws t5xx::Error when no file defines
// MODEL, or for what ReadModel refuses.
ModelConfig ReadModelMacro(gin::Config& config);

struct TransformersExport {
  int64_t step = 0;             // the checkpoint's
  int64_t parameters = 0;       // numbers written
  std::vector<std::string> files;  // written into output_dir, in order
};

// Writes `output_dir` (which must not exist, or be empty) from the
// parameters of `checkpoint_dir` (`target.*`; optimizer state is not
// read); a relative SentencePiece path is looked up under `data_dir`.
// Everything goes to a temporary directory renamed at the end: on any error
// nothing is left. Throws t5xx::Error naming the file or array for a
// decoder-only model, activations or a vocabulary Transformers' T5 has
// not, a checkpoint array that is missing, of another shape than the
// config's or not float32/bfloat16, and target arrays the table does not
// know (e.g. a scanned checkpoint).
TransformersExport ExportToTransformers(const ModelConfig& model,
                                        const std::string& checkpoint_dir,
                                        const std::string& output_dir,
                                        const std::string& data_dir);

}  // namespace t5xx::run
