#!/usr/bin/env python3
"""Times one full t5x training step in JAX on CPU, matching t5xx_train_bench.

The JAX side of scripts/bench_vs_jax.sh (bench/bench_vs_jax.py drives it
beside build/bin/t5xx_train_bench); it also runs on its own.

What one step is (all inside one jax.jit, donate_argnums=(0,) as t5x's
trainer donates the train state):
  * forward of Google's t5x network code, imported unmodified at run time
    from a t5x checkout given by --t5x_dir or the T5X_DIR environment
    variable (commit cc342d419ec3e3e9c4bf1df33c82330cafdc1e16; never copied
    into this repository):
      - T5.1.1 tiny / small: t5x/examples/t5/network.py Transformer(T5Config)
      - decoder-only base:   t5x/examples/decoder_only/network.py
                             DecoderWrapper(TransformerConfig)
    vocab 32128, mlp_activations ('gelu','linear'), dropout_rate 0,
    logits_via_embedding False (enc-dec) / True (decoder-only),
    activations in --dtypes, parameters float32 (t5x's mixed precision);
  * loss: t5x/losses.py compute_weighted_cross_entropy, z_loss 1e-4,
    label_smoothing 0, loss_normalizing_factor None (summed over tokens),
    weights = decoder_loss_weights (all ones), plus the accuracy count
    (argmax == target) and weight sum as aux outputs, as t5x's
    EncoderDecoderModel.loss_fn / compute_base_metrics and t5xx's Trainer do;
  * backward: jax.value_and_grad(loss_fn, has_aux=True), as t5x's
    trainer.accumulate_grads_microbatched (num_microbatches None);
  * update: t5x/adafactor.py Adafactor() with its defaults (decay_rate 0.8,
    step_offset 0, clipping_threshold 1.0, multiply_by_parameter_scale,
    factored with the heuristic rule, min_dim_size_to_factor 128, epsilon1
    1e-30, epsilon2 1e-3, no momentum) applied through t5x/optimizers.py
    Optimizer.apply_gradient with learning rate 'constant * rsqrt_decay'
    (base 1.0, warmup_steps 10000) computed from the optimizer step, as in
    t5x/utils.py create_learning_rate_scheduler. These are the settings
    t5xx_train_bench uses (Adafactor({}) and the same schedule).

t5x/__init__.py and t5x/utils.py (which pull in seqio / tensorflow / orbax)
are bypassed: `t5x` is a namespace package over the checkout's t5x/ folder,
`t5x.utils` is a stand-in holding only flatten_dict_string_keys (the one
name t5x/adafactor.py takes from it), and `jestimator` (imported by
t5x/optimizers.py for the Amos optimizer only, which is not used) is a
stand-in. So the venv needs only jax, flax, optax and their dependencies
(bench/jax_requirements.txt), not tests/interop/'s TensorFlow set.

Batch (as t5xx_train_bench builds it): numpy RNG seed 0, token ids uniform
in [3, 32000), no padding, no packing; decoder_loss_weights all ones. (The
values differ from t5xx's libtorch draws; the shapes and the work do not.)

Compilation happens once per config and dtype (PreparedStep: jit, lower,
compile, one first step and two warm-up steps), then any number of rounds
reuse the compiled step. XLA's compile of T5.1.1 small's step takes 6-10
minutes on 2 cores, so compiled executables are also kept in JAX's
persistent compilation cache (--compilation_cache_dir, default
$T5XX_JAX_CACHE_DIR or ~/.cache/t5xx/jax-compile-cache; '' turns it off):
a later run of the same config, dtype, JAX version and machine loads it in
seconds.

A round is one untimed step (the caches may have gone cold while something
else ran) and then `steps` timed steps, each blocked until ready (params,
optimizer state, loss and aux outputs). tokens/s counts input + target
positions per step, batch * (inputs_len + targets_len), as
t5xx_train_bench's tokens_per_second: tokens of the timed steps / their
summed wall time (time.perf_counter).

Usage:
  T5X_DIR=~/.cache/t5xx/t5x ~/.cache/t5xx/jax-venv/bin/python3 \\
      bench/t5x_jax_bench.py [--configs=tiny_32x128+32,...] \\
      [--dtypes=float32,bfloat16] [--steps=N | --min_steps=N --min_time=S] \\
      [--rounds=R] [--out=results.jsonl]
prints one JSON line with the versions, then a readable line per round
(and appends a JSON record per round to --out).

  ... bench/t5x_jax_bench.py --serve --configs=NAME --dtypes=DTYPE
is the worker mode bench/bench_vs_jax.py uses: it compiles the one config,
writes one JSON line {"ready": true, ...} on stdout, then for each line it
reads on stdin holding a whole number N >= 1 runs a round of N timed steps
and writes its JSON record as one line; it exits at end of input. Every
other output goes to stderr. A failure writes {"error": "..."} and exits 1.

Configs (model, batch, inputs length, targets length), the shapes of
t5xx_train_bench's BM_TrainStep: see CONFIGS.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
import types

# Same five shapes as t5xx_train_bench's BM_TrainStep: name -> (model,
# batch, inputs length, targets length; inputs 0 for decoder-only).
CONFIGS = {
    'tiny_32x128+32': ('tiny', 32, 128, 32),
    'tiny_8x512+114': ('tiny', 8, 512, 114),
    'small_8x128+32': ('small', 8, 128, 32),
    'small_2x512+114': ('small', 2, 512, 114),
    'do_base_2x512': ('decoder_only_base', 2, 0, 512),
}
DTYPES = ('float32', 'bfloat16')
T5X_COMMIT = 'cc342d419ec3e3e9c4bf1df33c82330cafdc1e16'
VOCAB = 32128
# configs/models/t5_1_1/{tiny,small}.gin of t5xx (small = t5x's small.gin).
T5_DIMS = {
    'tiny': dict(emb_dim=128, num_heads=4, num_encoder_layers=2,
                 num_decoder_layers=2, head_dim=32, mlp_dim=256),
    'small': dict(emb_dim=512, num_heads=6, num_encoder_layers=8,
                  num_decoder_layers=8, head_dim=64, mlp_dim=1024),
}

# Filled by load_jax_and_t5x(): the module imports only the standard library
# at import time, so bench/bench_vs_jax.py can read CONFIGS without JAX.
jax = jnp = np = None
losses = adafactor = t5_network = do_network = None


def _t5x_stand_ins(pkg_dir, flatten_dict, unfreeze):
  """Registers `t5x` over pkg_dir, `t5x.utils` and `jestimator` stand-ins."""
  stub = types.ModuleType('t5x')
  stub.__path__ = [pkg_dir]
  sys.modules['t5x'] = stub
  utils = types.ModuleType('t5x.utils')
  # t5x/utils.py's flatten_dict_string_keys is this one expression.
  utils.flatten_dict_string_keys = (
      lambda x: flatten_dict(unfreeze(x), sep='/'))
  sys.modules['t5x.utils'] = utils
  stub.utils = utils
  jest = types.ModuleType('jestimator')
  jest.__path__ = []
  amos = types.ModuleType('jestimator.amos')

  class ScaleByAmosState:  # pylint: disable=invalid-name
    pass

  def _amos(*unused_args, **unused_kwargs):
    raise NotImplementedError('jestimator is a stand-in (bench/t5x_jax_bench.py)')

  amos.ScaleByAmosState = ScaleByAmosState
  amos.amos = _amos
  amos_helper = types.ModuleType('jestimator.amos_helper')
  amos_helper.state_partition_rule = lambda *a, **k: None
  jest.amos, jest.amos_helper = amos, amos_helper
  sys.modules.update({'jestimator': jest, 'jestimator.amos': amos,
                      'jestimator.amos_helper': amos_helper})


def load_jax_and_t5x(t5x_dir, cache_dir):
  """Imports JAX, flax and t5x's modules from the checkout at t5x_dir.

  Sets JAX's persistent compilation cache to cache_dir ('' = none). Exits
  with a message naming T5X_DIR when the checkout is not there.
  """
  global jax, jnp, np, losses, adafactor, t5_network, do_network
  import importlib  # pylint: disable=g-import-not-at-top
  pkg_dir = os.path.join(t5x_dir, 't5x')
  needed = ('adafactor.py', 'losses.py', 'optimizers.py',
            os.path.join('examples', 't5', 'network.py'),
            os.path.join('examples', 'decoder_only', 'network.py'))
  missing = [n for n in needed if not os.path.isfile(os.path.join(pkg_dir, n))]
  if missing:
    sys.exit(f'error: no t5x checkout at T5X_DIR={t5x_dir!r} (missing '
             f't5x/{missing[0]}); set T5X_DIR (or --t5x_dir) to a checkout '
             f'of github.com/google-research/t5x at {T5X_COMMIT}')
  import numpy  # pylint: disable=g-import-not-at-top
  import jax as jax_module  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp_module  # pylint: disable=g-import-not-at-top
  import flax.core  # pylint: disable=g-import-not-at-top
  from flax import traverse_util  # pylint: disable=g-import-not-at-top
  np, jax, jnp = numpy, jax_module, jnp_module
  if cache_dir:
    os.makedirs(cache_dir, exist_ok=True)
    jax.config.update('jax_compilation_cache_dir', cache_dir)
  _t5x_stand_ins(pkg_dir, traverse_util.flatten_dict, flax.core.unfreeze)
  losses = importlib.import_module('t5x.losses')
  adafactor = importlib.import_module('t5x.adafactor')
  t5_network = importlib.import_module('t5x.examples.t5.network')
  do_network = importlib.import_module('t5x.examples.decoder_only.network')


def environment():
  """Versions and settings a record is measured under."""
  import importlib.metadata  # pylint: disable=g-import-not-at-top
  env = {'python': platform.python_version()}
  for p in ('jax', 'jaxlib', 'flax', 'optax', 'numpy'):
    try:
      env[p] = importlib.metadata.version(p)
    except importlib.metadata.PackageNotFoundError:
      env[p] = None
  env.update({
      'devices': str(jax.devices()),
      'XLA_FLAGS': os.environ.get('XLA_FLAGS'),
      'jax_default_matmul_precision':
          str(jax.config.jax_default_matmul_precision),
      'compilation_cache_dir': jax.config.jax_compilation_cache_dir,
  })
  return env


def _no_one_hot_embed(orig):
  """Diagnostic only (--no_one_hot): Embed with a gather instead of t5x's
  one-hot contraction. NOT t5x's network as shipped."""
  def make(*args, **kwargs):
    kwargs['one_hot'] = False
    return orig(*args, **kwargs)
  return make


def build(model, dtype, one_hot=True):
  """t5x's flax module for `model` with activations in `dtype`."""
  if model == 'decoder_only_base':
    layers = do_network.layers
    cfg = do_network.TransformerConfig(
        vocab_size=VOCAB, dtype=dtype, emb_dim=768, num_heads=12,
        num_layers=12, head_dim=64, mlp_dim=2048,
        mlp_activations=('gelu', 'linear'), dropout_rate=0.0,
        logits_via_embedding=True)
    module = do_network.DecoderWrapper(cfg)
  else:
    layers = t5_network.layers
    cfg = t5_network.T5Config(
        vocab_size=VOCAB, dtype=dtype, mlp_activations=('gelu', 'linear'),
        dropout_rate=0.0, logits_via_embedding=False, **T5_DIMS[model])
    module = t5_network.Transformer(cfg)
  if not one_hot:
    layers.Embed = _no_one_hot_embed(layers.Embed)
  return module


def make_batch(batch, in_len, tg_len):
  rng = np.random.RandomState(0)
  b = {}
  if in_len > 0:
    b['encoder_input_tokens'] = rng.randint(3, 32000, (batch, in_len)).astype(np.int32)
  b['decoder_target_tokens'] = rng.randint(3, 32000, (batch, tg_len)).astype(np.int32)
  b['decoder_input_tokens'] = rng.randint(3, 32000, (batch, tg_len)).astype(np.int32)
  b['decoder_loss_weights'] = np.ones((batch, tg_len), np.int32)
  return {k: jnp.asarray(v) for k, v in b.items()}


class PreparedStep:
  """One config's compiled train step, its optimizer state and batch.

  Construction initialises the parameters and Adafactor state, compiles the
  step (timed: compile_s), and runs a first step and two warm-up steps
  (unless compile_only). run_round(steps) then times `steps` steps.
  """

  def __init__(self, name, dtype_name, one_hot=True, compile_only=False):
    if name not in CONFIGS:
      raise ValueError(f'unknown config {name!r}; one of {", ".join(CONFIGS)}')
    if dtype_name not in DTYPES:
      raise ValueError(f'unknown dtype {dtype_name!r}; one of {", ".join(DTYPES)}')
    model, batch, in_len, tg_len = CONFIGS[name]
    self.info = {
        'config': name, 'model': model, 'dtype': dtype_name,
        'batch': batch, 'inputs_len': in_len, 'targets_len': tg_len,
        'one_hot_embed': one_hot, 'tokens_per_step': batch * (in_len + tg_len),
    }
    dtype = jnp.float32 if dtype_name == 'float32' else jnp.bfloat16
    module = build(model, dtype, one_hot)
    b = make_batch(batch, in_len, tg_len)
    enc_dec = in_len > 0

    def apply(params, b, rng):
      if enc_dec:
        return module.apply({'params': params}, b['encoder_input_tokens'],
                            b['decoder_input_tokens'], b['decoder_target_tokens'],
                            enable_dropout=True, rngs={'dropout': rng})
      return module.apply({'params': params}, b['decoder_input_tokens'],
                          b['decoder_target_tokens'], enable_dropout=True,
                          rngs={'dropout': rng})

    t0 = time.perf_counter()
    if enc_dec:
      init = jax.jit(lambda k: module.init(
          k, b['encoder_input_tokens'], b['decoder_input_tokens'],
          b['decoder_target_tokens'], enable_dropout=False))
    else:
      init = jax.jit(lambda k: module.init(
          k, b['decoder_input_tokens'], b['decoder_target_tokens'],
          enable_dropout=False))
    params = init(jax.random.PRNGKey(0))['params']
    self.info['n_params'] = int(
        sum(x.size for x in jax.tree_util.tree_leaves(params)))
    opt = adafactor.Adafactor().create(params)  # t5x defaults == t5xx Adafactor({})
    jax.block_until_ready(opt)
    self.info['init_s'] = time.perf_counter() - t0

    def loss_fn(params, b, rng):
      logits = apply(params, b, rng)
      targets = b['decoder_target_tokens']
      weights = b['decoder_loss_weights']
      loss, z_loss, weight_sum = losses.compute_weighted_cross_entropy(
          logits, targets=targets, weights=weights, label_smoothing=0.0,
          z_loss=1e-4, loss_normalizing_factor=None)
      correct = jnp.sum((jnp.argmax(logits, -1) == targets) * weights)
      return loss, {'z_loss': z_loss, 'weight_sum': weight_sum,
                    'correct': correct}

    def train_step(opt, b, rng):
      step = jnp.maximum(0, opt.state.step)
      lr = jnp.asarray(1.0 / jnp.sqrt(jnp.maximum(step, 10000)), jnp.float32)
      (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(
          opt.target, b, rng)
      new_opt = opt.apply_gradient(grads, learning_rate=lr)
      return new_opt, loss, aux

    self._rng = jax.random.PRNGKey(1)
    self._batch = b
    t0 = time.perf_counter()
    self._step = jax.jit(train_step, donate_argnums=(0,)).lower(
        opt, b, self._rng).compile()
    self.info['compile_s'] = time.perf_counter() - t0
    self._opt = opt
    self._loss = self._aux = None
    if compile_only:
      return
    t0 = time.perf_counter()
    self._one_step()
    self.info['first_step_s'] = time.perf_counter() - t0
    self.info['first_loss'] = float(self._loss)
    for _ in range(2):  # warm-up
      self._one_step()

  def _one_step(self):
    self._opt, self._loss, self._aux = self._step(self._opt, self._batch,
                                                  self._rng)
    jax.block_until_ready((self._opt, self._loss, self._aux))

  def run_round(self, steps=None, min_steps=10, min_time=0.0):
    """One untimed step, then `steps` timed steps (or at least min_steps
    and min_time seconds when steps is None); returns the round's record."""
    self._one_step()
    times = []
    total0 = time.perf_counter()
    while (len(times) < steps if steps else
           len(times) < min_steps or time.perf_counter() - total0 < min_time):
      t0 = time.perf_counter()
      self._one_step()
      times.append(time.perf_counter() - t0)
    res = dict(self.info)
    res.update({
        'steps_timed': len(times),
        'tokens_per_second': self.info['tokens_per_step'] * len(times) / sum(times),
        'step_ms_mean': 1e3 * sum(times) / len(times),
        'step_ms_median': 1e3 * statistics.median(times),
        'step_ms_min': 1e3 * min(times), 'step_ms_max': 1e3 * max(times),
        'last_loss': float(self._loss),
        'last_correct': float(self._aux['correct']),
    })
    return res


def _serve(args):
  """Worker mode (see the module docstring); returns the exit status."""
  out = sys.stdout
  sys.stdout = sys.stderr  # stdout carries the protocol lines only

  def send(record):
    out.write(json.dumps(record) + '\n')
    out.flush()

  configs, dtypes = args.configs.split(','), args.dtypes.split(',')
  if len(configs) != 1 or len(dtypes) != 1:
    send({'error': '--serve takes exactly one --configs and one --dtypes'})
    return 1
  try:
    prepared = PreparedStep(configs[0], dtypes[0], one_hot=not args.no_one_hot)
  except Exception as e:  # pylint: disable=broad-except
    send({'error': f'{type(e).__name__}: {e}'})
    return 1
  send(dict(prepared.info, ready=True, env=environment()))
  for line in sys.stdin:
    line = line.strip()
    if not line:
      continue
    if not line.isdigit() or int(line) < 1:
      send({'error': f'expected a whole number of steps >= 1, got {line!r}'})
      return 1
    send(prepared.run_round(steps=int(line)))
  return 0


def main():
  ap = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
  ap.add_argument('--configs', default=','.join(CONFIGS),
                  help='comma-separated, of: ' + ', '.join(CONFIGS))
  ap.add_argument('--dtypes', default='float32', help='float32,bfloat16')
  ap.add_argument('--t5x_dir', default=os.environ.get('T5X_DIR', ''),
                  help=f't5x checkout at {T5X_COMMIT} (default $T5X_DIR)')
  ap.add_argument('--compilation_cache_dir', default=os.environ.get(
      'T5XX_JAX_CACHE_DIR',
      os.path.join(os.path.expanduser('~'), '.cache', 't5xx', 'jax-compile-cache')),
                  help="JAX's persistent compilation cache ('' = none)")
  ap.add_argument('--steps', type=int, default=0,
                  help='timed steps per round (default: --min_steps/--min_time)')
  ap.add_argument('--min_steps', type=int, default=10)
  ap.add_argument('--min_time', type=float, default=5.0, help='seconds')
  ap.add_argument('--rounds', type=int, default=1,
                  help='rounds per config, all on one compiled step')
  ap.add_argument('--no_one_hot', action='store_true',
                  help='diagnostic: gather embedding instead of t5x one-hot')
  ap.add_argument('--compile_only', action='store_true',
                  help='only compile (fills the compilation cache)')
  ap.add_argument('--serve', action='store_true',
                  help='worker mode for bench/bench_vs_jax.py')
  ap.add_argument('--out', default=None, help='append JSON lines here')
  ap.add_argument('--tag', default='')
  args = ap.parse_args()
  if args.steps < 0 or args.rounds < 1 or args.min_steps < 1:
    ap.error('--steps must be >= 0, --rounds and --min_steps >= 1')
  load_jax_and_t5x(args.t5x_dir, args.compilation_cache_dir)
  if args.serve:
    return _serve(args)
  env = environment()
  print(json.dumps(env), flush=True)
  for dt in args.dtypes.split(','):
    for name in args.configs.split(','):
      try:
        prepared = PreparedStep(name, dt, one_hot=not args.no_one_hot,
                                compile_only=args.compile_only)
      except ValueError as e:
        ap.error(str(e))
      if args.compile_only:
        print(json.dumps(prepared.info), flush=True)
        continue
      for r in range(args.rounds):
        res = prepared.run_round(steps=args.steps, min_steps=args.min_steps,
                                 min_time=args.min_time)
        res.update(tag=args.tag, round=r, env=env)
        print(f"{name:16s} {dt:8s} round {r}: tokens/s "
              f"{res['tokens_per_second']:10.1f} step ms median "
              f"{res['step_ms_median']:9.1f} (n={res['steps_timed']}, compile "
              f"{res['compile_s']:.1f}s, loss {res['first_loss']:.1f}->"
              f"{res['last_loss']:.1f})", flush=True)
        if args.out:
          with open(args.out, 'a') as f:
            f.write(json.dumps(res) + '\n')
  return 0


if __name__ == '__main__':
  sys.exit(main())
