#!/usr/bin/env python3
"""Two steps of t5x's own Adafactor on t5x's scanned scalable_t5 parameters.

Writes tests/testdata/parity/adafactor_scalable_t5.json, the oracle of
tests/trainer/scanned_adafactor_test.cc: t5xx trains per layer, and with
scan_layers = True each layer must get the update t5x computes for the
stacked array (factor rule, slot shapes, statistics per layer), and save
parameters and slots in t5x's stacked layout.

Nothing here is t5x code: t5x/adafactor.py, t5x/optimizers.py and
t5x/examples/scalable_t5/network.py are imported unchanged from a t5x
checkout (the stand-ins for their heavy imports come from
tests/optim/make_goldens.py's _load_t5x).

Inputs come from the committed parity golden
tests/testdata/parity/encoder_decoder_scalable_t5.json: its scanned
parameters ("params_scanned", t5x's scalable_t5 network at PRNGKey 0,
param_scan_axis 1) and the gradients of its first two cases (per layer,
restacked here). The logical axes come from the network's params_axes
(jax.eval_shape of its init). Two optimizers, umT5's gin settings
(mt5/base.gin: decay_rate 0.8, step_offset 0,
standard_logical_factor_rules()):
  * "adafactor": umt5/optimizer/adafactor.gin (otherwise t5x's defaults);
  * "adafactor_momentum_nofactor": umt5-xxl's
    optimizer/adafactor_momentum_nofactor.gin (beta1 0.9, factored False,
    global_norm_clip_threshold 1.0).
Step 1 applies case 0's gradients, step 2 case 1's, both at learning rate
0.01. Recorded: the parameters and every slot after step 2, in t5x's
stacked names ('.'-joined, slots as param_states.<param>.<slot>).

  T5X_DIR=/work/t5x-full /work/golden-venv/bin/python \\
      tests/optim/make_scanned_adafactor_golden.py

(jax 0.4.30, flax 0.8.5, t5x at cc342d41, CPU, float32.)
"""

import importlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_goldens as optim_goldens  # pylint: disable=g-import-not-at-top

import flax  # pylint: disable=g-import-not-at-top
from flax import traverse_util  # pylint: disable=g-import-not-at-top
from flax.linen import partitioning as nn_partitioning  # pylint: disable=g-import-not-at-top
import jax  # pylint: disable=g-import-not-at-top
import jax.numpy as jnp  # pylint: disable=g-import-not-at-top

LR = 0.01
PARITY = os.path.join(ROOT, 'tests/testdata/parity/encoder_decoder_scalable_t5.json')
OUT = os.path.join(ROOT, 'tests/testdata/parity/adafactor_scalable_t5.json')


def f9(x):
  return float('%.9g' % float(x))


def tensor(a):
  a = np.asarray(a, np.float32)
  return {'shape': list(a.shape), 'data': [f9(v) for v in a.reshape(-1)]}


def array(t):
  return np.asarray(t['data'], np.float32).reshape(t['shape'])


def restack(per_layer, scanned_shapes, axis):
  """Per-layer arrays ('<stack>.layers_<i>.<rest>', 2-D attention kernels)
  stacked as t5x's scanned ones ('<stack>.<stack>.<rest>')."""
  out = {}
  for name, shape in scanned_shapes.items():
    parts = name.split('.')
    if parts[0] in ('encoder', 'decoder') and parts[1] == parts[0]:
      layer_shape = list(shape)
      n = layer_shape.pop(axis)
      rest = '.'.join(parts[2:])
      layers = [per_layer[f'{parts[0]}.layers_{i}.{rest}'].reshape(layer_shape)
                for i in range(n)]
      out[name] = np.stack(layers, axis=axis)
    else:
      out[name] = per_layer[name]
  return out


def main():
  t5x_dir = os.environ.get('T5X_DIR', '/work/t5x-full')
  adafactor, _, _ = optim_goldens._load_t5x(t5x_dir)  # pylint: disable=protected-access
  network = importlib.import_module('t5x.examples.scalable_t5.network')
  g = json.load(open(PARITY))
  c = g['config']
  cfg = network.T5Config(
      vocab_size=c['vocab_size'], dtype=jnp.float32, emb_dim=c['emb_dim'],
      num_heads=c['num_heads'], head_dim=c['head_dim'], mlp_dim=c['mlp_dim'],
      dropout_rate=0.0, num_encoder_layers=c['num_encoder_layers'],
      num_decoder_layers=c['num_decoder_layers'],
      mlp_activations=tuple(c['mlp_activations']),
      logits_via_embedding=c['logits_via_embedding'], remat_policy='none',
      scan_layers=True, param_scan_axis=c['param_scan_axis'])
  module = network.Transformer(config=cfg)
  shapes = jax.eval_shape(lambda: module.init(
      jax.random.PRNGKey(0), jnp.ones((2, 7), jnp.int32), jnp.ones((2, 5), jnp.int32),
      jnp.ones((2, 5), jnp.int32), decode=False, enable_dropout=False))
  axes = nn_partitioning.get_axis_names(shapes['params_axes'])

  scanned = {k: array(v) for k, v in g['params_scanned'].items()}
  shape_of = {k: v.shape for k, v in scanned.items()}
  grads = [restack({k: array(v) for k, v in g['cases'][i]['grads'].items()}, shape_of,
                   c['param_scan_axis']) for i in (0, 1)]
  unflat = lambda d: flax.core.freeze(traverse_util.unflatten_dict(
      {tuple(k.split('.')): jnp.asarray(v) for k, v in d.items()}))
  runs = {}
  for name, kw in (('adafactor', {}),
                   ('adafactor_momentum_nofactor',
                    dict(beta1=0.9, factored=False, global_norm_clip_threshold=1.0))):
    opt = adafactor.Adafactor(decay_rate=0.8, step_offset=0,
                              logical_factor_rules=adafactor.standard_logical_factor_rules(),
                              **kw)
    opt.set_param_axes(axes)
    params = unflat(scanned)
    state = opt.init_state(params)
    hp = opt.hyper_params.replace(learning_rate=LR)
    for grad in grads:
      params, state = opt.apply_gradient(hp, params, state, unflat(grad))
    slots = traverse_util.flatten_dict(
        flax.serialization.to_state_dict(state.param_states), sep='.')
    runs[name] = {
        'adafactor': {k: (None if v is None else v) for k, v in kw.items()},
        'step': int(state.step),
        'params': {k: tensor(v) for k, v in sorted(traverse_util.flatten_dict(
            flax.core.unfreeze(params), sep='.').items())},
        'slots': {'param_states.' + k: tensor(v) for k, v in sorted(slots.items())},
    }
  out = {
      'about': ('two steps of t5x/adafactor.py (t5x cc342d41) on t5x\'s scanned scalable_t5 '
                'parameters of encoder_decoder_scalable_t5.json, gradients of its cases 0 and '
                '1, learning rate 0.01, decay_rate 0.8, step_offset 0, '
                'standard_logical_factor_rules; made by '
                'tests/optim/make_scanned_adafactor_golden.py'),
      'learning_rate': LR,
      'runs': runs,
  }
  with open(OUT, 'w') as f:
    json.dump(out, f, separators=(',', ':'))
    f.write('\n')
  print(f'wrote {OUT} ({os.path.getsize(OUT)} bytes)')


if __name__ == '__main__':
  jax.config.update('jax_platform_name', 'cpu')
  with jax.default_matmul_precision('float32'):
    main()
