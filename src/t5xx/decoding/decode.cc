// Decode -- t5x's model-side call of its configured decode_fn.
#include "t5xx/decoding/decoding.h"

namespace t5xx::decoding {

DecodeResult Decode(const DecodeFnConfig& config, const at::Tensor& inputs, Cache cache,
                    const TokensToLogits& tokens_to_logits, int64_t eos_id,
                    int64_t num_decodes, at::Generator* rng) {
  if (config.kind == DecodeFnConfig::Kind::kBeamSearch) {
    BeamSearchOptions options = config.beam_search;
    options.num_decodes = num_decodes;
    return BeamSearch(inputs, std::move(cache), tokens_to_logits, eos_id, options);
  }
  TemperatureSampleOptions options = config.temperature_sample;
  options.num_decodes = num_decodes;
  return TemperatureSample(inputs, std::move(cache), tokens_to_logits, eos_id, options, rng);
}

}  // namespace t5xx::decoding
