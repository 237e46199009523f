#!/usr/bin/env python3
"""t5x's own checkpoint code opens a checkpoint that t5xx wrote.

Usage: t5x_reader_test.py T5XX_BINARY WORK_DIR

1. `t5xx build_corpus` makes a small demo corpus (its SentencePiece model is
   the run's vocabulary) and `t5xx train` trains a tiny T5.1.1 for 2 steps
   with Adafactor, saving WORK_DIR/model/checkpoint_2.
2. Independently of t5x, the msgpack index is decoded with msgpack (flax's
   ndarray extension) and every TensorStore spec's array is read with
   zarr-python: the reference values.
3. t5x.checkpoints.load_t5x_checkpoint (t5x's reader, no train state) must
   return exactly those arrays: the same paths, shapes, dtypes and values.
4. t5x.checkpoints.Checkpointer.restore into a t5x train state of the same
   model (t5x/examples/t5/network.py Transformer, t5x.adafactor.Adafactor
   with the run's settings, t5x.train_state.FlaxOptimTrainState, one-device
   PjitPartitioner) must succeed and give the same arrays, with step 2; then
   t5x's EncoderDecoderModel.loss_fn on a batch with the restored parameters
   must be finite (the parameters are usable by t5x's model).

t5x comes from a checkout (T5X_DIR; see t5x_import.py) and its Python
dependencies from the venv this script runs in (tests/interop/
requirements.txt, installed by scripts/setup.sh --test). When either is
missing the script prints why and exits 77 (ctest's SKIP_RETURN_CODE).
Exit status: 0 ok, 1 mismatch, 77 skipped.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t5x_import  # pylint: disable=g-import-not-at-top

SKIP = 77


def skip(reason):
  if os.environ.get('T5XX_INTEROP_REQUIRE'):  # set by run_t5x_reader_test.sh
    print(f'FAIL: the t5x venv is marked installed, but: {reason}')
    sys.exit(1)
  print(f'SKIP: {reason}')
  print('      (scripts/setup.sh --test installs t5x\'s Python packages into '
        '${T5XX_T5X_VENV:-~/.cache/t5xx/t5x-venv} when a t5x checkout is '
        'available: T5X_DIR, or a clone of github.com/google-research/t5x)')
  sys.exit(SKIP)


try:
  import msgpack  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  import zarr  # pylint: disable=g-import-not-at-top
except ImportError as e:
  skip(f'{e}')

try:
  _m = t5x_import.import_t5x(None, (
      'adafactor', 'checkpoints', 'models', 'partitioning', 'train_state',
      'examples.t5.network'))
except t5x_import.T5xUnavailable as e:
  skip(str(e))

adafactor = _m['adafactor']
checkpoints = _m['checkpoints']
models = _m['models']
partitioning = _m['partitioning']
train_state_lib = _m['train_state']
network = _m['examples.t5.network']

import flax  # pylint: disable=g-import-not-at-top,g-bad-import-order
from flax import traverse_util  # pylint: disable=g-import-not-at-top
import jax  # pylint: disable=g-import-not-at-top
import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
import seqio  # pylint: disable=g-import-not-at-top

# The run: tiny.gin + pretrain.gin with these network sizes. vocab 512 covers
# the corpus's 400 SentencePiece pieces + 100 sentinels.
NETWORK = dict(vocab_size=512, emb_dim=16, num_heads=2, num_encoder_layers=2,
               num_decoder_layers=2, head_dim=8, mlp_dim=32,
               mlp_activations=('gelu', 'linear'), dropout_rate=0.0,
               logits_via_embedding=False, dtype='float32')
# t5xx's base.gin Adafactor, with factoring from dim 16 so that v_row/v_col
# slots exist in a model this small.
ADAFACTOR = dict(decay_rate=0.8, step_offset=0, min_dim_size_to_factor=16)
STEPS = 2
RUN_GIN = """\
from __gin__ import dynamic_registration
import seqio
from t5x import adafactor
from t5x import utils
from t5x.examples.t5 import network

include 'models/t5_1_1/tiny.gin'
include 'runs/pretrain.gin'

MIXTURE_OR_TASK_NAME = 'c4_demo_span_corruption'
TASK_FEATURE_LENGTHS = {{'inputs': 32, 'targets': 8}}
TRAIN_STEPS = {steps}
BATCH_SIZE = 4
DROPOUT_RATE = 0.0
RANDOM_SEED = 0
EVAL_PERIOD = None
network.T5Config:
  vocab_size = {vocab_size}
  emb_dim = {emb_dim}
  num_heads = {num_heads}
  num_encoder_layers = {num_encoder_layers}
  num_decoder_layers = {num_decoder_layers}
  head_dim = {head_dim}
  mlp_dim = {mlp_dim}
adafactor.Adafactor.min_dim_size_to_factor = {min_dim_size_to_factor}
utils.SaveCheckpointConfig.period = {steps}
seqio.SentencePieceVocabulary.sentencepiece_model_file = 'c4_demo/sentencepiece.model'
"""

failures = []


def check(cond, msg):
  if not cond:
    failures.append(msg)
    print('FAIL', msg)


def run(cmd):
  p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                     text=True, check=False)
  if p.returncode != 0:
    print('FAIL:', ' '.join(cmd), '\n', p.stdout)
    sys.exit(1)
  return p.stdout


def make_t5xx_checkpoint(t5xx, work):
  data = os.path.join(work, 'data')
  model_dir = os.path.join(work, 'model')
  run([t5xx, 'build_corpus', f'--data_dir={data}', '--max_documents=300',
       '--vocab_size=400'])
  gin = os.path.join(work, 'run.gin')
  with open(gin, 'w') as f:
    f.write(RUN_GIN.format(steps=STEPS, **NETWORK, **ADAFACTOR))
  if os.path.exists(model_dir):
    subprocess.run(['rm', '-rf', model_dir], check=True)
  run([t5xx, 'train', f'--gin_file={gin}', f'--data_dir={data}',
       f"--gin.MODEL_DIR='{model_dir}'"])
  return model_dir, os.path.join(model_dir, f'checkpoint_{STEPS}')


# --- The independent reader: msgpack + zarr-python. ---------------------------
def _ext_hook(code, data):
  """flax.serialization's ndarray extension (1) and numpy scalar (3)."""
  if code in (1, 3):
    shape, dtype, buf = msgpack.unpackb(data, raw=False)
    return np.frombuffer(buf, dtype=np.dtype(dtype)).reshape(shape)
  return msgpack.ExtType(code, data)


def read_independently(ckpt_dir):
  """{'target/a/b': array} of every array in the checkpoint."""
  with open(os.path.join(ckpt_dir, 'checkpoint'), 'rb') as f:
    index = msgpack.unpackb(f.read(), ext_hook=_ext_hook, raw=False,
                            strict_map_key=False)
  check(index.get('version') == 3, f'index version {index.get("version")}')
  out = {}

  def walk(node, path):
    if isinstance(node, dict) and node.get('driver') == 'zarr':
      rel = node['kvstore']['path']
      check(not os.path.isabs(rel), f'{path}: spec path {rel} is absolute')
      arr = zarr.open(os.path.join(ckpt_dir, rel), mode='r')[...]
      check(list(arr.shape) == list(node['metadata']['shape']),
            f'{path}: spec shape {node["metadata"]["shape"]} vs zarr {arr.shape}')
      out['/'.join(path)] = np.asarray(arr)
    elif isinstance(node, dict):
      for k, v in node.items():
        walk(v, path + [k])
    else:
      out['/'.join(path)] = np.asarray(node)

  walk(index['optimizer'], [])
  return out


def flat(tree):
  return {'/'.join(k): np.asarray(v) for k, v in traverse_util.flatten_dict(
      flax.core.unfreeze(tree)).items()}


def compare(name, got, want):
  """Same keys; per key the same shape, dtype and values (bitwise)."""
  check(sorted(got) == sorted(want),
        f'{name}: keys differ: only in t5x {sorted(set(got) - set(want))}, '
        f'only in zarr/msgpack {sorted(set(want) - set(got))}')
  n = 0
  for k in sorted(set(got) & set(want)):
    g, w = np.asarray(got[k]), want[k]
    if g.shape != w.shape or g.dtype != w.dtype:
      check(False, f'{name}: {k}: {g.dtype}{list(g.shape)} vs {w.dtype}{list(w.shape)}')
    elif not np.array_equal(g, w):
      check(False, f'{name}: {k}: values differ (max |diff| '
            f'{np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)))})')
    else:
      n += 1
  print(f'{name}: {n} of {len(want)} arrays identical')


def main():
  if len(sys.argv) != 3:
    sys.exit(__doc__)
  t5xx, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
  os.makedirs(work, exist_ok=True)
  print(f't5x checkout: {os.environ.get("T5X_DIR")}; jax {jax.__version__}, '
        f'flax {flax.__version__}')
  model_dir, ckpt_dir = make_t5xx_checkpoint(t5xx, work)
  want = read_independently(ckpt_dir)
  check(int(want.get('state/step', -1)) == STEPS, f'state/step {want.get("state/step")}')
  check(any(k.endswith('/v_row') and want[k].size > 1 for k in want),
        'no factored Adafactor slot in the checkpoint')

  # t5x's reader without a train state.
  compare('load_t5x_checkpoint', flat(checkpoints.load_t5x_checkpoint(ckpt_dir)), want)

  # t5x's Checkpointer into a train state of the same model and optimizer.
  vocab = seqio.PassThroughVocabulary(size=NETWORK['vocab_size'], eos_id=1)
  optimizer_def = adafactor.Adafactor(
      logical_factor_rules=adafactor.standard_logical_factor_rules(), **ADAFACTOR)
  model = models.EncoderDecoderModel(
      module=network.Transformer(config=network.T5Config(**NETWORK)),
      input_vocabulary=vocab, output_vocabulary=vocab,
      optimizer_def=optimizer_def, z_loss=1e-4)
  shapes = {'encoder_input_tokens': (2, 8), 'decoder_input_tokens': (2, 4),
            'decoder_target_tokens': (2, 4)}
  variables = model.get_initial_variables(
      jax.random.PRNGKey(1), input_shapes=shapes,
      input_types={k: jnp.int32 for k in shapes})
  state = train_state_lib.FlaxOptimTrainState.create(optimizer_def, variables)
  checkpointer = checkpoints.Checkpointer(
      train_state=state, partitioner=partitioning.PjitPartitioner(num_partitions=1),
      checkpoints_dir=model_dir)
  check(checkpointer.latest_step() == STEPS, f'latest_step {checkpointer.latest_step()}')
  restored = checkpointer.restore(path=ckpt_dir)
  check(int(restored.step) == STEPS, f'restored step {restored.step}')
  compare('Checkpointer.restore', flat(restored.state_dict()), want)

  batch = {
      'encoder_input_tokens': jnp.array([[5, 12, 7, 33, 2, 9, 1, 0], [8, 3, 21, 1, 0, 0, 0, 0]]),
      'decoder_input_tokens': jnp.array([[0, 4, 17, 25], [0, 11, 6, 1]]),
      'decoder_target_tokens': jnp.array([[4, 17, 25, 1], [11, 6, 1, 0]]),
      'decoder_loss_weights': jnp.array([[1, 1, 1, 1], [1, 1, 1, 0]]),
  }
  loss, _ = model.loss_fn(restored.params, batch, None)
  fresh_loss, _ = model.loss_fn(state.params, batch, None)
  print(f't5x loss with the restored parameters: {float(loss)} '
        f'(freshly initialised: {float(fresh_loss)})')
  check(np.isfinite(float(loss)) and float(loss) != float(fresh_loss),
        f'loss with restored parameters {float(loss)}')

  with open(os.path.join(work, 'result.json'), 'w') as f:
    json.dump({'arrays': len(want), 'failures': failures}, f, indent=1)
  if failures:
    print(f'{len(failures)} failures')
    sys.exit(1)
  print('OK: t5x read every array of the t5xx checkpoint exactly')


if __name__ == '__main__':
  main()
