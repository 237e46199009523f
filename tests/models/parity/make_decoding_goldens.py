#!/usr/bin/env python3
"""Makes the t5x decoding goldens in tests/testdata/decoding_parity/.

Runs t5x's own models -- t5x.models.EncoderDecoderModel and
t5x.models.DecoderOnlyModel over the minimal networks of
t5x/examples/t5/network.py and t5x/examples/decoder_only/network.py -- in JAX
on CPU, float32, and records what their predict_batch_with_aux returns
(predictions and aux scores) with t5x.decoding.temperature_sample (greedy,
topk=1) and t5x.decoding.beam_search (num_decodes=4, alpha=0.6), and what
score_batch returns, for a few small batches. The C++ test
tests/models/decoding_parity_test.cc reads the JSON; it never runs this
script. Nothing from t5x is copied here: t5x is imported from a checkout.

Parameters are not made here: they are the committed parity parameters,
tests/testdata/parity/encoder_decoder.json and decoder_only.json (t5x's
module.init(PRNGKey(0)), see tests/models/parity/make_goldens.py), read back
and handed to t5x as its params tree. Each golden file records the sum of
those parameters ("params_sum") so that a test notices if they change.

How to run (what produced the committed files), from the repository root:

  T5X_DIR=/work/t5x-ref ~/.cache/t5xx/t5x-venv/bin/python \\
      tests/models/parity/make_decoding_goldens.py --out tests/testdata/decoding_parity

  * t5x checkout: github.com/google-research/t5x at commit
    cc342d419ec3e3e9c4bf1df33c82330cafdc1e16 at $T5X_DIR; imported through
    tests/interop/t5x_import.py (t5x/__init__.py bypassed, airio stubbed).
  * a Python 3.11 venv with exactly tests/interop/requirements.txt (jax
    0.4.31, flax 0.8.5, seqio 0.0.19, tensorflow-cpu; t5x/models.py imports
    seqio), as scripts/setup_t5x_interop.sh installs it (here:
    ~/.cache/t5xx/t5x-venv).

The batches imitate seqio's EncDecFeatureConverter and
PrefixLMFeatureConverter (unpacked), built with numpy as in make_goldens.py.
Output is deterministic.
"""

import argparse
import functools
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'interop'))

from t5x_import import T5X_COMMIT, import_t5x  # pylint: disable=g-import-not-at-top

T5X_DIR = os.environ.get('T5X_DIR', '/work/t5x-ref')
mods = import_t5x(T5X_DIR, modules=('models', 'decoding', 'examples.t5.network',
                                    'examples.decoder_only.network'))
models, decoding = mods['models'], mods['decoding']
t5_network = mods['examples.t5.network']
decoder_only_network = mods['examples.decoder_only.network']

import flax  # pylint: disable=g-import-not-at-top,g-bad-import-order
from flax import traverse_util  # pylint: disable=g-import-not-at-top
import jax  # pylint: disable=g-import-not-at-top
import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
import seqio  # pylint: disable=g-import-not-at-top

EOS_ID = 1


# ----------------------------------------------------------------------------
# Parameters and batches.
# ----------------------------------------------------------------------------
def load_params(name):
  """The committed parity params of tests/testdata/parity/<name> as a tree."""
  path = os.path.join(ROOT, 'tests', 'testdata', 'parity', name)
  with open(path) as f:
    golden = json.load(f)
  flat = {}
  total = 0.0
  for key, t in sorted(golden['params'].items()):
    a = np.asarray(t['data'], np.float32).reshape(t['shape'])
    total += float(np.sum(a.astype(np.float64)))
    flat[tuple(key.split('.'))] = jnp.asarray(a)
  return (flax.core.freeze(traverse_util.unflatten_dict(flat)), golden['config'],
          total)


def pad_row(seq, length):
  assert len(seq) <= length, (seq, length)
  return np.array(list(seq) + [0] * (length - len(seq)), np.int32)


def autoregressive_inputs(targets):
  """seqio.utils.make_autoregressive_inputs for an unpacked row (BOS 0)."""
  return np.concatenate([[0], targets[:-1]]).astype(np.int32)


def encdec_batch(rows, enc_len, dec_len):
  """seqio.EncDecFeatureConverter, unpacked."""
  enc = np.stack([pad_row(i, enc_len) for i, _ in rows])
  tgt = np.stack([pad_row(t, dec_len) for _, t in rows])
  return {
      'encoder_input_tokens': enc,
      'decoder_target_tokens': tgt,
      'decoder_input_tokens': np.stack([autoregressive_inputs(t) for t in tgt]),
      'decoder_loss_weights': (tgt > 0).astype(np.int32),
  }


def prefix_lm_batch(rows, length):
  """seqio.PrefixLMFeatureConverter (loss_on_targets_only), unpacked."""
  feats = {k: [] for k in ('decoder_target_tokens', 'decoder_input_tokens',
                           'decoder_loss_weights', 'decoder_causal_attention')}
  for inputs, targets in rows:
    t = pad_row(list(inputs) + list(targets), length)
    positions = np.arange(length)
    feats['decoder_target_tokens'].append(t)
    feats['decoder_input_tokens'].append(autoregressive_inputs(t))
    feats['decoder_loss_weights'].append(
        np.logical_xor(positions < len(inputs), t > 0).astype(np.int32))
    feats['decoder_causal_attention'].append(
        (positions < len(inputs) + 1).astype(np.int32))
  return {k: np.stack(v) for k, v in feats.items()}


# Rows: (inputs, targets); EOS = 1 ends each. Lengths chosen so that rows are
# padded differently and decoding runs to the end for some rows.
ENCDEC_ROWS = [([5, 12, 7, 33, 2, 9, 1], [4, 17, 25, 3, 1]),
               ([8, 3, 21, 1], [11, 6, 1]),
               ([30, 14, 1], [22, 9, 13, 1])]
PREFIX_LM_ROWS = [([9, 4, 6, 1], [3, 9, 1]),
                  ([15, 2, 1], [7, 33, 20, 11, 1]),
                  ([5, 8, 13, 21, 34, 1], [2, 1])]


# ----------------------------------------------------------------------------
# JSON helpers.
# ----------------------------------------------------------------------------
def f9(x):
  x = float(x)
  assert np.isfinite(x), x
  return float('%.9g' % x)


def tensor(a):
  a = np.asarray(a)
  if np.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_:
    data = [int(v) for v in a.reshape(-1)]
  else:
    assert a.dtype == np.float32, a.dtype
    data = [f9(v) for v in a.reshape(-1)]
  return {'shape': list(a.shape), 'data': data}


def about(kind):
  return (f'{kind} decoding goldens made by '
          'tests/models/parity/make_decoding_goldens.py from t5x commit '
          f'{T5X_COMMIT} (google-research/t5x) with jax {jax.__version__}, '
          f'flax {flax.__version__}, seqio {seqio.__version__}, numpy '
          f'{np.__version__}, on CPU, float32, '
          'jax_default_matmul_precision=float32. Params: the committed '
          'tests/testdata/parity params (t5x module.init(PRNGKey(0))). Each '
          'case: t5x model.predict_batch_with_aux(params, batch, **kwargs) '
          'with the model built with decode_fn = functools.partial(<fn>, '
          '**decode_fn_kwargs); eos_id = 1 (the output vocabulary is '
          'seqio.PassThroughVocabulary(size=vocab_size, eos_id=1)).')


# Decoding configurations: (name, decode function, its kwargs, predict kwargs).
GREEDY = ('temperature_sample', {'topk': 1})
GREEDY_LOGPROBS = ('temperature_sample', {'topk': 1, 'rescale_log_probs': False})
BEAM4 = ('beam_search', {'alpha': 0.6})


def run_case(make_model, params, batch, name, fn, fn_kwargs, predict_kwargs):
  decode_fn = functools.partial(getattr(decoding, fn), **fn_kwargs)
  model = make_model(decode_fn)
  jbatch = {k: jnp.asarray(v) for k, v in batch.items()}
  predictions, aux = model.predict_batch_with_aux(params, jbatch, **predict_kwargs)
  return {
      'name': name,
      'decode_fn': fn,
      'decode_fn_kwargs': fn_kwargs,
      'predict_kwargs': predict_kwargs,
      'predictions': tensor(np.asarray(predictions, np.int32)),
      'scores': tensor(np.asarray(aux['scores'], np.float32)),
  }


def score_case(make_model, params, batch):
  model = make_model(decoding.temperature_sample)
  jbatch = {k: jnp.asarray(v) for k, v in batch.items()}
  seq, inter = model.score_batch(params, jbatch, return_intermediates=True)
  return {
      'sequence_scores': tensor(np.asarray(seq, np.float32)),
      'token_scores': tensor(np.asarray(inter['decoder']['token_scores'][0],
                                        np.float32)),
  }


# ----------------------------------------------------------------------------
# Encoder-decoder.
# ----------------------------------------------------------------------------
def make_encoder_decoder():
  params, cfg_json, params_sum = load_params('encoder_decoder.json')
  cfg = t5_network.T5Config(
      vocab_size=cfg_json['vocab_size'], dtype=jnp.float32,
      emb_dim=cfg_json['emb_dim'], num_heads=cfg_json['num_heads'],
      num_encoder_layers=cfg_json['num_encoder_layers'],
      num_decoder_layers=cfg_json['num_decoder_layers'],
      head_dim=cfg_json['head_dim'], mlp_dim=cfg_json['mlp_dim'],
      mlp_activations=tuple(cfg_json['mlp_activations']), dropout_rate=0.0,
      logits_via_embedding=cfg_json['logits_via_embedding'],
      float32_attention_logits=False)
  module = t5_network.Transformer(config=cfg)
  vocab = seqio.PassThroughVocabulary(size=cfg.vocab_size, eos_id=EOS_ID)

  def make_model(decode_fn):
    return models.EncoderDecoderModel(
        module, input_vocabulary=vocab, output_vocabulary=vocab,
        optimizer_def=None, decode_fn=decode_fn)

  batch = encdec_batch(ENCDEC_ROWS, enc_len=8, dec_len=10)
  # A prompt for prompt_with_targets: two forced tokens after the BOS.
  prompt_batch = dict(batch)
  prompt_batch['decoder_input_tokens'] = np.stack(
      [pad_row([0, 4, 17], 10), pad_row([0, 11], 10), pad_row([0], 10)])
  cases = []
  for name, (fn, kw), pk, b in (
      ('greedy', GREEDY, {}, batch),
      ('greedy_logprobs', GREEDY_LOGPROBS, {}, batch),
      ('greedy_prompt', GREEDY_LOGPROBS, {'prompt_with_targets': True},
       prompt_batch),
      ('beam4', BEAM4, {'num_decodes': 4, 'return_all_decodes': True}, batch),
      ('beam4_best', BEAM4, {'num_decodes': 4}, batch),
  ):
    c = run_case(make_model, params, b, name, fn, kw, pk)
    c['batch'] = {k: tensor(v) for k, v in b.items()}
    cases.append(c)
  return {
      'about': about('t5x.models.EncoderDecoderModel (t5x/examples/t5/'
                     'network.py Transformer)'),
      'params_from': 'parity/encoder_decoder.json',
      'params_sum': params_sum,
      'eos_id': EOS_ID,
      'cases': cases,
      'score_batch': dict(batch={k: tensor(v) for k, v in batch.items()},
                          **score_case(make_model, params, batch)),
  }


# ----------------------------------------------------------------------------
# Decoder-only.
# ----------------------------------------------------------------------------
def make_decoder_only():
  params, cfg_json, params_sum = load_params('decoder_only.json')
  cfg = decoder_only_network.TransformerConfig(
      vocab_size=cfg_json['vocab_size'], dtype=jnp.float32,
      emb_dim=cfg_json['emb_dim'], num_heads=cfg_json['num_heads'],
      num_layers=cfg_json['num_layers'], head_dim=cfg_json['head_dim'],
      mlp_dim=cfg_json['mlp_dim'],
      mlp_activations=tuple(cfg_json['mlp_activations']), dropout_rate=0.0,
      logits_via_embedding=cfg_json['logits_via_embedding'])
  module = decoder_only_network.DecoderWrapper(config=cfg)
  vocab = seqio.PassThroughVocabulary(size=cfg.vocab_size, eos_id=EOS_ID)
  batch = prefix_lm_batch(PREFIX_LM_ROWS, length=14)
  cases = []
  scores = {}
  for bidi in (True, False):
    def make_model(decode_fn, bidi=bidi):
      return models.DecoderOnlyModel(
          module, vocabulary=vocab, optimizer_def=None, decode_fn=decode_fn,
          inputs_bidirectional_attention=bidi)
    tag = 'prefix_lm' if bidi else 'causal'
    for name, (fn, kw), pk in (
        ('greedy', GREEDY, {}),
        ('greedy_logprobs', GREEDY_LOGPROBS, {}),
        ('beam4', BEAM4, {'num_decodes': 4, 'return_all_decodes': True}),
    ):
      c = run_case(make_model, params, batch, f'{tag}_{name}', fn, kw, pk)
      c['inputs_bidirectional_attention'] = bidi
      cases.append(c)
    scores[tag] = score_case(make_model, params, batch)
  return {
      'about': about('t5x.models.DecoderOnlyModel (t5x/examples/decoder_only/'
                     'network.py DecoderWrapper)') +
               ' All cases decode the one batch "batch"; prefix_lm_* use '
               'inputs_bidirectional_attention=True, causal_* False.',
      'params_from': 'parity/decoder_only.json',
      'params_sum': params_sum,
      'eos_id': EOS_ID,
      'batch': {k: tensor(v) for k, v in batch.items()},
      'cases': cases,
      'score_batch': scores,
  }


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--out', required=True)
  args = parser.parse_args()
  os.makedirs(args.out, exist_ok=True)
  for name, make in (('encoder_decoder.json', make_encoder_decoder),
                     ('decoder_only.json', make_decoder_only)):
    with open(os.path.join(args.out, name), 'w') as f:
      json.dump(make(), f, separators=(',', ':'))
      f.write('\n')
    print('wrote', os.path.join(args.out, name))


if __name__ == '__main__':
  main()
