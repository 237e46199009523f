#!/usr/bin/env python3
"""Makes the t5x bfloat16 goldens in tests/testdata/parity_bf16/.

Runs Google's t5x networks (t5x/examples/t5/network.py and
t5x/examples/decoder_only/network.py) in JAX on CPU with dtype=bfloat16 --
t5x's mixed precision: float32 parameters, bfloat16 activations, float32
logits -- on the same float32 parameters and batches as the float32 parity
goldens (tests/testdata/parity/*.json, made by make_goldens.py), and writes
the logits, the encoder output (enc-dec), the loss and the gradient of the
loss with respect to every parameter. The C++ test tests/models/bf16_test.cc
reads them; it never runs this script. Nothing from t5x is copied: the t5x
modules are imported from a separate checkout, and the batches, the loss and
the JSON helpers are make_goldens.py's.

Cases: enc-dec with float32_attention_logits False and True (T5Config has the
field); decoder-only untied and tied (TransformerConfig has no such field, so
t5x's attention computes its logits in bfloat16 there). One loss setting per
batch, make_goldens.py's 'b' (z_loss 1e-4, label smoothing 0.1,
NUM_REAL_TARGET_TOKENS): the loss itself is float32 and already covered by
the float32 goldens; here only the network's precision is at stake.

Run as make_goldens.py (same venv, same t5x commit), from the repository root:

  T5X_DIR=/work/t5x-ref /work/golden-venv/bin/python \
      tests/models/parity/make_bf16_goldens.py \
      --parity tests/testdata/parity --out tests/testdata/parity_bf16
"""

import argparse
import json
import os
import sys

import numpy as np

# XLA's default xla_allow_excess_precision=true lets XLA:CPU keep fused
# bfloat16 chains in float32 (rounding once, e.g. jitted softmax of
# [3.015625, 6.03125] is [0.0466309, 0.953125], op by op [0.046875,
# 0.957031]); with jaxlib 0.4.30 on CPU it also miscompiles these networks'
# backward pass (the MLP kernels' and the embedding's gradients come out
# uncorrelated with float32's, cosine ~0, while op-by-op execution gives
# 0.9999). Turning it off gives the literal semantics: every primitive
# rounds to bfloat16, as when run op by op.
os.environ['XLA_FLAGS'] = (os.environ.get('XLA_FLAGS', '') +
                           ' --xla_allow_excess_precision=false').strip()

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_goldens as mg  # pylint: disable=g-import-not-at-top

import jax  # pylint: disable=g-import-not-at-top
import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
from flax import traverse_util  # pylint: disable=g-import-not-at-top

LOSS = dict(mg.LOSS_CASES)['b']


def g6(x):
  x = float(x)
  assert np.isfinite(x), x
  return float('%.7g' % x)


def tensor(a):
  a = np.asarray(a)
  if a.dtype == jnp.bfloat16:
    a = a.astype(np.float32)  # exact
  assert a.dtype == np.float32, a.dtype
  return {'shape': list(a.shape), 'data': [g6(v) for v in a.reshape(-1)]}


def load_params(path):
  with open(path) as f:
    g = json.load(f)
  flat = {tuple(k.split('.')): np.asarray(v['data'], np.float32).reshape(
      v['shape']) for k, v in g['params'].items()}
  params = traverse_util.unflatten_dict(flat)
  return g, jax.tree_util.tree_map(jnp.asarray, params)


def batch_of(case):
  return {k: jnp.asarray(np.asarray(v['data'], np.int32).reshape(v['shape']))
          for k, v in case['batch'].items()}


def run(name, batch, params, logits_fn, extra=None):
  # Under jax.jit, as t5x's steps run, but with XLA's excess precision off
  # (set at the top of this file): every primitive rounds to bfloat16, the
  # literal semantics of t5x's code.
  logits = jax.jit(logits_fn)(params, batch)
  assert logits.dtype == jnp.float32, logits.dtype

  def loss_of_params(p):
    return mg.t5x_loss(logits_fn(p, batch), batch, **LOSS)[0]

  loss, grads = jax.jit(jax.value_and_grad(loss_of_params))(params)
  case = {
      'name': name,
      'logits': tensor(logits),
      'loss': g6(loss),
      'grads': {k: tensor(v) for k, v in mg.flat_params(grads).items()},
  }
  for k, v in (extra or {}).items():
    case[k] = tensor(v)
  return case


def about(kind):
  return (f't5x bfloat16 goldens made by tests/models/parity/'
          f'make_bf16_goldens.py from t5x commit {mg.T5X_COMMIT} with jax '
          f'{jax.__version__}, on CPU, under jax.jit with XLA_FLAGS='
          '--xla_allow_excess_precision=false: {kind} with '
          'dtype=bfloat16, on the '
          'params and batches of the float32 parity goldens (cases named as '
          'there, loss setting b only). Floats as 7 significant digits.')


def make_encoder_decoder(parity_dir):
  g, params = load_params(os.path.join(parity_dir, 'encoder_decoder.json'))
  cases = []
  for f32_logits in (False, True):
    cfg_args = dict(g['config'])
    cfg_args.update(dtype=jnp.bfloat16, float32_attention_logits=f32_logits,
                    mlp_activations=tuple(cfg_args['mlp_activations']))
    module = mg.t5_network.Transformer(config=mg.t5_network.T5Config(**cfg_args))

    def logits_fn(p, b, module=module):
      return module.apply(
          {'params': p}, b['encoder_input_tokens'], b['decoder_input_tokens'],
          b['decoder_target_tokens'],
          encoder_segment_ids=b.get('encoder_segment_ids', None),
          decoder_segment_ids=b.get('decoder_segment_ids', None),
          encoder_positions=b.get('encoder_positions', None),
          decoder_positions=b.get('decoder_positions', None),
          decode=False, enable_dropout=False)

    for c in g['cases']:
      if not c['name'].endswith('_b'):
        continue
      b = batch_of(c)
      encoded = jax.jit(lambda p, b, module=module: module.apply(
          {'params': p}, b['encoder_input_tokens'],
          encoder_segment_ids=b.get('encoder_segment_ids', None),
          enable_dropout=False, method=module.encode))(params, b)
      assert encoded.dtype == jnp.bfloat16, encoded.dtype
      case = run(c['name'], b, params, logits_fn, extra={'encoded': encoded})
      case['float32_attention_logits'] = f32_logits
      cases.append(case)
  return {'about': about('t5x/examples/t5/network.py Transformer'),
          'cases': cases}


def make_decoder_only(parity_dir, file):
  g, params = load_params(os.path.join(parity_dir, file))
  cfg_args = dict(g['config'])
  cfg_args.update(dtype=jnp.bfloat16,
                  mlp_activations=tuple(cfg_args['mlp_activations']))
  module = mg.decoder_only_network.DecoderWrapper(
      config=mg.decoder_only_network.TransformerConfig(**cfg_args))
  cases = []
  for c in g['cases']:
    if not c['name'].endswith('_b'):
      continue
    bidi = c['inputs_bidirectional_attention']

    def logits_fn(p, b, bidi=bidi):
      return module.apply(
          {'params': p}, b['decoder_input_tokens'], b['decoder_target_tokens'],
          decoder_segment_ids=b.get('decoder_segment_ids', None),
          decoder_positions=b.get('decoder_positions', None),
          decoder_causal_attention=(b['decoder_causal_attention']
                                    if bidi else None),
          decode=False, enable_dropout=False)

    cases.append(run(c['name'], batch_of(c), params, logits_fn))
  return {'about': about('t5x/examples/decoder_only/network.py DecoderWrapper'
                         f' ({file} config)'),
          'cases': cases}


def main():
  ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  ap.add_argument('--parity', default='tests/testdata/parity')
  ap.add_argument('--out', default='tests/testdata/parity_bf16')
  args = ap.parse_args()
  os.makedirs(args.out, exist_ok=True)
  with jax.default_matmul_precision('float32'):
    outs = {'encoder_decoder.json': make_encoder_decoder(args.parity)}
    for f in ('decoder_only.json', 'decoder_only_tied.json'):
      outs[f] = make_decoder_only(args.parity, f)
  for f, out in outs.items():
    path = os.path.join(args.out, f)
    with open(path, 'w') as fh:
      json.dump(out, fh, separators=(',', ':'))
      fh.write('\n')
    print(f'wrote {path} ({os.path.getsize(path)} bytes, '
          f'{len(out["cases"])} cases)')


if __name__ == '__main__':
  main()
