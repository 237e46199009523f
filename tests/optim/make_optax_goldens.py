#!/usr/bin/env python3
"""Writes tests/optim/optax_goldens.json: optax itself, run on the inputs the
C++ tests use, as the oracle of tests/optim/optax_*_test.cc.

  ~/.cache/t5xx/t5x-venv/bin/python tests/optim/make_optax_goldens.py \
      /work/shared/t5x > tests/optim/optax_goldens.json

The committed file came from optax 0.2.3, jax 0.4.31, flax 0.8.5 (CPU,
float32) and the t5x checkout at /work/shared/t5x; the versions are written
into the file ("versions").

Every optimizer runs through t5x's own t5x/optimizers.py (imported unchanged
with make_goldens.py's stand-ins for its heavy imports): optimizers.<name>
for a wrapped optimizer, optimizers.chain([...]) for a chain. So the state
keys recorded are the flattened OptaxWrapper.state_dict()['state'] -- t5x's
checkpoint paths -- and t5x's derive_logical_axes is run on each state to
show it can partition it.

Inputs: parameters a (2, 3) = Vals((2, 3), 20, 0.2), b (3,) = Vals((3,), 21,
0.2); the gradient at step t is Vals(shape, seed + 100 + t, scale * 0.5) (the
closed formula of optim_test_util.h); 20 steps. Schedules are evaluated at
int32 counts 0..N.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_goldens  # noqa: E402  (t5x loader, Vals, out)

import flax  # noqa: E402
from flax import traverse_util  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

STEPS = 20
SPEC = {'a': ((2, 3), 20, 0.2), 'b': ((3,), 21, 0.2)}


def schedules():
  """name -> (schedule, steps to evaluate). Names are used by the C++ tests."""
  wcd = optax.warmup_cosine_decay_schedule
  return {
      'constant': (optax.constant_schedule(0.003), range(0, 4)),
      'linear': (optax.linear_schedule(0.1, 0.01, 10), range(0, 13)),
      'linear_begin': (optax.linear_schedule(0.0, 1.0, 4, transition_begin=3),
                       range(0, 10)),
      'cosine': (optax.cosine_decay_schedule(0.1, 10), range(0, 13)),
      'cosine_alpha_exponent': (optax.cosine_decay_schedule(
          0.5, 8, alpha=0.1, exponent=2.0), range(0, 11)),
      'warmup_cosine': (wcd(0.0, 5e-5, 4, 12, 0.0), range(0, 15)),
      'warmup_cosine_end': (wcd(1e-3, 0.01, 3, 10, 1e-4, exponent=1.5),
                            range(0, 13)),
      'exponential': (optax.exponential_decay(0.1, 3, 0.5), range(0, 12)),
      'exponential_options': (optax.exponential_decay(
          0.1, 3, 0.5, transition_begin=2, staircase=True, end_value=0.02),
                              range(0, 14)),
      'exponential_growth': (optax.exponential_decay(
          0.01, 2, 1.5, end_value=0.03), range(0, 10)),
      'piecewise': (optax.piecewise_constant_schedule(
          0.1, {3: 0.5, 6: 0.1}), range(0, 9)),
      'join': (optax.join_schedules(
          [optax.constant_schedule(0.1), optax.linear_schedule(0.1, 0.0, 4),
           optax.cosine_decay_schedule(0.05, 5)], [3, 8]), range(0, 16)),
  }


def main():
  _, optimizers, utils = make_goldens._load_t5x(sys.argv[1])
  out = make_goldens.out
  wcd = optax.warmup_cosine_decay_schedule
  res = {'versions': {'optax': optax.__version__, 'jax': jax.__version__,
                      'flax': flax.__version__},
         'steps': STEPS, 'cases': {}, 'schedules': {}}

  for name, (f, steps) in schedules().items():
    res['schedules'][name] = [
        [s, float(np.float32(f(jnp.asarray(s, jnp.int32))))] for s in steps]

  o = optimizers
  t5x_sched = utils.create_learning_rate_scheduler(
      factors='constant * linear_warmup', base_learning_rate=0.05,
      warmup_steps=5)
  cases = {
      'adam_default': o.adam(0.01),
      'adam_options': o.adam(0.02, b1=0.8, b2=0.95, eps=1e-3, eps_root=1e-4,
                             nesterov=True, mu_dtype=jnp.bfloat16),
      'adamw_warmup_cosine': o.adamw(wcd(0.0, 0.02, 5, 20, 0.001),
                                     weight_decay=0.05),
      'lion_default': o.lion(0.001),
      'lion_options': o.lion(wcd(0.0, 0.01, 5, 20, 0.001), b1=0.8, b2=0.9,
                             weight_decay=0.1),
      'sgd_plain': o.sgd(0.1),
      'sgd_momentum': o.sgd(0.1, momentum=0.9),
      'sgd_nesterov_schedule': o.sgd(optax.linear_schedule(0.1, 0.01, 15),
                                     momentum=0.8, nesterov=True),
      'rmsprop_default': o.rmsprop(0.01),
      'rmsprop_centered_momentum': o.rmsprop(
          0.01, decay=0.8, eps=1e-4, initial_scale=0.1, centered=True,
          momentum=0.9),
      'rmsprop_nesterov_schedule': o.rmsprop(
          optax.exponential_decay(0.02, 4, 0.7), momentum=0.5, nesterov=True),
      'adagrad_default': o.adagrad(0.1),
      'adagrad_options': o.adagrad(0.05, initial_accumulator_value=0.0,
                                   eps=1e-3),
      'lamb_default': o.lamb(0.01),
      'lamb_options': o.lamb(optax.cosine_decay_schedule(0.02, 20),
                             b1=0.8, eps=1e-3, weight_decay=0.1),
      'chain_clip_lion_warmup_cosine': o.chain([
          optax.clip(0.02), optax.lion(wcd(0.0, 5e-3, 4, 20, 0.0))]),
      'chain_global_norm_sgd_momentum': o.chain([
          optax.clip_by_global_norm(0.05), optax.sgd(0.1, momentum=0.9)]),
      'chain_transforms': o.chain([
          optax.add_decayed_weights(0.01),
          optax.scale_by_schedule(optax.piecewise_constant_schedule(
              1.0, {5: 0.5, 12: 0.2})),
          optax.scale(-0.05)]),
      'chain_adam_t5x_schedule': o.chain([
          optax.clip_by_global_norm(1.0), optax.adam(t5x_sched)]),
  }
  for name, opt_def in cases.items():
    params = {k: jnp.asarray(make_goldens.Vals(*v)) for k, v in SPEC.items()}
    opt = o.Optimizer(opt_def, opt_def.init_state(params), params)
    axes = opt_def.derive_logical_axes(
        opt, {k: jax.sharding.PartitionSpec(*(['embed'] * len(v[0])))
              for k, v in SPEC.items()})
    del axes  # t5x can partition this state
    for t in range(STEPS):
      grads = {k: jnp.asarray(make_goldens.Vals(shape, seed + 100 + t,
                                                scale * 0.5))
               for k, (shape, seed, scale) in SPEC.items()}
      opt = opt.apply_gradient(grads)
    sd = opt.state_dict()
    res['cases'][name] = {
        'params': {k: out(v) for k, v in opt.target.items()},
        'state': {'.'.join(k): dict(out(v), dtype=str(np.asarray(v).dtype))
                  for k, v in traverse_util.flatten_dict(
                      flax.core.unfreeze(sd['state'])).items()
                  if k[0] != 'step'},
    }

  # optax.adafactor's FactoredState has no partition rule in t5x: t5x's
  # derive_logical_axes refuses it (why t5xx does too).
  params = {k: jnp.asarray(make_goldens.Vals(*v)) for k, v in SPEC.items()}
  opt_def = o.chain([optax.adafactor(0.01)])
  opt = o.Optimizer(opt_def, opt_def.init_state(params), params)
  try:
    opt_def.derive_logical_axes(opt, {k: None for k in SPEC})
    res['adafactor_partition_error'] = None
  except ValueError as e:
    res['adafactor_partition_error'] = str(e)

  # One JSON line per array keeps the file short and diffable.
  text = json.dumps(res, indent=1)
  import re
  text = re.sub(r'\[\s+([^\[\]{}]*?)\s+\]',
                lambda m: '[' + ' '.join(m.group(1).split()) + ']', text)
  text = re.sub(r'\{\s+("shape"[^{}]*?)\s+\}',
                lambda m: '{' + ' '.join(m.group(1).split()) + '}', text)
  print(text)


if __name__ == '__main__':
  main()
