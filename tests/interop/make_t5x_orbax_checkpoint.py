#!/usr/bin/env python3
"""Makes tests/testdata/t5x_orbax_checkpoint/: an Orbax checkpoint t5x wrote.

The train state is the one in tests/testdata/t5x_checkpoint/checkpoint_2
(tiny T5.1.1 after two t5x Adafactor steps, written by t5x's legacy
Checkpointer; see make_t5x_checkpoint.py, whose model, partitioner and input
shapes this script imports). It is saved the way t5x's `train` saves with
`use_orbax=True` (the default in t5x/train.py): t5x's own code, driven as
train.py drives it, with no dataset iterator:

  1. partitioner = PjitPartitioner(num_partitions=1) (one CPU device) and
     train_state_initializer = utils.TrainStateInitializer(
         optimizer_def=model.optimizer_def,
         init_fn=model.get_initial_variables, input_shapes, input_types,
         partitioner)                                  (train.py)
  2. train_state, checkpoint_manager = utils.create_checkpoint_manager_and_
     restore(train_state_initializer, partitioner, restore_cfg, <legacy
     checkpoint_2>, init_rng, save_checkpoint_cfg=save_cfg, model_dir=<out>,
     ds_iter=None, use_orbax=True)                      (train.py)
     with restore_cfg = RestoreCheckpointConfig(path=<legacy checkpoint_2>,
     mode='specific', dtype='float32') and save_cfg = SaveCheckpointConfig(
     period=2, dtype='float32', keep=None, save_dataset=False) (the values of
     t5x/configs/runs/finetune.gin but the period). This builds a
     checkpoints.OrbaxCheckpointManagerInterface over the abstract train
     state (global_train_state_shape) and restores: its restore() sees a
     legacy T5X checkpoint (a msgpack `checkpoint` file) and hands it to the
     legacy Checkpointer, so train_state is exactly the committed legacy
     state, on the partitioner's mesh, step 2. This is what t5x train does
     when fine-tuning from a legacy checkpoint with use_orbax=True.
  3. checkpoint_manager.save(train_state, save_cfg.state_transformation_fns),
     wait_until_finished(), close()  (train.py's "save before the training
     loop"): orbax.checkpoint.CheckpointManager with item 'state' =
     PyTreeCheckpointHandler(use_ocdbt=True) (OCDBT + zarr v2) and item
     'dataset' (nothing written: no iterator).

Why restore from the legacy checkpoint instead of re-training: on the
machine this was made on (Xeon with AVX-512), make_t5x_checkpoint.py's two
training steps give float32 results a few ulp away from the committed
legacy checkpoint (XLA's CPU code is generated for the host CPU), so a
re-trained state would not equal the committed one bit for bit. Restoring
makes the Orbax checkpoint hold the committed state on any machine, so
tests/testdata/t5x_checkpoint/expected.json applies to it unchanged.
`--train_state retrain` instead re-trains with make_t5x_checkpoint.py's
train_state() and reports whether the result equals the legacy checkpoint.

Checks (the script fails if one does not hold):
  * t5x's Orbax restore (a fresh OrbaxCheckpointManagerInterface over the
    abstract train state, utils.restore as train.py calls it; it takes the
    Orbax path because checkpoint_2 has no msgpack `checkpoint` file) gives
    back every array of the saved train state bit for bit, and state.step 2;
  * every array of the Orbax checkpoint equals the legacy checkpoint's
    (t5x.checkpoints.load_t5x_checkpoint) bit for bit: same keys, shapes,
    dtypes, bytes.

How to run (what produced the committed files): the t5x checkout and venv of
make_t5x_checkpoint.py's docstring (t5x cc342d419ec3e3e9c4bf1df33c82330cafdc1e16,
exactly tests/interop/requirements.txt: jax/jaxlib 0.4.31, flax 0.8.5,
orbax-checkpoint 0.6.4, tensorstore 0.1.65, ...), then from the repository
root:

  T5X_DIR=/work/t5x-full ~/.cache/t5xx/t5x-venv/bin/python \\
      tests/interop/make_t5x_orbax_checkpoint.py \\
      --legacy tests/testdata/t5x_checkpoint/checkpoint_2 \\
      --out tests/testdata/t5x_orbax_checkpoint

Re-running gives the same arrays but NOT the same bytes: Orbax/TensorStore
write timestamps (_CHECKPOINT_METADATA, the OCDBT manifests' commit_time), a
random OCDBT database uuid and random data-file names (d/<32 hex>). See
tests/testdata/t5x_orbax_checkpoint/README.md.
"""

import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_t5x_checkpoint as mk  # pylint: disable=g-import-not-at-top
import orbax_restore_check  # pylint: disable=g-import-not-at-top
import t5x_import  # pylint: disable=g-import-not-at-top

_m = t5x_import.import_t5x(mk.T5X_DIR, ('checkpoint_utils', 'checkpoints', 'utils'))
checkpoints = _m['checkpoints']
utils = _m['utils']
# t5x cc342d4's Orbax restore fails with orbax-checkpoint 0.6.4 without this
# (see its docstring); saving does not need it.
t5x_import.fix_orbax_restore_param_paths(_m['checkpoint_utils'])

import jax  # pylint: disable=g-import-not-at-top


def flat_numpy(tree):
  """{'a/b/c': np.ndarray} of a nested state dict."""
  return {k: np.asarray(v) for k, v in mk.flat(tree).items()}


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument('--legacy', default='tests/testdata/t5x_checkpoint/checkpoint_2',
                  help='the legacy t5x checkpoint_2 to restore the state from')
  ap.add_argument('--out', required=True, help='model dir to write checkpoint_2 into')
  ap.add_argument('--train_state', choices=('legacy', 'retrain'), default='legacy')
  args = ap.parse_args()

  legacy_dir = os.path.abspath(args.legacy)
  out_root = os.path.abspath(args.out)
  ckpt_dir = os.path.join(out_root, f'checkpoint_{mk.TRAIN_STEPS}')
  os.makedirs(out_root, exist_ok=True)
  if os.path.exists(ckpt_dir):
    shutil.rmtree(ckpt_dir)

  model = mk.build_model()
  partitioner = mk.make_partitioner()
  initializer = utils.TrainStateInitializer(
      optimizer_def=model.optimizer_def, init_fn=model.get_initial_variables,
      input_shapes=mk.INPUT_SHAPES, input_types=mk.INPUT_TYPES,
      partitioner=partitioner)
  save_cfg = utils.SaveCheckpointConfig(
      period=mk.TRAIN_STEPS, dtype='float32', keep=None, save_dataset=False)
  restore_cfg = utils.RestoreCheckpointConfig(
      path=legacy_dir, mode='specific', dtype='float32')

  if args.train_state == 'legacy':
    state, manager = utils.create_checkpoint_manager_and_restore(
        initializer, partitioner, restore_cfg, legacy_dir,
        jax.random.PRNGKey(0), save_checkpoint_cfg=save_cfg,
        model_dir=out_root, ds_iter=None, use_orbax=True)
  else:
    _, manager = utils.create_checkpoint_manager_and_restore(
        initializer, partitioner, None, None, jax.random.PRNGKey(0),
        save_checkpoint_cfg=save_cfg, model_dir=out_root, ds_iter=None,
        use_orbax=True)
    state, _ = mk.train_state(model)
    # On the partitioner's mesh, as t5x's Trainer holds it.
    state = partitioner.partition(
        lambda s: s, in_axis_resources=None,
        out_axis_resources=initializer.train_state_axes)(state)
  assert isinstance(manager, checkpoints.OrbaxCheckpointManagerInterface)
  assert int(state.step) == mk.TRAIN_STEPS, state.step

  manager.save(state, save_cfg.state_transformation_fns)
  manager.wait_until_finished()
  manager.close()
  assert os.path.isfile(os.path.join(ckpt_dir, 'state', 'manifest.ocdbt'))
  assert not os.path.exists(os.path.join(ckpt_dir, 'checkpoint'))

  # Read back with t5x's Orbax restore, as train.py would on resuming.
  read_cfg = utils.RestoreCheckpointConfig(path=ckpt_dir, mode='specific')
  reader = utils.create_orbax_checkpoint_manager(
      restore_cfg=read_cfg, train_state=initializer.global_train_state_shape,
      partitioner=partitioner, model_dir=out_root)
  restored = utils.restore(reader, [ckpt_dir], read_cfg)
  reader.close()
  saved = flat_numpy(state.state_dict())
  _, diffs = orbax_restore_check.compare(flat_numpy(restored.state_dict()), saved)
  assert not diffs, '\n'.join(diffs)
  assert int(restored.step) == mk.TRAIN_STEPS
  print(f'orbax restore == saved train state: {len(saved)} arrays, step '
        f'{int(restored.step)}')

  # Same arrays as the legacy checkpoint, bit for bit.
  legacy = flat_numpy(checkpoints.load_t5x_checkpoint(legacy_dir))
  _, diffs = orbax_restore_check.compare(saved, legacy)
  if args.train_state == 'legacy':
    assert not diffs, '\n'.join(diffs)
    print(f'orbax checkpoint == legacy {legacy_dir}: {len(legacy)} arrays bit '
          'for bit')
  else:
    print(f'retrained state vs legacy {legacy_dir}: {len(diffs)} of '
          f'{len(legacy)} arrays differ')
    for line in diffs:
      print('  ' + line)

  total = 0
  for root, _, files in sorted(os.walk(ckpt_dir)):
    for f in sorted(files):
      p = os.path.join(root, f)
      total += os.path.getsize(p)
      print(f'{os.path.getsize(p):8d}  {os.path.relpath(p, out_root)}')
  print(f'{total:8d}  total, wrote {ckpt_dir}')


if __name__ == '__main__':
  main()
