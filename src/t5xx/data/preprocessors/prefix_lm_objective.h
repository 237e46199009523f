// t5's pretraining steps outside the T5 paper's span corruption that its
// task catalog uses: the prefix-LM objective's targets_for_prefix_lm_objective
// and its two packers (pack_prefix_lm_encoder_decoder,
// pack_prefix_lm_decoder_only; tasks c4_prefix_lm_objective_*), and
// `unsupervised`, the catalog's indirection over a configured list of token
// preprocessors (c4_v020_unsupervised, wikipedia_..._unsupervised).
//
// Behaviour source: t5/data/preprocessors.py (targets_for_prefix_lm_objective,
// trim_and_pad_dataset, pack_prefix_lm_encoder_decoder,
// pack_prefix_lm_decoder_only, unsupervised) and seqio/utils.py
// (make_autoregressive_inputs, trim_and_pad_dataset); checked against t5's
// own functions by tests/data/preprocessors/t5_catalog_preprocessors_test.cc.
// The random draws (select_random_chunk's window, the packers' split point)
// are seeded by (PreprocessContext seed, example index) like t5xx's other
// stochastic steps, not by TF's Philox: the split point differs from t5's,
// everything computed from it is bit-equal (the *Pair / *Example functions
// take it explicitly). Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <vector>

#include "t5xx/data/pipeline/dataset.h"
#include "t5xx/data/preprocessors/preprocessors.h"

namespace t5xx::seqio {

// targets_for_prefix_lm_objective (t5), for tokenized "targets":
//   select_random_chunk(max_length 65536) -> append_eos (where
//   output_features["targets"].add_eos) -> reduce_concat_tokens(128) ->
//   split_tokens(sequence_length["targets"]) -> trim_and_pad_dataset:
// each output is {"targets": [L] int32}, zero-padded, EOS marking document
// ends (documents of up to 65536 tokens are taken whole, so the step is
// then deterministic and bit-equal to t5). As seqio's trim_and_pad_dataset,
// only features the example has are trimmed/padded. Throws t5xx::Error if
// sequence_length has no "targets" or it is < 1.
DatasetPtr TargetsForPrefixLmObjective(DatasetPtr input,
                                       const FeatureLengths& sequence_length,
                                       const OutputFeatures& output_features, uint64_t seed);
Preprocessor TargetsForPrefixLmObjectivePreprocessor();

// The packed length both packers use: t5 takes the first value of
// sequence_length and asserts that it is even and that every value equals
// it. Throws t5xx::Error (naming `who`) for an empty map, an odd length or
// unequal lengths.
int64_t PrefixLmPackedLength(const FeatureLengths& sequence_length, const char* who);

// One packed pair (pack_prefix_lm_encoder_decoder's pack_examples): t0 and
// t1 ([L] int32 each, t5's ds.batch(2)) split at s in [1, L):
//   encoder_input_tokens  = t0[:s] ++ t1[:L-s]
//   decoder_target_tokens = t0[s:] ++ t1[L-s:]
//   decoder_input_tokens  = make_autoregressive_inputs(decoder_target_tokens,
//                           sequence_id = decoder_segment_ids) (0 at each
//                           segment start)
//   encoder_segment_ids   = 1 before s, 2 from s
//   decoder_segment_ids   = 1 before L-s, 2 from L-s
//   encoder_positions     = 0..s-1 ++ 0..L-s-1
//   decoder_positions     = 0..L-s-1 ++ 0..s-1
//   decoder_loss_weights  = decoder_target_tokens != pad_id
// all [L] int32 (token lists). Throws t5xx::Error unless |t0| = |t1| = L
// and 1 <= s < L.
Example PackPrefixLmEncoderDecoderPair(const Tokens& t0, const Tokens& t1, int64_t length,
                                       int64_t split_point, int32_t pad_id = 0);

// pack_prefix_lm_encoder_decoder (t5): consecutive pairs of examples
// (0,1), (2,3), ... each become one PackPrefixLmEncoderDecoderPair of their
// "targets", with s uniform in [1, L) drawn per pair (seeded by the pair's
// index); other features are dropped. An odd last example is an error, as
// in t5 (its batch of one has no second example).
DatasetPtr PackPrefixLmEncoderDecoder(DatasetPtr input, const FeatureLengths& sequence_length,
                                      uint64_t seed, int32_t pad_id = 0);
Preprocessor PackPrefixLmEncoderDecoderPreprocessor(int32_t pad_id = 0);

// One example of pack_prefix_lm_decoder_only: targets ([L] int32) split at
// s in [1, L):
//   decoder_target_tokens    = targets
//   decoder_input_tokens     = targets shifted right, 0 first
//   decoder_loss_weights     = (position >= s, or 1 everywhere when
//                              !loss_on_targets_only) * (targets != pad_id)
//   decoder_causal_attention = position <= s
// Throws t5xx::Error unless |targets| = L and 1 <= s < L.
Example PackPrefixLmDecoderOnlyExample(const Tokens& targets, int64_t length,
                                       int64_t split_point, bool loss_on_targets_only = true,
                                       int32_t pad_id = 0);
DatasetPtr PackPrefixLmDecoderOnly(DatasetPtr input, const FeatureLengths& sequence_length,
                                   uint64_t seed, bool loss_on_targets_only = true,
                                   int32_t pad_id = 0);
Preprocessor PackPrefixLmDecoderOnlyPreprocessor(bool loss_on_targets_only = true,
                                                 int32_t pad_id = 0);

// unsupervised (t5): runs `steps` in order, each given the context's
// sequence_length and output_features (t5 passes them when set) and its own
// seed (HashSeed(context seed, step position)). t5's default,
// preprocessors=None, returns the dataset unchanged (t5 logs a warning;
// its gin files bind unsupervised.preprocessors, e.g. [select_random_chunk,
// reduce_concat_tokens, split_tokens_to_inputs_length, denoise]); an empty
// list is that too.
Preprocessor UnsupervisedPreprocessor(std::vector<Preprocessor> steps);

}  // namespace t5xx::seqio
