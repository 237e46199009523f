// t5/data/tasks.py's pretraining tasks: c4 span corruption, i.i.d.
// denoising, prefix LM, "unsupervised" over the four c4 configs and
// Wikipedia, the prefix-LM objective packed for an encoder-decoder or a
// decoder, and the full-LM task.
#include "t5xx/catalog/catalog_builder.h"

namespace t5xx::catalog::internal {
namespace {

using nlohmann::json;

// rekey {inputs: None, targets: "text"} -> tokenize -> placeholder: the
// steps every c4 task begins with.
std::vector<Step> TextToTargets() {
  return {{"t5.data.preprocessors.rekey", {{"key_map", {{"inputs", nullptr}, {"targets", "text"}}}}},
          {"seqio.preprocessors.tokenize"},
          {kPlaceholder}};
}

std::vector<Step> Then(std::vector<Step> steps, std::initializer_list<Step> more) {
  steps.insert(steps.end(), more.begin(), more.end());
  return steps;
}

}  // namespace

void AddPretrainingTasks(CatalogBuilder& b) {
  const seqio::OutputFeatures& features = b.default_output_features();
  const Step eos_after_trim{"seqio.preprocessors.append_eos_after_trim"};
  b.AddTask({"c4_v220_span_corruption", "c4/en:2.2.0", {},
             Then(TextToTargets(), {{"t5.data.preprocessors.span_corruption"}, eos_after_trim}),
             features, nullptr, {}});
  b.AddTask({"c4_v220_iid_denoising", "c4/en:2.2.0", {},
             Then(TextToTargets(), {{"t5.data.preprocessors.iid_denoising"}, eos_after_trim}),
             features, nullptr, {}});
  b.AddTask({"c4_v220_prefix_lm", "c4/en:2.2.0", {},
             Then(TextToTargets(), {{"t5.data.preprocessors.prefix_lm"}, eos_after_trim}),
             features, nullptr, {}});
  for (const std::string suffix : {"", ".noclean", ".realnewslike", ".webtextlike"}) {
    std::string name = "c4" + suffix + "_v020_unsupervised";
    if (!suffix.empty()) name[2] = '_';  // ".noclean" -> "_noclean"
    b.AddTask({name, "c4/en" + suffix + ":2.2.0", {},
               Then(TextToTargets(), {{"t5.data.preprocessors.unsupervised"}, eos_after_trim}),
               features, nullptr, {}});
  }
  b.AddTask({"wikipedia_20190301.en_v003_unsupervised", "wikipedia/20190301.en:1.0.0", {},
             Then(TextToTargets(), {{"t5.data.preprocessors.unsupervised"}, eos_after_trim}),
             features, nullptr, {}});

  // The prefix-LM objective tasks and the full-LM task use the vocabulary
  // with the extra ids inside the model (extra_ids 0 on top).
  seqio::VocabularyPtr vocab = b.Vocabulary(kSpm100ExtraPath, 0);
  auto plain = [&](bool add_eos = false, bool required = true) {
    return seqio::Feature{vocab, add_eos, required};
  };
  seqio::OutputFeatures enc_dec;
  for (const char* k : {"encoder_input_tokens", "decoder_target_tokens", "decoder_input_tokens",
                        "encoder_segment_ids", "encoder_positions", "decoder_segment_ids",
                        "decoder_positions", "decoder_loss_weights"}) {
    enc_dec[k] = plain();
  }
  enc_dec["targets"] = plain(/*add_eos=*/true, /*required=*/false);
  b.AddTask({"c4_prefix_lm_objective_encoder_decoder_architecture", "c4/en:2.2.0", {},
             Then(TextToTargets(), {{"t5.data.preprocessors.targets_for_prefix_lm_objective"},
                                    {"t5.data.preprocessors.pack_prefix_lm_encoder_decoder"}}),
             enc_dec, nullptr, {}});
  seqio::OutputFeatures dec;
  for (const char* k : {"decoder_target_tokens", "decoder_input_tokens", "decoder_loss_weights",
                        "decoder_causal_attention"}) {
    dec[k] = plain();
  }
  dec["targets"] = plain(/*add_eos=*/true, /*required=*/false);
  b.AddTask({"c4_prefix_lm_objective_decoder_architecture", "c4/en:2.2.0", {},
             Then(TextToTargets(), {{"t5.data.preprocessors.targets_for_prefix_lm_objective"},
                                    {"t5.data.preprocessors.pack_prefix_lm_decoder_only"}}),
             dec, nullptr, {}});
  b.AddTask({"c4_v220_full_lm", "c4/en:2.2.0", {},
             Then(TextToTargets(), {{"t5.data.preprocessors.full_lm"}}),
             {{"targets", plain(/*add_eos=*/true, /*required=*/true)}}, nullptr, {}});
}

}  // namespace t5xx::catalog::internal
