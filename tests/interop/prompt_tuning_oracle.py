"""The golden of t5xx's prompt tuning: prompt-tuning's own JAX prompt module
on t5x's own T5.1.1 network, with the parameters of a checkpoint t5xx wrote.

The network is t5x's t5x/examples/t5/network.py (its EncoderLayer, Decoder,
layers.Embed, LayerNorm, RelativePositionBiases), with the encoder's
embedded inputs passed through prompt-tuning's
prompt_tuning.train.prompts.Prompt(prompt=prompt_tuning.prompts.Prompt(...))
(prefix_prompt) before the embedding dropout, and the masks extended as
prompt-tuning's masks.add_fake_prompt / create_prompt_encoder_mask do
(the prompt's positions count as tokens) -- what prompt-tuning's
PromptEncoder / PromptEncoderDecoder do to flaxformer's T5. Both modules are
imported from their checkouts ($T5X_DIR, $PROMPT_TUNING_DIR); flaxformer,
which prompt-tuning imports only for its `Array`/`DType` type aliases, is
stubbed with those two names.

Usage: prompt_tuning_oracle.py CHECKPOINT BATCH.json T5XX_OUTPUT.json
  PROMPT_LENGTH [key=value ...network.T5Config overrides]
Reads the checkpoint with t5x's own load_t5x_checkpoint, computes the
logits of BATCH and the summed cross-entropy of its decoder_target_tokens
and its gradient with respect to encoder/prompt/prompt/prompt, and compares
them with t5xx_logits' (T5XX_OUTPUT.json): max |difference| <= 1e-5 for the
logits and the gradient (relative to the largest magnitude), the loss within
1e-5 relative. Prints the differences; exits 1 when a bound is exceeded.
"""

import json
import os
import sys
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t5x_import  # pylint: disable=g-import-not-at-top


def stub_flaxformer():
  import typing  # pylint: disable=g-import-not-at-top
  pkg = types.ModuleType('flaxformer')
  pkg.__path__ = []
  ft = types.ModuleType('flaxformer.types')
  ft.Array = typing.Any
  ft.DType = typing.Any
  pkg.types = ft
  sys.modules.setdefault('flaxformer', pkg)
  sys.modules.setdefault('flaxformer.types', ft)


def main():
  ckpt_path, batch_path, t5xx_path, prompt_length = sys.argv[1:5]
  prompt_length = int(prompt_length)
  overrides = dict(a.split('=', 1) for a in sys.argv[5:])
  mods = t5x_import.import_t5x(None, ('checkpoints', 'examples.t5.network',
                                      'examples.t5.layers'))
  checkpoints = mods['checkpoints']
  network = mods['examples.t5.network']
  layers = mods['examples.t5.layers']
  stub_flaxformer()
  pt_dir = os.environ.get('PROMPT_TUNING_DIR') or os.path.join(
      os.path.dirname(__file__), '..', '..', '..', 'shared', 'prompt-tuning')
  sys.path.insert(0, os.path.abspath(pt_dir))
  from prompt_tuning import prompts  # pylint: disable=g-import-not-at-top
  from prompt_tuning.train import prompts as train_prompts  # pylint: disable=g-import-not-at-top
  import flax.linen as nn  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

  cfg_args = dict(vocab_size=1152, dtype='float32', emb_dim=128, num_heads=4,
                  num_encoder_layers=2, num_decoder_layers=2, head_dim=32,
                  mlp_dim=256, mlp_activations=('gelu', 'linear'),
                  dropout_rate=0.0, logits_via_embedding=False)
  for k, v in overrides.items():
    cfg_args[k] = type(cfg_args[k])(v)
  cfg = network.T5Config(**cfg_args)

  class PromptEncoder(nn.Module):
    """t5x's Encoder with prompt-tuning's Prompt after the embedding."""
    config: network.T5Config
    shared_embedding: nn.Module

    @nn.compact
    def __call__(self, tokens, deterministic=True):
      c = self.config
      rel_emb = layers.RelativePositionBiases(
          num_buckets=32, max_distance=128, num_heads=c.num_heads, dtype=c.dtype,
          embedding_init=nn.initializers.variance_scaling(1.0, 'fan_avg', 'uniform'),
          name='relpos_bias')
      x = self.shared_embedding(tokens.astype('int32'))
      x = train_prompts.Prompt(
          prompt=prompts.Prompt(length=prompt_length, dtype=c.dtype, parent=None),
          name="prompt")(tokens, x)
      x = nn.Dropout(rate=c.dropout_rate, broadcast_dims=(-2,))(x, deterministic=deterministic)
      x = x.astype(c.dtype)
      with_prompt = fake_prompt(tokens)
      mask = layers.make_attention_mask(with_prompt > 0, with_prompt > 0, dtype=c.dtype)
      for lyr in range(c.num_encoder_layers):
        x = network.EncoderLayer(config=c, relative_embedding=rel_emb,
                                 name=f'layers_{lyr}')(x, mask, deterministic)
      x = layers.LayerNorm(dtype=c.dtype, name='encoder_norm')(x)
      return nn.Dropout(rate=c.dropout_rate)(x, deterministic=deterministic)

  def fake_prompt(tokens):
    # prompt-tuning's masks.add_fake_prompt: ones for the prompt's positions.
    return jnp.concatenate(
        [jnp.ones((tokens.shape[0], prompt_length), tokens.dtype), tokens], axis=1)

  class PromptTransformer(nn.Module):
    config: network.T5Config

    def setup(self):
      c = self.config
      self.shared_embedding = layers.Embed(
          num_embeddings=c.vocab_size, features=c.emb_dim, dtype=c.dtype,
          attend_dtype=jnp.float32, embedding_init=nn.initializers.normal(stddev=1.0),
          one_hot=True, name='token_embedder')
      self.encoder = PromptEncoder(config=c, shared_embedding=self.shared_embedding)
      self.decoder = network.Decoder(config=c, shared_embedding=self.shared_embedding)

    def __call__(self, enc, dec_in, dec_tgt):
      encoded = self.encoder(enc)
      c = self.config
      decoder_mask = layers.make_decoder_mask(decoder_target_tokens=dec_tgt, dtype=c.dtype)
      cross = layers.make_attention_mask(dec_tgt > 0, fake_prompt(enc) > 0, dtype=c.dtype)
      return self.decoder(encoded, decoder_input_tokens=dec_in, decoder_mask=decoder_mask,
                          encoder_decoder_mask=cross, deterministic=True)

  state = checkpoints.load_t5x_checkpoint(ckpt_path)
  params = jax.tree_util.tree_map(jnp.asarray, state['target'])
  batch = json.load(open(batch_path))
  enc = jnp.asarray(batch['encoder_input_tokens'], jnp.int32)
  dec_in = jnp.asarray(batch['decoder_input_tokens'], jnp.int32)
  dec_tgt = jnp.asarray(batch['decoder_target_tokens'], jnp.int32)
  model = PromptTransformer(cfg)
  # The checkpoint's parameters must be exactly the module's.
  shapes = jax.eval_shape(lambda: model.init(jax.random.PRNGKey(0), enc, dec_in, dec_tgt))
  want = {'/'.join(k) for k in __import__('flax').traverse_util.flatten_dict(
      shapes['params']).keys()}
  got = {'/'.join(k) for k in __import__('flax').traverse_util.flatten_dict(params).keys()}
  if want != got:
    print('FAIL parameter names: only in the module', sorted(want - got),
          'only in the checkpoint', sorted(got - want))
    return 1

  def loss_fn(p):
    logits = model.apply({'params': p}, enc, dec_in, dec_tgt)
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, dec_tgt[..., None], axis=-1).sum(), logits

  (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
  grad = np.asarray(grads['encoder']['prompt']['prompt']['prompt']).reshape(-1)
  ours = json.load(open(t5xx_path))
  d_logits = float(np.max(np.abs(np.asarray(ours['logits'], np.float32) - np.asarray(logits))))
  scale = float(np.max(np.abs(grad)))
  d_grad = float(np.max(np.abs(np.asarray(ours['grad'], np.float32) - grad))) / max(scale, 1e-30)
  d_loss = abs(ours['loss'] - float(loss)) / abs(float(loss))
  print(f'prompt {prompt_length} x {cfg.emb_dim}; loss JAX {float(loss):.7g} t5xx '
        f'{ours["loss"]:.7g} (relative {d_loss:.2e}); max |logits diff| {d_logits:.2e}; '
        f'max |grad diff| / max |grad| {d_grad:.2e} (max |grad| {scale:.3g})')
  ok = d_logits <= 1e-5 and d_grad <= 1e-5 and d_loss <= 1e-5 and scale > 0
  print('ok' if ok else 'FAIL')
  return 0 if ok else 1


if __name__ == '__main__':
  sys.exit(main())
