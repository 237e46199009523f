// Model FLOPs of the T5 encoder-decoder, for MFU -- the implementation of
// flops.h.
#include "t5xx/models/flops.h"

namespace t5xx::models {

double EncoderDecoderForwardFlops(const T5Config& c, int64_t enc_len,
                                  int64_t dec_len) {
  const double e = c.emb_dim, hd = c.num_heads * c.head_dim, f = c.mlp_dim;
  const double a = static_cast<double>(c.mlp_activations.size() + 1);
  const double v = c.vocab_size, le = enc_len, ld = dec_len;
  const double ne = c.num_encoder_layers, nd = c.num_decoder_layers;
  double enc = le * ne * (2 * 4 * e * hd + 2 * a * e * f) + ne * 2 * 2 * le * le * hd;
  double dec = ld * nd * (2 * 4 * e * hd + 2 * 2 * e * hd + 2 * a * e * f) +
               ld * 2 * e * v + le * nd * 2 * 2 * e * hd +
               nd * (2 * 2 * ld * ld * hd + 2 * 2 * ld * le * hd);
  return enc + dec;
}

double EncoderDecoderTrainFlops(const T5Config& config, int64_t batch_size,
                                int64_t enc_len, int64_t dec_len) {
  return 3.0 * batch_size * EncoderDecoderForwardFlops(config, enc_len, dec_len);
}

double DecoderOnlyForwardFlops(const DecoderOnlyConfig& c, int64_t length) {
  const double e = c.emb_dim, hd = c.num_heads * c.head_dim, f = c.mlp_dim;
  const double a = static_cast<double>(c.mlp_activations.size() + 1);
  const double v = c.vocab_size, l = length, n = c.num_layers;
  return l * n * (2 * 4 * e * hd + 2 * a * e * f) + l * 2 * e * v + n * 2 * 2 * l * l * hd;
}

double DecoderOnlyTrainFlops(const DecoderOnlyConfig& config, int64_t batch_size,
                             int64_t length) {
  return 3.0 * batch_size * DecoderOnlyForwardFlops(config, length);
}

}  // namespace t5xx::models
