#!/usr/bin/env python3
"""Produces the golden numbers of tests/optim/*_test.cc by running t5x itself.

Nothing here is t5x code: the script imports t5x's own modules from a t5x
source checkout given on the command line and runs them under JAX.

  python3 tests/optim/make_goldens.py /path/to/t5x-checkout > goldens.txt

Needs jax, flax and optax (the numbers in the tests came from jax 0.4.30,
flax 0.8.5, optax 0.2.5, t5x at commit cc342d41, CPU, float32).

t5x/adafactor.py and t5x/optimizers.py are imported unchanged. Their other
imports are heavy (t5x.utils pulls in seqio, TensorFlow, orbax; optimizers
imports jestimator for its Amos optimizer), so the script puts small stand-ins
for those modules on sys.modules first:
  * t5x.utils: only the two functions adafactor.py and the tests use,
    flatten_dict_string_keys and create_learning_rate_scheduler, taken from
    the checkout's t5x/utils.py at run time (its source is cut out with `ast`
    and executed in a namespace with jnp/flax/traverse_util);
  * jestimator.amos / amos_helper: empty names that optimizers.py refers to.

Inputs are the same closed formula the C++ tests use (Vals below and Vals in
tests/optim/optim_test_util.h): element i of a tensor with seed s is
  float32(scale * (((i * 37 + s * 11) % 19) - 9)).
"""

import ast
import importlib.util
import json
import os
import sys
import types

import flax
from flax import traverse_util
import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update('jax_platform_name', 'cpu')


def _load_t5x(src):
  pkg = types.ModuleType('t5x')
  pkg.__path__ = [os.path.join(src, 't5x')]
  sys.modules['t5x'] = pkg

  # t5x.utils stand-in: two functions cut from the checkout's utils.py.
  utils_src = open(os.path.join(src, 't5x', 'utils.py')).read()
  tree = ast.parse(utils_src)
  wanted = {'flatten_dict_string_keys', 'create_learning_rate_scheduler'}
  utils = types.ModuleType('t5x.utils')
  ns = utils.__dict__
  ns.update(jnp=jnp, flax=flax, traverse_util=traverse_util)
  import typing
  ns.update({k: getattr(typing, k) for k in typing.__all__})
  ns['LearningRateCallable'] = typing.Callable
  for node in tree.body:
    if isinstance(node, ast.FunctionDef) and node.name in wanted:
      exec(compile(ast.Module([node], []), 't5x/utils.py', 'exec'), ns)
  sys.modules['t5x.utils'] = utils
  pkg.utils = utils

  # jestimator stand-in (only names optimizers.py mentions at import time).
  jest = types.ModuleType('jestimator')
  amos = types.ModuleType('jestimator.amos')
  amos.ScaleByAmosState = type('ScaleByAmosState', (), {})
  amos.amos = lambda *a, **k: None
  helper = types.ModuleType('jestimator.amos_helper')
  helper.state_partition_rule = lambda *a, **k: None
  jest.amos, jest.amos_helper = amos, helper
  sys.modules.update({'jestimator': jest, 'jestimator.amos': amos,
                      'jestimator.amos_helper': helper})

  mods = {}
  for name in ('optimizers', 'adafactor'):
    spec = importlib.util.spec_from_file_location(
        f't5x.{name}', os.path.join(src, 't5x', f'{name}.py'))
    m = importlib.util.module_from_spec(spec)
    sys.modules[f't5x.{name}'] = m
    spec.loader.exec_module(m)
    setattr(pkg, name, m)
    mods[name] = m
  return mods['adafactor'], mods['optimizers'], utils


def Vals(shape, seed, scale):
  n = int(np.prod(shape)) if shape else 1
  i = np.arange(n, dtype=np.int64)
  v = scale * (((i * 37 + seed * 11) % 19) - 9).astype(np.float64)
  return v.astype(np.float32).reshape(shape)


def out(x):
  a = np.asarray(jnp.asarray(x, jnp.float32), np.float64)
  return {'shape': list(a.shape), 'values': [float(f'{v:.9g}') for v in a.ravel()]}


def flat(tree):
  return {'.'.join(k): v for k, v in traverse_util.flatten_dict(
      flax.core.unfreeze(tree)).items()}


def run_adafactor(adafactor, optimizers, name, params_spec, steps, lr, axes=None,
                  start_step=0, nan_at=None, **kw):
  """params_spec: {name: (shape, seed, scale)}; grads use seed + 100 + step."""
  opt = adafactor.Adafactor(learning_rate=lr, **kw)
  if axes is not None:
    opt.set_param_axes(axes)
  params = {k: jnp.asarray(Vals(*v)) for k, v in params_spec.items()}
  state = opt.init_state(params)
  state = optimizers.OptimizerState(jnp.asarray(start_step, jnp.int32),
                                    state.param_states)
  for t in range(steps):
    grads = {}
    for k, (shape, seed, scale) in params_spec.items():
      g = Vals(shape, seed + 100 + t, scale * 0.5)
      if nan_at and nan_at[0] == k and nan_at[1] == t:
        g = g.copy().reshape(-1)
        g[nan_at[2]] = np.nan
        g = g.reshape(shape)
      grads[k] = jnp.asarray(g)
    params, state = opt.apply_gradient(opt.hyper_params.replace(learning_rate=lr),
                                       params, state, grads)
  res = {'step': int(state.step), 'params': {k: out(v) for k, v in params.items()},
         'slots': {}}
  for k, st in flat(flax.serialization.to_state_dict(state.param_states)).items():
    res['slots'][k] = out(st)
  return name, res


def main():
  adafactor, optimizers, utils = _load_t5x(sys.argv[1])
  P = jax.sharding.PartitionSpec
  results = {}

  def add(r):
    results[r[0]] = r[1]

  # --- Adafactor ---
  add(run_adafactor(adafactor, optimizers, 'ada_default_vector',
                    {'w': ((3,), 1, 0.5)}, 3, 0.01))
  add(run_adafactor(adafactor, optimizers, 'ada_factored_heuristic',
                    {'k': ((4, 6), 2, 0.1), 'b': ((6,), 3, 0.1)}, 3, 0.01,
                    min_dim_size_to_factor=4))
  add(run_adafactor(adafactor, optimizers, 'ada_factored_equal_dims',
                    {'k': ((5, 5), 4, 0.1)}, 2, 0.02, min_dim_size_to_factor=2))
  add(run_adafactor(adafactor, optimizers, 'ada_momentum_weight_decay',
                    {'k': ((3, 4), 5, 0.1), 'b': ((4,), 6, 0.2)}, 3, 0.05,
                    beta1=0.9, weight_decay_rate=0.01, min_dim_size_to_factor=3))
  add(run_adafactor(adafactor, optimizers, 'ada_momentum_bf16',
                    {'k': ((3, 4), 5, 0.1)}, 3, 0.05, beta1=0.8,
                    dtype_momentum=jnp.bfloat16, factored=False))
  add(run_adafactor(adafactor, optimizers, 'ada_no_clip_no_scale',
                    {'k': ((3, 4), 7, 0.1)}, 3, 0.003, clipping_threshold=None,
                    multiply_by_parameter_scale=False, decay_rate=0.5,
                    epsilon1=1e-3, min_dim_size_to_factor=3))
  add(run_adafactor(adafactor, optimizers, 'ada_step_offset',
                    {'k': ((3, 4), 8, 0.01)}, 2, 0.1, start_step=5, step_offset=4,
                    epsilon2=0.05, clipping_threshold=0.5))
  add(run_adafactor(adafactor, optimizers, 'ada_max_scale_lr_exponent',
                    {'k': ((3, 4), 9, 0.2)}, 2, 0.1, max_parameter_scale=0.3,
                    weight_decay_rate_lr_exponent=1.0))
  add(run_adafactor(adafactor, optimizers, 'ada_global_norm',
                    {'a': ((3, 2), 10, 0.3), 'b': ((4,), 11, 0.3)}, 2, 0.01,
                    global_norm_clip_threshold=0.05, min_dim_size_to_factor=2))
  add(run_adafactor(adafactor, optimizers, 'ada_skip_nan',
                    {'a': ((3,), 12, 0.3), 'k': ((2, 3), 13, 0.3)}, 2, 0.01,
                    skip_nan_updates=True, min_dim_size_to_factor=2,
                    nan_at=('k', 1, 1)))
  add(run_adafactor(adafactor, optimizers, 'ada_skip_nan_vector',
                    {'a': ((3,), 12, 0.3)}, 2, 0.01,
                    skip_nan_updates=True, nan_at=('a', 1, 1)))
  rules_params = {
      'q': ((8, 2, 4), 14, 0.1),     # embed, heads, kv
      's': ((2, 4, 6), 15, 0.1),     # layers, embed, mlp
      'rel': ((2, 5), 16, 0.1),      # heads, relpos_buckets
      'ls': ((2, 3), 17, 0.1),       # layers, embed
      'scale': ((8,), 18, 0.1),      # embed
  }
  rules_axes = {'q': P('embed', 'heads', 'kv'), 's': P('layers', 'embed', 'mlp'),
                'rel': P('heads', 'relpos_buckets'), 'ls': P('layers', 'embed'),
                'scale': P('embed')}
  opt = adafactor.Adafactor(
      logical_factor_rules=adafactor.standard_logical_factor_rules())
  opt.set_param_axes(rules_axes)
  results['ada_rules_factor_map'] = {
      k: [None if d is None else d.name for d in
          (x if isinstance(x, tuple) else (x,))]
      for k, x in flat(opt.hyper_params.factor_map).items()}
  add(run_adafactor(adafactor, optimizers, 'ada_standard_rules', rules_params, 2,
                    0.01, axes=rules_axes,
                    logical_factor_rules=adafactor.standard_logical_factor_rules()))

  # Checkpoint layout of Adafactor's state (beta1 set).
  opt = adafactor.Adafactor(beta1=0.9, min_dim_size_to_factor=2)
  st = opt.init_state({'enc': {'k': jnp.zeros((2, 3))}})
  o = optimizers.Optimizer(opt, st, {'enc': {'k': jnp.zeros((2, 3))}})
  results['ada_state_dict_keys'] = sorted(
      '.'.join(k) for k in traverse_util.flatten_dict(o.state_dict()).keys())

  # --- optax AdamW through t5x.optimizers ---
  def run_optax(name, opt_def, params_spec, steps):
    params = {k: jnp.asarray(Vals(*v)) for k, v in params_spec.items()}
    o = optimizers.Optimizer(opt_def, opt_def.init_state(params), params)
    for t in range(steps):
      grads = {k: jnp.asarray(Vals(shape, seed + 100 + t, scale * 0.5))
               for k, (shape, seed, scale) in params_spec.items()}
      o = o.apply_gradient(grads)
    sd = o.state_dict()
    results[name] = {
        'step': int(np.asarray(o.state.step)),
        'params': {k: out(v) for k, v in o.target.items()},
        'state': {'.'.join(k): out(v) for k, v in
                  traverse_util.flatten_dict(sd['state']).items()},
    }

  spec2 = {'a': ((2, 3), 20, 0.2), 'b': ((3,), 21, 0.2)}
  run_optax('adamw_default', optimizers.adamw(learning_rate=0.01), spec2, 3)
  run_optax('adamw_options', optimizers.adamw(
      learning_rate=0.02, b1=0.8, b2=0.95, eps=1e-3, eps_root=1e-4,
      weight_decay=0.1), spec2, 3)
  sched = utils.create_learning_rate_scheduler(
      factors='constant * linear_warmup', base_learning_rate=0.1, warmup_steps=2)
  run_optax('adamw_schedule_nesterov_bf16', optimizers.adamw(
      learning_rate=sched, nesterov=True, mu_dtype=jnp.bfloat16), spec2, 3)
  run_optax('chain_clip_global_norm_adamw', optimizers.chain(
      [optax.clip_by_global_norm(0.05), optax.adamw(learning_rate=0.01)]),
      spec2, 3)
  run_optax('chain_clip_adamw', optimizers.chain(
      [optax.clip(0.02), optax.adamw(learning_rate=0.01, weight_decay=0.0)]),
      spec2, 2)

  # --- create_learning_rate_scheduler ---
  sch = {}
  for factors, kw in [
      ('constant * linear_warmup * rsqrt_decay', dict(warmup_steps=100)),
      ('constant * linear_decay', dict(base_learning_rate=0.5, warmup_steps=10,
                                       decay_factor=0.01)),
      ('constant * cosine_decay', dict(warmup_steps=10, steps_per_cycle=40)),
      ('constant * decay_every', dict(decay_factor=0.5, steps_per_decay=7,
                                      step_offset=3)),
      ('linear_decay', dict(base_learning_rate=1.0, warmup_steps=4,
                            decay_factor=0.5, min_learning_rate=0.01)),
  ]:
    f = utils.create_learning_rate_scheduler(factors=factors, **kw)
    sch[factors + ' ' + json.dumps(kw)] = {
        s: float(f(jnp.asarray(s, jnp.int32))) for s in (0, 1, 5, 10, 11, 30, 50, 400)}
  results['schedules'] = sch

  json.dump(results, sys.stdout, indent=1)
  print()


if __name__ == '__main__':
  main()
