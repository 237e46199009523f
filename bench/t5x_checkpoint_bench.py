#!/usr/bin/env python3
"""Peer of bench/checkpoint_bench.cc: t5x's own checkpointer on the same state.

Times t5x's legacy (non-Orbax) checkpointer, t5x.checkpoints.Checkpointer
.save and .restore, imported from a t5x checkout (never copied here), on
T5.1.1 small with its Adafactor state, so that its numbers can be read side
by side with build/bin/t5xx_checkpoint_bench (BM_SaveSync, BM_Restore).

State (what t5x's T5.1.1 small gin configs build, made with t5x's code):
  * model: t5x/examples/t5/network.py Transformer with T5Config(vocab_size
    32128, emb_dim 512, num_heads 6, head_dim 64, num_encoder_layers 8,
    num_decoder_layers 8, mlp_dim 1024, mlp_activations ('gelu', 'linear'),
    dropout_rate 0, logits_via_embedding False, dtype 'float32') inside
    t5x.models.EncoderDecoderModel; parameters from
    model.get_initial_variables(PRNGKey(0)), float32 (network.py's params are
    float32 whatever T5Config.dtype says);
  * optimizer: t5x/adafactor.py Adafactor as t5x/examples/t5/t5_1_1/base.gin
    sets it (decay_rate 0.8, step_offset 0, logical_factor_rules =
    standard_logical_factor_rules(), everything else at its default: factored
    second moments, min_dim_size_to_factor 128, no first moment), in a
    t5x.train_state.FlaxOptimTrainState at step 0 (freshly initialised slots;
    the values do not matter to the layout, only to gzip's ratio);
  * partitioner: t5x.partitioning.PjitPartitioner(num_partitions=1) on one
    CPU device (standard logical axis rules).
With one device t5x writes each partitioned array as a TensorStore zarr
array with gzip (level 1, TensorStore's default) in chunks of at most 64 MiB
(t5x's _choose_chunk_shape; one chunk per array here), and the
unpartitioned leaves inline in the msgpack `checkpoint` index: the step,
Adafactor's factored second moments (v_row, v_col vectors) and its (1,)
placeholder slots. That is t5x's layout, the one t5xx writes; for this state
951 arrays, 234 of them zarr (the 190 parameters and the 44 unfactored v).

What is timed (time.perf_counter, wall clock):
  save     Checkpointer.save(train_state) into a fresh checkpoints_dir
           (created, with its Checkpointer, before the clock starts): device
           to host copy, gzip, TensorStore writes (TensorStore's file driver
           fsyncs each chunk file: its file_io_sync context default is true),
           the msgpack index (written with tf.io.gfile, not fsync'ed) and
           t5x's commit, the rename of checkpoint_0.tmp-<ts> to
           checkpoint_0. The directory is removed after the clock stops.
  restore  Checkpointer.restore(path=<checkpoint_0>) of the last saved
           checkpoint through one Checkpointer made for the same state:
           msgpack read, TensorStore reads and gunzip, arrays placed on the
           device and the new FlaxOptimTrainState built, until every leaf
           is ready (jax.block_until_ready). The checkpoint was just written,
           so it is read from the page cache, as in the C++ bench.
Each is run --warmup times untimed (default 1: t5x saves many times in a
run, and the first call pays one-time setup), then --reps times (default 3);
the reported seconds are the median, MB/s = MB / median seconds. The first
restore is checked against the saved state (every leaf bitwise equal), not
timed. t5x's legacy Checkpointer has no asynchronous save, so there is no
peer of BM_SaveAsync.

MB = 10^6 bytes of uncompressed array data: the sum of nbytes over every
leaf of train_state.state_dict() (parameters, Adafactor slots, step), as in
checkpoint_bench.cc.

Directory root: $T5XX_BENCH_DIR, else /tmp (the C++ bench's), holding
t5x_checkpoint_bench_save_<i> and t5x_checkpoint_bench_restore, removed at
the end.

Output (stdout): the versions and the machine, then JSON lines (each line
that starts with '{': one `environment` record, one per measurement with the
name, MB, seconds, MB_per_s and every run), then a readable table.

Versions it was written against (tests/interop/requirements.txt, installed
by scripts/setup_t5x_interop.sh with pip --no-deps): Python 3.11, jax/jaxlib
0.4.31, flax 0.8.5, numpy 1.26.4, tensorstore 0.1.65, orbax-checkpoint 0.6.4,
tensorflow-cpu 2.17.1, and t5x at cc342d419ec3e3e9c4bf1df33c82330cafdc1e16
(tests/interop/t5x_import.py imports it from the checkout, bypassing
t5x/__init__.py and stubbing `airio`). The script prints the versions it
actually ran with.

How to run, from the repository root (a few minutes on 2 cores; most of it
is building the model and the Adafactor state):

  T5X_DIR=/work/t5x-ref ~/.cache/t5xx/t5x-venv/bin/python \\
      bench/t5x_checkpoint_bench.py [--reps 3] [--warmup 1]

(the venv may also be at /work/t5x-venv; T5X_DIR defaults to /work/t5x-ref.)
"""

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import sys
import time

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')

import numpy as np  # pylint: disable=g-import-not-at-top

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(_REPO, 'tests', 'interop'))
import t5x_import  # pylint: disable=g-import-not-at-top

T5X_DIR = os.environ.get('T5X_DIR', '/work/t5x-ref')

# T5.1.1 small (t5x/examples/t5/t5_1_1/{base,small}.gin), float32.
CONFIG = dict(
    vocab_size=32128, emb_dim=512, num_heads=6, num_encoder_layers=8,
    num_decoder_layers=8, head_dim=64, mlp_dim=1024,
    mlp_activations=('gelu', 'linear'), dropout_rate=0.0,
    logits_via_embedding=False, dtype='float32')
# t5x/examples/t5/t5_1_1/base.gin's Adafactor (plus its logical_factor_rules).
ADAFACTOR = dict(decay_rate=0.8, step_offset=0)

PACKAGES = ('jax', 'jaxlib', 'flax', 'numpy', 'tensorstore',
            'orbax-checkpoint', 'tensorflow-cpu', 'msgpack', 'optax', 'seqio')


def package_versions():
  out = {'python': platform.python_version()}
  for p in PACKAGES:
    try:
      out[p] = importlib.metadata.version(p)
    except importlib.metadata.PackageNotFoundError:
      out[p] = None
  return out


def machine():
  model = platform.processor() or platform.machine()
  try:
    with open('/proc/cpuinfo') as f:
      for line in f:
        if line.startswith('model name'):
          model = line.split(':', 1)[1].strip()
          break
  except OSError:
    pass
  try:
    usable = len(os.sched_getaffinity(0))
  except AttributeError:
    usable = os.cpu_count()
  return {'cpu_model': model, 'cpu_count': os.cpu_count(),
          'cpus_usable': usable, 'platform': platform.platform()}


def bench_dir(name):
  d = os.path.join(os.environ.get('T5XX_BENCH_DIR') or '/tmp',
                   't5x_checkpoint_bench_' + name)
  shutil.rmtree(d, ignore_errors=True)
  os.makedirs(d)
  return d


def main():
  ap = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
  ap.add_argument('--reps', type=int, default=3, help='timed runs (median)')
  ap.add_argument('--warmup', type=int, default=1, help='untimed runs first')
  args = ap.parse_args()

  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
  # Adafactor warns once per rank<=2 parameter that it ignores the factor
  # rule; t5x's trainer logs the same. Errors still show.
  absl_logging.set_verbosity(absl_logging.ERROR)
  m = t5x_import.import_t5x(T5X_DIR, (
      'adafactor', 'checkpoints', 'models', 'partitioning', 'train_state',
      'examples.t5.network'))
  adafactor, checkpoints, models = m['adafactor'], m['checkpoints'], m['models']
  partitioning, train_state_lib = m['partitioning'], m['train_state']
  network = m['examples.t5.network']
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  import seqio  # pylint: disable=g-import-not-at-top

  env = {'name': 'environment', 'versions': package_versions(),
         't5x_dir': os.path.abspath(T5X_DIR),
         't5x_commit_expected': t5x_import.T5X_COMMIT,
         'machine': machine(),
         'jax_devices': [str(d) for d in jax.devices()],
         'bench_root': os.environ.get('T5XX_BENCH_DIR') or '/tmp',
         'reps': args.reps, 'warmup': args.warmup}
  print('t5x checkpoint bench (peer of bench/checkpoint_bench.cc)')
  print('versions:', ', '.join(f'{k} {v}' for k, v in env['versions'].items()))
  print(f"t5x: {env['t5x_dir']} (expected commit {t5x_import.T5X_COMMIT})")
  mc = env['machine']
  print(f"machine: {mc['cpu_model']}, {mc['cpu_count']} cores "
        f"({mc['cpus_usable']} usable), {mc['platform']}; "
        f"jax devices {env['jax_devices']}")
  print(f"directory root: {env['bench_root']}")
  sys.stdout.flush()

  # The train state, with t5x's code.
  t0 = time.perf_counter()
  vocab = seqio.PassThroughVocabulary(size=CONFIG['vocab_size'], eos_id=1)
  optimizer_def = adafactor.Adafactor(
      logical_factor_rules=adafactor.standard_logical_factor_rules(),
      **ADAFACTOR)
  model = models.EncoderDecoderModel(
      module=network.Transformer(config=network.T5Config(**CONFIG)),
      input_vocabulary=vocab, output_vocabulary=vocab,
      optimizer_def=optimizer_def)
  shapes = {'encoder_input_tokens': (1, 8), 'decoder_input_tokens': (1, 8),
            'decoder_target_tokens': (1, 8)}
  variables = model.get_initial_variables(
      jax.random.PRNGKey(0), input_shapes=shapes,
      input_types={k: jnp.int32 for k in shapes})
  state = train_state_lib.FlaxOptimTrainState.create(optimizer_def, variables)
  leaves = jax.tree_util.tree_leaves(state.state_dict())
  jax.block_until_ready(leaves)
  nbytes = sum(np.asarray(x).nbytes for x in leaves)
  n_params = sum(np.asarray(x).size
                 for x in jax.tree_util.tree_leaves(state.params))
  mb = nbytes / 1e6
  print(f'state: {n_params} parameters, {len(leaves)} arrays, {mb:.3f} MB '
        f'(built in {time.perf_counter() - t0:.1f} s)')
  sys.stdout.flush()

  partitioner = partitioning.PjitPartitioner(num_partitions=1)

  def checkpointer(d):
    return checkpoints.Checkpointer(
        train_state=state, partitioner=partitioner, checkpoints_dir=d)

  # Save: each into a fresh checkpoints_dir.
  save_runs = []
  ckpt_dir = None
  restore_root = None
  n_save = args.warmup + args.reps
  for i in range(n_save):
    last = i == n_save - 1
    d = bench_dir('restore' if last else f'save_{i}')
    c = checkpointer(d)
    t = time.perf_counter()
    c.save(state)
    dt = time.perf_counter() - t
    ckpt_dir = os.path.join(d, 'checkpoint_0')
    if not os.path.isfile(os.path.join(ckpt_dir, 'checkpoint')):
      raise RuntimeError(f'no checkpoint written at {ckpt_dir}')
    if i >= args.warmup:
      save_runs.append(dt)
    if last:
      restore_root = d  # kept for the restores
    else:
      shutil.rmtree(d)

  on_disk = 0
  n_zarr = 0
  for root, _, files in os.walk(ckpt_dir):
    n_zarr += '.zarray' in files
    on_disk += sum(os.path.getsize(os.path.join(root, f)) for f in files)

  # Restore: the last saved checkpoint, through one Checkpointer.
  c = checkpointer(restore_root)
  restore_runs = []
  for i in range(args.warmup + args.reps):
    t = time.perf_counter()
    restored = c.restore(path=ckpt_dir)
    jax.block_until_ready(jax.tree_util.tree_leaves(restored.state_dict()))
    dt = time.perf_counter() - t
    if i == 0:  # correctness, untimed
      a = jax.tree_util.tree_flatten_with_path(state.state_dict())[0]
      b = jax.tree_util.tree_flatten_with_path(restored.state_dict())[0]
      assert [k for k, _ in a] == [k for k, _ in b], 'restored keys differ'
      for (k, x), (_, y) in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y),
                                      err_msg=jax.tree_util.keystr(k))
    if i >= args.warmup:
      restore_runs.append(dt)
    del restored
  shutil.rmtree(restore_root)

  results = []
  for name, runs in (('t5x_save', save_runs), ('t5x_restore', restore_runs)):
    s = statistics.median(runs)
    results.append({'name': name, 'MB': round(mb, 6), 'seconds': s,
                    'MB_per_s': mb / s, 'runs_s': runs,
                    'arrays': len(leaves), 'zarr_arrays': n_zarr,
                    'checkpoint_bytes_on_disk': on_disk})
  print(json.dumps(env, sort_keys=True))
  for r in results:
    print(json.dumps(r, sort_keys=True))

  print(f'\ncheckpoint: {len(leaves)} arrays ({n_zarr} in zarr, the rest '
        f'inline in msgpack), {on_disk / 1e6:.3f} MB on disk '
        f'(gzip ratio {nbytes / on_disk:.2f})')
  print(f"{'benchmark':<12} {'MB':>10} {'seconds':>9} {'MB/s':>9}  runs (s)")
  for r in results:
    print(f"{r['name']:<12} {r['MB']:>10.3f} {r['seconds']:>9.3f} "
          f"{r['MB_per_s']:>9.1f}  "
          + ' '.join(f'{x:.3f}' for x in r['runs_s']))


if __name__ == '__main__':
  main()
