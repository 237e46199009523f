#!/usr/bin/env python3
"""Makes the t5x parity goldens in tests/testdata/parity/.

This script runs Google's t5x network code (t5x/examples/t5/network.py,
t5x/examples/decoder_only/network.py) and t5x/losses.py in JAX on CPU, in
float32, and writes logits, losses and the gradient of the loss with respect
to every parameter for a few small batches -- for the encoder-decoder once per
T5Config variant of t5x's T5 families (T5.1.1/mT5, T5.1.0, ByT5's shape), and
once for t5x/examples/scalable_t5/network.py run scanned (umT5's network). The
C++ parity test reads the JSON files; it never runs this script. Nothing from t5x is copied here: the t5x
modules are imported from a separate checkout.

How to run (what produced the committed files):

  * t5x checkout: github.com/google-research/t5x at commit
      cc342d419ec3e3e9c4bf1df33c82330cafdc1e16
    unpacked at $T5X_DIR (default /work/t5x-ref). Only t5x/losses.py and
    t5x/examples/{t5,decoder_only,scalable_t5}/{network,layers}.py are imported; the
    package t5x/__init__.py (which pulls in seqio/tensorflow) is bypassed.
  * Python 3.11 venv with:
      jax==0.4.30 jaxlib==0.4.30 flax==0.8.5 numpy==1.26.4 ml_dtypes==0.4.1
      (flax 0.8.5 still has flax.linen.partitioning, which t5x's example
      layers import; tensorstore==0.1.65 only to keep `pip check` happy.)
  * Command, from the repository root:
      python3 -m venv /work/golden-venv
      /work/golden-venv/bin/pip install "jax[cpu]==0.4.30" flax==0.8.5 \
          numpy==1.26.4 ml_dtypes==0.4.1 tensorstore==0.1.65
      T5X_DIR=/work/t5x-ref /work/golden-venv/bin/python \
          tests/models/parity/make_goldens.py --out tests/testdata/parity

The batches imitate seqio's feature converters (EncDecFeatureConverter,
LMFeatureConverter, PrefixLMFeatureConverter) including packing; they are
built here with numpy (seqio/tensorflow are not needed).
"""

import argparse
import json
import os
import sys
import types

import numpy as np

T5X_DIR = os.environ.get('T5X_DIR', '/work/t5x-ref')
T5X_COMMIT = 'cc342d419ec3e3e9c4bf1df33c82330cafdc1e16'

import jax  # pylint: disable=g-import-not-at-top

jax.config.update('jax_enable_x64', False)
jax.config.update('jax_platforms', 'cpu')
jax.config.update('jax_default_matmul_precision', 'float32')

import flax  # pylint: disable=g-import-not-at-top
from flax import traverse_util  # pylint: disable=g-import-not-at-top
import jax.numpy as jnp  # pylint: disable=g-import-not-at-top


def _import_t5x():
  """Imports the t5x modules we need without running t5x/__init__.py."""
  pkg_dir = os.path.join(T5X_DIR, 't5x')
  if not os.path.isfile(os.path.join(pkg_dir, 'losses.py')):
    sys.exit(f'no t5x checkout at {T5X_DIR} (set T5X_DIR)')
  stub = types.ModuleType('t5x')
  stub.__path__ = [pkg_dir]  # submodules resolve normally from here
  sys.modules['t5x'] = stub
  import importlib  # pylint: disable=g-import-not-at-top
  losses = importlib.import_module('t5x.losses')
  t5_net = importlib.import_module('t5x.examples.t5.network')
  do_net = importlib.import_module('t5x.examples.decoder_only.network')
  scalable_net = importlib.import_module('t5x.examples.scalable_t5.network')
  return losses, t5_net, do_net, scalable_net


losses, t5_network, decoder_only_network, scalable_t5_network = _import_t5x()


# ----------------------------------------------------------------------------
# seqio-like batch construction (numpy).
# ----------------------------------------------------------------------------
def autoregressive_inputs(targets, segment_ids=None, bos_id=0):
  """seqio.utils.make_autoregressive_inputs for one row."""
  targets = np.asarray(targets, np.int32)
  inputs = np.concatenate([[bos_id], targets[:-1]]).astype(np.int32)
  if segment_ids is not None:
    seg = np.asarray(segment_ids, np.int32)
    shifted = np.concatenate([[0], seg[:-1]])
    not_first = (seg == shifted).astype(np.int32)
    inputs = inputs * not_first + (1 - not_first) * bos_id
  return inputs


def pack_row(seqs, length):
  """seqio packing of several sequences into one row: tokens, ids, positions."""
  tokens, seg, pos = [], [], []
  for i, s in enumerate(seqs):
    tokens += list(s)
    seg += [i + 1] * len(s)
    pos += list(range(len(s)))
  assert len(tokens) <= length, (seqs, length)
  pad = length - len(tokens)
  return (np.array(tokens + [0] * pad, np.int32),
          np.array(seg + [0] * pad, np.int32),
          np.array(pos + [0] * pad, np.int32))


def pad_row(seq, length):
  assert len(seq) <= length
  return np.array(list(seq) + [0] * (length - len(seq)), np.int32)


def encdec_unpacked():
  # (inputs, targets) per row; EOS = 1 ends each sequence.
  rows = [([5, 12, 7, 33, 2, 9, 1], [4, 17, 25, 3, 1]),   # full
          ([8, 3, 21, 1], [11, 6, 1])]                    # padded
  enc = np.stack([pad_row(i, 7) for i, _ in rows])
  tgt = np.stack([pad_row(t, 5) for _, t in rows])
  dec_in = np.stack([autoregressive_inputs(t) for t in tgt])
  return {
      'encoder_input_tokens': enc,
      'decoder_target_tokens': tgt,
      'decoder_input_tokens': dec_in,
      'decoder_loss_weights': (tgt > 0).astype(np.int32),
  }


def encdec_packed():
  rows = [
      [([7, 8, 5, 1], [3, 9, 1]), ([8, 4, 1], [4, 1])],            # padded
      [([13, 2, 1], [22, 30, 5, 1]), ([6, 37, 19, 11, 1], [2, 1])],  # full
  ]
  feats = {k: [] for k in ('encoder_input_tokens', 'encoder_segment_ids',
                           'encoder_positions', 'decoder_target_tokens',
                           'decoder_segment_ids', 'decoder_positions',
                           'decoder_input_tokens', 'decoder_loss_weights')}
  for row in rows:
    e, es, ep = pack_row([i for i, _ in row], 8)
    t, ts, tp = pack_row([t for _, t in row], 6)
    feats['encoder_input_tokens'].append(e)
    feats['encoder_segment_ids'].append(es)
    feats['encoder_positions'].append(ep)
    feats['decoder_target_tokens'].append(t)
    feats['decoder_segment_ids'].append(ts)
    feats['decoder_positions'].append(tp)
    feats['decoder_input_tokens'].append(autoregressive_inputs(t, ts))
    feats['decoder_loss_weights'].append((t > 0).astype(np.int32))
  return {k: np.stack(v) for k, v in feats.items()}


def lm_unpacked():
  rows = [[5, 9, 14, 22, 3, 8, 30, 1], [12, 7, 1]]
  tgt = np.stack([pad_row(r, 8) for r in rows])
  return {
      'decoder_target_tokens': tgt,
      'decoder_input_tokens': np.stack([autoregressive_inputs(t) for t in tgt]),
      'decoder_loss_weights': (tgt > 0).astype(np.int32),
  }


def lm_packed():
  rows = [[[3, 9, 1], [4, 22, 17, 1]], [[10, 2, 31, 1], [6, 1]]]
  feats = {k: [] for k in ('decoder_target_tokens', 'decoder_input_tokens',
                           'decoder_loss_weights', 'decoder_segment_ids',
                           'decoder_positions')}
  for row in rows:
    t, s, p = pack_row(row, 8)
    feats['decoder_target_tokens'].append(t)
    feats['decoder_input_tokens'].append(autoregressive_inputs(t, s))
    feats['decoder_loss_weights'].append((t > 0).astype(np.int32))
    feats['decoder_segment_ids'].append(s)
    feats['decoder_positions'].append(p)
  return {k: np.stack(v) for k, v in feats.items()}


def prefix_lm(rows, length, pack):
  """seqio.PrefixLMFeatureConverter (loss_on_targets_only=True)."""
  feats = {k: [] for k in ('decoder_target_tokens', 'decoder_input_tokens',
                           'decoder_loss_weights', 'decoder_causal_attention')}
  if pack:
    feats['decoder_segment_ids'] = []
    feats['decoder_positions'] = []
  for row in rows:  # row = list of (inputs, targets) examples
    concat = [list(i) + list(t) for i, t in row]
    width = [[len(i)] * (len(i) + len(t)) for i, t in row]
    t, s, p = pack_row(concat, length)
    w, _, _ = pack_row(width, length)            # inputs_width, 0 on padding
    w_add = np.where(w > 0, w + 1, 0)           # inputs_width_add_pos
    positions = p if pack else np.arange(length, dtype=np.int32)
    causal = (positions < w_add).astype(np.int32)
    is_input = positions < w
    non_pad = t > 0
    feats['decoder_target_tokens'].append(t)
    feats['decoder_input_tokens'].append(
        autoregressive_inputs(t, s if pack else None))
    feats['decoder_loss_weights'].append(
        np.logical_xor(is_input, non_pad).astype(np.int32))
    feats['decoder_causal_attention'].append(causal)
    if pack:
      feats['decoder_segment_ids'].append(s)
      feats['decoder_positions'].append(p)
  return {k: np.stack(v) for k, v in feats.items()}


def prefix_lm_unpacked():
  return prefix_lm([[([9, 4, 6, 1], [3, 9, 1])],
                    [([15, 2, 1], [7, 33, 20, 11, 1])]], 8, pack=False)


def prefix_lm_packed():
  return prefix_lm([[([7, 8, 1], [3, 1]), ([5], [9, 1])],
                    [([12, 1], [4, 1]), ([2, 1], [6])]], 8, pack=True)


# ----------------------------------------------------------------------------
# Loss exactly as t5x/models.py BaseTransformerModel.loss_fn.
# ----------------------------------------------------------------------------
def t5x_loss(logits, batch, label_smoothing, z_loss, loss_normalizing_factor):
  lnf, weights = losses.get_loss_normalizing_factor_and_weights(
      loss_normalizing_factor, batch)
  loss, z, weight_sum = losses.compute_weighted_cross_entropy(
      logits,
      targets=batch['decoder_target_tokens'],
      weights=weights,
      label_smoothing=label_smoothing,
      z_loss=z_loss,
      loss_normalizing_factor=lnf)
  return loss, (z, weight_sum, lnf)


LOSS_CASES = [
    ('a', dict(z_loss=1e-4, label_smoothing=0.0, loss_normalizing_factor=None)),
    ('b', dict(z_loss=1e-4, label_smoothing=0.1,
               loss_normalizing_factor='NUM_REAL_TARGET_TOKENS')),
]


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


def flat_params(tree):
  tree = flax.core.unfreeze(tree) if hasattr(flax.core, 'unfreeze') else tree
  flat = traverse_util.flatten_dict(tree, sep='.')
  return dict(sorted(flat.items()))


def config_dict(cfg):
  out = {}
  for k, v in cfg.__dict__.items():
    if k == 'dtype':
      out[k] = jnp.dtype(v).name
    elif isinstance(v, (tuple, list)):
      out[k] = list(v)
    else:
      out[k] = v
  return out


def about(kind, extra=''):
  return (f't5x {kind} goldens made by tests/models/parity/make_goldens.py '
          f'from t5x commit {T5X_COMMIT} (google-research/t5x) with '
          f'jax {jax.__version__}, jaxlib {jax.lib.__version__}, '
          f'flax {flax.__version__}, numpy {np.__version__}, on CPU, float32, '
          'jax_default_matmul_precision=float32, dropout off. Params: '
          'module.init(PRNGKey(0)) as initialised by t5x. Loss: '
          't5x.losses.get_loss_normalizing_factor_and_weights + '
          'compute_weighted_cross_entropy as in models.py loss_fn; grads = '
          'jax.grad(loss) w.r.t. every param. ' + extra)


# Relative-position buckets straight from t5x (the goldens use lengths <= 8,
# which never reach the logarithmic buckets, so they are recorded here).
def relpos_bucket_table(layers_mod):
  rel = np.arange(-300, 301, dtype=np.int32)
  f = layers_mod.RelativePositionBiases._relative_position_bucket
  return {
      'relative_position': [int(v) for v in rel],
      'bidirectional': [int(v) for v in f(rel, bidirectional=True,
                                          num_buckets=32, max_distance=128)],
      'unidirectional': [int(v) for v in f(rel, bidirectional=False,
                                           num_buckets=32, max_distance=128)],
      'note': 'relative_position = memory(key) position - query position; '
              'num_buckets=32, max_distance=128 as in both t5x networks.',
  }


# ----------------------------------------------------------------------------
# Encoder-decoder.
# ----------------------------------------------------------------------------
# The families of t5x/examples/t5 differ in these T5Config fields only:
# T5.1.1 and mT5 (gated GELU, separate logits), T5.1.0 (ReLU MLP, logits
# through the shared embedding), ByT5 (T5.1.1 with a deeper encoder than
# decoder).
ENCODER_DECODER_VARIANTS = {
    't5_1_1': dict(num_encoder_layers=2, num_decoder_layers=2,
                   mlp_activations=('gelu', 'linear'), logits_via_embedding=False),
    't5_1_0': dict(num_encoder_layers=2, num_decoder_layers=2,
                   mlp_activations=('relu',), logits_via_embedding=True),
    'byt5': dict(num_encoder_layers=3, num_decoder_layers=1,
                 mlp_activations=('gelu', 'linear'), logits_via_embedding=False),
}


def encoder_decoder_fns(module):
  """An encoder-decoder Transformer's parameters (PRNGKey 0), its logits and
  its encoder output as functions of (params, batch)."""
  init_vars = module.init(
      jax.random.PRNGKey(0),
      jnp.ones((2, 7), jnp.int32), jnp.ones((2, 5), jnp.int32),
      jnp.ones((2, 5), jnp.int32), decode=False, enable_dropout=False)
  params = init_vars['params']

  def logits_fn(p, batch):
    return module.apply(
        {'params': p},
        batch['encoder_input_tokens'],
        batch['decoder_input_tokens'],
        batch['decoder_target_tokens'],
        encoder_segment_ids=batch.get('encoder_segment_ids', None),
        decoder_segment_ids=batch.get('decoder_segment_ids', None),
        encoder_positions=batch.get('encoder_positions', None),
        decoder_positions=batch.get('decoder_positions', None),
        decode=False, enable_dropout=False)

  def encoded_fn(p, batch):
    return module.apply(
        {'params': p}, batch['encoder_input_tokens'],
        encoder_segment_ids=batch.get('encoder_segment_ids', None),
        enable_dropout=False, method=module.encode)
  return init_vars['params'], logits_fn, encoded_fn


def make_encoder_decoder(variant='t5_1_1'):
  cfg = t5_network.T5Config(
      vocab_size=40, dtype=jnp.float32, emb_dim=16, num_heads=2,
      head_dim=8, mlp_dim=32, dropout_rate=0.0,
      float32_attention_logits=False, **ENCODER_DECODER_VARIANTS[variant])
  module = t5_network.Transformer(config=cfg)
  params, logits_fn, encoded_fn = encoder_decoder_fns(module)

  cases = []
  for bname, bfn in (('unpacked', encdec_unpacked), ('packed', encdec_packed)):
    batch = {k: jnp.asarray(v) for k, v in bfn().items()}
    cases += run_cases(bname, batch, params, logits_fn,
                       extra={'encoded': encoded_fn(params, batch)})
  return {
      'about': about('encoder-decoder (t5x/examples/t5/network.py '
                     'Transformer' + ('' if variant == 't5_1_1' else
                                      f', the {variant} family\'s T5Config fields') + ')',
                     'Extra per case: "encoded" = Transformer.encode output '
                     '(after encoder_norm) [B, Lenc, emb_dim].'),
      'config': config_dict(cfg),
      'params': {k: tensor(v) for k, v in flat_params(params).items()},
      'relpos_buckets': relpos_bucket_table(t5_network.layers),
      'cases': cases,
  }


# ----------------------------------------------------------------------------
# Decoder-only.
# ----------------------------------------------------------------------------
def make_decoder_only(logits_via_embedding):
  cfg = decoder_only_network.TransformerConfig(
      vocab_size=40, dtype=jnp.float32, emb_dim=16, num_heads=2,
      num_layers=2, head_dim=8, mlp_dim=32,
      mlp_activations=('gelu', 'linear'), dropout_rate=0.0,
      logits_via_embedding=logits_via_embedding)
  module = decoder_only_network.DecoderWrapper(config=cfg)
  # As DecoderOnlyModel.get_initial_variables.
  init_vars = module.init(
      jax.random.PRNGKey(0), jnp.ones((2, 8), jnp.int32),
      jnp.ones((2, 8), jnp.int32), enable_dropout=False)
  params = init_vars['params']

  def make_logits_fn(inputs_bidirectional_attention):
    def logits_fn(p, batch):
      # As DecoderOnlyModel._compute_logits (training, no dropout rng).
      dca = (batch['decoder_causal_attention']
             if inputs_bidirectional_attention else None)
      return module.apply(
          {'params': p},
          batch['decoder_input_tokens'],
          batch['decoder_target_tokens'],
          decoder_segment_ids=batch.get('decoder_segment_ids', None),
          decoder_positions=batch.get('decoder_positions', None),
          decoder_causal_attention=dca,
          decode=False, enable_dropout=False)
    return logits_fn

  cases = []
  for bname, bfn, bidi in (('lm_unpacked', lm_unpacked, False),
                           ('lm_packed', lm_packed, False),
                           ('prefix_lm_unpacked', prefix_lm_unpacked, True),
                           ('prefix_lm_packed', prefix_lm_packed, True)):
    batch = {k: jnp.asarray(v) for k, v in bfn().items()}
    cases += run_cases(bname, batch, params, make_logits_fn(bidi),
                       extra_fields={'inputs_bidirectional_attention': bidi})
  return {
      'about': about(
          'decoder-only (t5x/examples/decoder_only/network.py DecoderWrapper)'
          + (' with logits_via_embedding=True' if logits_via_embedding else ''),
          'Module called as DecoderOnlyModel._compute_logits; the prefix_lm '
          'cases use inputs_bidirectional_attention=True (the batch\'s '
          'decoder_causal_attention is passed to the network).'),
      'config': config_dict(cfg),
      'params': {k: tensor(v) for k, v in flat_params(params).items()},
      'relpos_buckets': relpos_bucket_table(decoder_only_network.layers),
      'cases': cases,
  }


def run_cases(bname, batch, params, logits_fn, extra=None, extra_fields=None):
  out = []
  logits = logits_fn(params, batch)
  for lname, lk in LOSS_CASES:
    def loss_of_params(p):
      return t5x_loss(logits_fn(p, batch), batch, **lk)
    (loss, (zl, weight_sum, lnf)), grads = jax.value_and_grad(
        loss_of_params, has_aux=True)(params)
    # Also straight from the already computed logits (must agree).
    loss2, (zl2, _, _) = t5x_loss(logits, batch, **lk)
    assert np.allclose(loss, loss2, rtol=1e-6), (loss, loss2)
    case = {
        'name': f'{bname}_{lname}',
        'batch': {k: tensor(v) for k, v in sorted(batch.items())},
        'z_loss': lk['z_loss'],
        'label_smoothing': lk['label_smoothing'],
        'loss_normalizing_factor': lk['loss_normalizing_factor'],
        'loss_normalizing_factor_value': (None if lnf is None else f9(lnf)),
        'weight_sum': f9(weight_sum),
        'logits': tensor(logits),
        'loss': f9(loss),
        'z_loss_value': f9(zl),
        'cross_ent_loss': f9(np.float32(loss) - np.float32(zl)),
        'grads': {k: tensor(v) for k, v in flat_params(grads).items()},
    }
    for k, v in (extra_fields or {}).items():
      case[k] = v
    for k, v in (extra or {}).items():
      case[k] = tensor(v)
    out.append(case)
  return out


def unstack_scanned(flat, num_encoder_layers, num_decoder_layers, scan_axis):
  """scalable_t5's scanned parameters in t5xx's (and the minimal network's) names.

  A scanned stack keeps every layer's parameter in one array under
  '<stack>.<stack>.<name>' with a 'layers' axis at `scan_axis`; layer i is
  '<stack>.layers_<i>.<name>'. Its 3-D attention kernels, [embed, heads, kv]
  and (out) [heads, kv, embed], are the 2-D [embed, heads*kv] and
  [heads*kv, embed] of the minimal network, row-major: reshaped.
  """
  out = {}
  for name, a in flat.items():
    a = np.asarray(a)
    stack = name.split('.')[0]
    prefix = f'{stack}.{stack}.'
    if not name.startswith(prefix):
      out[name] = a
      continue
    layers = num_encoder_layers if stack == 'encoder' else num_decoder_layers
    assert a.shape[scan_axis] == layers, (name, a.shape)
    rest = name[len(prefix):]
    for i in range(layers):
      v = np.take(a, i, axis=scan_axis)
      if rest.endswith('out.kernel'):
        v = v.reshape(-1, v.shape[-1])
      elif rest.endswith(('query.kernel', 'key.kernel', 'value.kernel')):
        v = v.reshape(v.shape[0], -1)
      out[f'{stack}.layers_{i}.{rest}'] = v
  return dict(sorted(out.items()))


def make_scalable_t5():
  """t5x's scalable_t5 network (scan_layers=True, param_scan_axis=1: umT5's).

  Its parameters, gradients and config are written in t5xx's per-layer
  names (unstack_scanned); each layer has its own relpos_bias.
  """
  cfg = scalable_t5_network.T5Config(
      vocab_size=40, dtype=jnp.float32, emb_dim=16, num_heads=2, head_dim=8, mlp_dim=32,
      dropout_rate=0.0, num_encoder_layers=2, num_decoder_layers=3,
      mlp_activations=('gelu', 'linear'), logits_via_embedding=False,
      remat_policy='none', scan_layers=True, param_scan_axis=1)
  module = scalable_t5_network.Transformer(config=cfg)
  params, logits_fn, encoded_fn = encoder_decoder_fns(module)

  def unstack(tree):
    return unstack_scanned(flat_params(tree), 2, 3, 1)

  cases = []
  for bname, bfn in (('unpacked', encdec_unpacked), ('packed', encdec_packed)):
    batch = {k: jnp.asarray(v) for k, v in bfn().items()}
    for case in run_cases(bname, batch, params, logits_fn,
                          extra={'encoded': encoded_fn(params, batch)}):
      grads = {k: np.asarray(v['data'], np.float32).reshape(v['shape'])
               for k, v in case['grads'].items()}
      case['grads'] = {k: tensor(v) for k, v in unstack_scanned(grads, 2, 3, 1).items()}
      cases.append(case)
  config = config_dict(cfg)
  return {
      'about': about('encoder-decoder (t5x/examples/scalable_t5/network.py Transformer, '
                     'scan_layers=True, param_scan_axis=1: umT5\'s network)',
                     'params and grads are unstacked to per-layer names and 2-D kernels '
                     '(unstack_scanned). Extra per case: "encoded" [B, Lenc, emb_dim].'),
      'config': config,
      'params': {k: tensor(v) for k, v in unstack(params).items()},
      # t5x's own scanned arrays, as its checkpoints hold them (the oracle of
      # checkpoints/t5x/scanned_layers.h).
      'params_scanned': {k: tensor(v) for k, v in flat_params(params).items()},
      'cases': cases,
  }


def write(path, obj):
  with open(path, 'w') as f:
    json.dump(obj, f, separators=(',', ':'))
    f.write('\n')
  print(f'wrote {path} ({os.path.getsize(path)} bytes, '
        f'{len(obj["cases"])} cases, {len(obj["params"])} params)')


def main():
  ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  ap.add_argument('--out', default='tests/testdata/parity')
  args = ap.parse_args()
  os.makedirs(args.out, exist_ok=True)
  with jax.default_matmul_precision('float32'):
    write(os.path.join(args.out, 'encoder_decoder.json'),
          make_encoder_decoder())
    write(os.path.join(args.out, 'encoder_decoder_t5_1_0.json'),
          make_encoder_decoder('t5_1_0'))
    write(os.path.join(args.out, 'encoder_decoder_byt5.json'),
          make_encoder_decoder('byt5'))
    write(os.path.join(args.out, 'encoder_decoder_scalable_t5.json'), make_scalable_t5())
    write(os.path.join(args.out, 'decoder_only.json'),
          make_decoder_only(logits_via_embedding=False))
    write(os.path.join(args.out, 'decoder_only_tied.json'),
          make_decoder_only(logits_via_embedding=True))


if __name__ == '__main__':
  main()
