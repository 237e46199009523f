#!/usr/bin/env python3
"""Makes tests/testdata/t5x_checkpoint/: a checkpoint written by t5x itself.

t5x's own code (imported from a checkout, never copied here) builds a tiny
T5.1.1 encoder-decoder (t5x/examples/t5/network.py Transformer inside
t5x.models.EncoderDecoderModel), trains it for two steps with t5x's Adafactor
(t5x/adafactor.py) in a t5x.train_state.FlaxOptimTrainState, and saves the
train state with t5x's legacy checkpointer (t5x.checkpoints.Checkpointer.save
with a t5x.partitioning.PjitPartitioner(num_partitions=1) on one CPU device):
the msgpack `checkpoint` index plus one TensorStore zarr directory per
partitioned array. It then reads the checkpoint back with t5x's own reader
(t5x.checkpoints.load_t5x_checkpoint), checks that it holds exactly the
train state, and writes expected.json with the model config, one fixed batch,
the loss t5x's EncoderDecoderModel.loss_fn computes for that batch from the
checkpoint's parameters, and per-array sums of every saved array.

The C++ test tests/interop/t5x_checkpoint_test.cc restores the checkpoint
into t5xx's model and Adafactor and compares. It never runs this script.

Model (the config of tests/testdata/parity/encoder_decoder.json): T5Config
vocab 40, emb_dim 16, 2 heads x head_dim 8, 2 encoder + 2 decoder layers,
mlp_dim 32, mlp_activations ('gelu', 'linear'), dropout 0, float32,
logits_via_embedding False. Params: model.get_initial_variables(PRNGKey(0)).

Optimizer: adafactor.Adafactor as t5x's examples/t5/t5_1_1/base.gin sets it
(decay_rate 0.8, step_offset 0, logical_factor_rules =
standard_logical_factor_rules(), every other argument at its default) except
min_dim_size_to_factor = 16 instead of 128: at 128 no array of a model this
small is factored, and the checkpoint would hold no v_row/v_col slots.
Training: two steps of t5x's train step (jax.value_and_grad of
model.loss_fn, then train_state.apply_gradient with learning rate 0.01, the
value of t5x's default rsqrt schedule for the first 10k steps) on two fixed
random batches, so state.step is 2 and the slots are nonzero.

Loss: EncoderDecoderModel(z_loss=1e-4, label_smoothing=0,
loss_normalizing_factor=None).loss_fn(params, batch, dropout_rng=None), i.e.
losses.compute_weighted_cross_entropy summed over the batch (not
normalised); `loss_per_token` = loss / sum(decoder_loss_weights).

How to run (what produced the committed files):

  * t5x checkout: github.com/google-research/t5x at commit
      cc342d419ec3e3e9c4bf1df33c82330cafdc1e16
    unpacked at $T5X_DIR (default /work/t5x-ref), e.g.
      git archive HEAD -- . ':(exclude)t5x/testdata' | tar -x -C $T5X_DIR
    t5x/__init__.py is bypassed (tests/interop/t5x_import.py); `airio`
    (not on PyPI, used only by t5x/utils.py's dataset helpers) is stubbed;
    jax.experimental.pjit.PartitionSpec is re-exported for jestimator 0.3.3.
  * Python 3.11.7 venv with exactly tests/interop/requirements.txt (pip
    --no-deps; the main ones: jax 0.4.31, jaxlib 0.4.31, flax 0.8.5, numpy
    1.26.4, tensorstore 0.1.65, orbax-checkpoint 0.6.4, tensorflow-cpu
    2.17.1, seqio 0.0.19, clu 0.0.12, optax 0.2.3, jestimator 0.3.3,
    gin-config 0.5.0), which is what scripts/setup_t5x_interop.sh installs:
      python3 -m venv /work/t5x-venv
      /work/t5x-venv/bin/pip install --no-deps -r tests/interop/requirements.txt
  * Command, from the repository root:
      T5X_DIR=/work/t5x-ref /work/t5x-venv/bin/python \\
          tests/interop/make_t5x_checkpoint.py --out tests/testdata/t5x_checkpoint

Re-running gives the same arrays and numbers (the zarr chunks are gzip
streams, which may differ in header bytes only if the zlib build differs)
on a machine like the one that made them. On another CPU the float32
results can differ by a few ulp, because XLA generates its CPU code for the
host CPU. On a 2-core AVX-512 Xeon (2026-12-04), 137 of the 261 arrays
differed, and the loss was 33.903114 instead of 33.903111. Core count and
XLA_FLAGS such as --xla_cpu_multi_thread_eigen=false made no difference.
That machine reproduced its own output byte for byte.
tests/interop/make_t5x_orbax_checkpoint.py imports build_model,
make_partitioner, train_state, INPUT_SHAPES and INPUT_TYPES from here.
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t5x_import  # pylint: disable=g-import-not-at-top

T5X_DIR = os.environ.get('T5X_DIR', '/work/t5x-ref')

_m = t5x_import.import_t5x(T5X_DIR, (
    'adafactor', 'checkpoints', 'losses', 'models', 'partitioning',
    'train_state', 'examples.t5.network'))
adafactor = _m['adafactor']
checkpoints = _m['checkpoints']
models = _m['models']
partitioning = _m['partitioning']
train_state_lib = _m['train_state']
network = _m['examples.t5.network']

import flax  # pylint: disable=g-import-not-at-top
from flax import traverse_util  # pylint: disable=g-import-not-at-top
import jax  # pylint: disable=g-import-not-at-top
import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
import seqio  # pylint: disable=g-import-not-at-top

CONFIG = dict(
    vocab_size=40, emb_dim=16, num_heads=2, num_encoder_layers=2,
    num_decoder_layers=2, head_dim=8, mlp_dim=32,
    mlp_activations=('gelu', 'linear'), dropout_rate=0.0,
    logits_via_embedding=False, dtype='float32')
ADAFACTOR = dict(decay_rate=0.8, step_offset=0, min_dim_size_to_factor=16)
Z_LOSS = 1e-4
LEARNING_RATE = 0.01
TRAIN_STEPS = 2
ENC_LEN, DEC_LEN = 7, 5


def pad_row(seq, length):
  assert len(seq) <= length
  return np.array(list(seq) + [0] * (length - len(seq)), np.int32)


def encdec_batch(rows):
  """seqio EncDecFeatureConverter output (unpacked) for (inputs, targets)."""
  enc = np.stack([pad_row(i, ENC_LEN) for i, _ in rows])
  tgt = np.stack([pad_row(t, DEC_LEN) for _, t in rows])
  # seqio.utils.make_autoregressive_inputs: shift right, BOS 0.
  dec_in = np.concatenate([np.zeros_like(tgt[:, :1]), tgt[:, :-1]], axis=1)
  return {
      'encoder_input_tokens': enc,
      'decoder_input_tokens': dec_in,
      'decoder_target_tokens': tgt,
      'decoder_loss_weights': (tgt > 0).astype(np.int32),
  }


def random_rows(rng, n):
  """n (inputs, targets) pairs of ids in [2, vocab) ending in EOS 1."""
  rows = []
  for _ in range(n):
    li = int(rng.integers(2, ENC_LEN + 1))
    lt = int(rng.integers(2, DEC_LEN + 1))
    rows.append((list(rng.integers(2, CONFIG['vocab_size'], li - 1)) + [1],
                 list(rng.integers(2, CONFIG['vocab_size'], lt - 1)) + [1]))
  return rows


# The batch whose loss the C++ test checks: one full row, one padded row.
EVAL_ROWS = [([5, 12, 7, 33, 2, 9, 1], [4, 17, 25, 3, 1]),
             ([8, 3, 21, 1], [11, 6, 1])]


def flat(tree):
  """{'a/b/c': array} of a nested dict (flax state dict)."""
  return {'/'.join(k): v for k, v in traverse_util.flatten_dict(
      flax.core.unfreeze(tree), sep=None).items()}


def build_model():
  """The t5x EncoderDecoderModel (tiny T5.1.1, t5x Adafactor) of this data."""
  vocab = seqio.PassThroughVocabulary(size=CONFIG['vocab_size'], eos_id=1)
  module = network.Transformer(config=network.T5Config(**CONFIG))
  optimizer_def = adafactor.Adafactor(
      logical_factor_rules=adafactor.standard_logical_factor_rules(),
      **ADAFACTOR)
  return models.EncoderDecoderModel(
      module=module, input_vocabulary=vocab, output_vocabulary=vocab,
      optimizer_def=optimizer_def, z_loss=Z_LOSS, label_smoothing=0.0,
      loss_normalizing_factor=None)


# Input shapes and types model.get_initial_variables is called with.
INPUT_SHAPES = {'encoder_input_tokens': (2, ENC_LEN),
                'decoder_input_tokens': (2, DEC_LEN),
                'decoder_target_tokens': (2, DEC_LEN)}
INPUT_TYPES = {k: jnp.int32 for k in INPUT_SHAPES}


def make_partitioner():
  """The partitioner the checkpoint is saved with (one CPU device)."""
  return partitioning.PjitPartitioner(num_partitions=1)


def train_state(model):
  """(train state after TRAIN_STEPS steps, the training losses)."""
  variables = model.get_initial_variables(
      jax.random.PRNGKey(0), input_shapes=INPUT_SHAPES,
      input_types=INPUT_TYPES)
  state = train_state_lib.FlaxOptimTrainState.create(
      model.optimizer_def, variables)

  rng = np.random.default_rng(0)
  train_losses = []
  for _ in range(TRAIN_STEPS):
    batch = {k: jnp.asarray(v) for k, v in encdec_batch(random_rows(rng, 4)).items()}
    (loss, _), grads = jax.value_and_grad(model.loss_fn, has_aux=True)(
        state.params, batch, None)
    state = state.apply_gradient(grads, learning_rate=LEARNING_RATE)
    train_losses.append(float(loss))
  assert int(state.step) == TRAIN_STEPS
  return state, train_losses


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument('--out', required=True)
  args = ap.parse_args()

  model = build_model()
  state, train_losses = train_state(model)

  ckpt_root = os.path.abspath(args.out)
  ckpt_dir = os.path.join(ckpt_root, f'checkpoint_{TRAIN_STEPS}')
  if os.path.exists(ckpt_dir):
    shutil.rmtree(ckpt_dir)
  partitioner = make_partitioner()
  checkpointer = checkpoints.Checkpointer(
      train_state=state, partitioner=partitioner, checkpoints_dir=ckpt_root)
  checkpointer.save(state)

  # Read back with t5x's reader: exactly the train state.
  restored = checkpoints.load_t5x_checkpoint(ckpt_dir)
  saved = flat(state.state_dict())
  read = flat(restored)
  assert sorted(saved) == sorted(read), (sorted(saved), sorted(read))
  for k, v in saved.items():
    np.testing.assert_array_equal(np.asarray(v), np.asarray(read[k]), err_msg=k)

  # The loss of the fixed batch from the parameters read back.
  batch = encdec_batch(EVAL_ROWS)
  params = flax.core.freeze(restored['target'])
  loss, metrics = model.loss_fn(params, {k: jnp.asarray(v) for k, v in batch.items()}, None)
  weight_sum = float(batch['decoder_loss_weights'].sum())

  arrays = {}
  for k in sorted(read):
    a = np.asarray(read[k])
    arrays[k] = {'shape': list(a.shape), 'dtype': str(a.dtype),
                 'sum': float(a.astype(np.float64).sum()),
                 'sum_abs': float(np.abs(a.astype(np.float64)).sum())}

  expected = {
      'about': ('Written by tests/interop/make_t5x_checkpoint.py with t5x '
                f'{t5x_import.T5X_COMMIT} (see its docstring). Loss is '
                't5x EncoderDecoderModel.loss_fn of `batch` with the '
                'parameters of checkpoint_%d.' % TRAIN_STEPS),
      't5x_commit': t5x_import.T5X_COMMIT,
      'checkpoint': f'checkpoint_{TRAIN_STEPS}',
      'step': TRAIN_STEPS,
      'config': {k: (list(v) if isinstance(v, tuple) else v) for k, v in CONFIG.items()},
      'adafactor': dict(ADAFACTOR, logical_factor_rules='standard_logical_factor_rules()',
                        learning_rate=LEARNING_RATE),
      'z_loss': Z_LOSS, 'label_smoothing': 0.0, 'loss_normalizing_factor': None,
      'batch': {k: {'shape': list(v.shape), 'data': v.reshape(-1).tolist()}
                for k, v in batch.items()},
      'loss': float(loss),
      'loss_per_token': float(loss) / weight_sum,
      'weight_sum': weight_sum,
      'z_loss_value': float(metrics['z_loss'].compute()) if 'z_loss' in metrics else None,
      'train_losses': train_losses,
      'arrays': arrays,
  }
  with open(os.path.join(ckpt_root, 'expected.json'), 'w') as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write('\n')
  print('wrote', ckpt_dir, 'loss', float(loss), 'per token', float(loss) / weight_sum)


if __name__ == '__main__':
  main()
