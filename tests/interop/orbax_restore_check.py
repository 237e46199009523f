#!/usr/bin/env python3
"""Checks an Orbax t5x checkpoint against a legacy t5x checkpoint, with t5x.

Usage (T5X_DIR: a t5x checkout, see t5x_import.py; the venv of
tests/interop/requirements.txt):

  T5X_DIR=... python tests/interop/orbax_restore_check.py \\
      --orbax_checkpoint DIR/checkpoint_N --reference_checkpoint DIR2/checkpoint_M \\
      [--json_out F]

Restores the Orbax checkpoint (OCDBT + zarr, as t5x's train writes with
use_orbax=True) with t5x's own Orbax restore, reads the reference, a t5x
LEGACY checkpoint (msgpack `checkpoint` + zarr), with
t5x.checkpoints.load_t5x_checkpoint, and requires the same set of arrays,
the same shapes and dtypes, every array equal bit for bit, the same
state.step, and that each checkpoint_<N> directory's N is its state.step (t5x
names step directories so). Prints one line per mismatch and a summary line
"N arrays equal"; exits 1 on any mismatch, 0 otherwise (2 on a usage error).

How the Orbax checkpoint is restored, and why. t5x restores with
utils.create_orbax_checkpoint_manager + utils.restore, i.e.
checkpoints.OrbaxCheckpointManagerInterface.restore(path=...), which needs a
TrainState and a partitioner for three things only: the tree to restore
(train_state.state_dict(), intersected with the checkpoint's own structure),
the mesh axes of each array (partitioner.get_mesh_axes(train_state)), and
train_state.restore_state(state_dict) to wrap the result. Building a real
TrainState would need the model, which this checker must not need (it also
checks checkpoints written by t5xx). So it runs that same t5x code with
stand-ins derived from the checkpoint itself:
  * the "train state" is the checkpoint's structure as read from
    state/_METADATA by orbax's PyTreeCheckpointHandler._get_internal_metadata
    (the very call t5x makes in _construct_orbax_restoration_transforms);
    its restore_state returns the restored state dict unchanged;
  * the partitioner is t5x's PjitPartitioner(num_partitions=1) whose
    get_mesh_axes gives PartitionSpec() (replicated) for every array, so
    t5x asks orbax for jax.Arrays (ArrayRestoreArgs), as train does, on
    the one-device mesh;
  * restore dtype None (RestoreCheckpointConfig.dtype=None): arrays come
    back in the dtype they were saved in, so dtypes can be compared.
Everything else (legacy-format detection, restore args, the
legacy_transform_fn path, orbax CheckpointManager with
PyTreeCheckpointHandler(use_ocdbt=True)) is t5x's and orbax's own code. One
fix is applied: t5x_import.fix_orbax_restore_param_paths (t5x cc342d4's
get_restore_parameters no longer sets ParamInfo.path, which
orbax-checkpoint 0.6.4 requires; without it every restore fails with
"Must construct serialization path."). Orbax's plain PyTreeCheckpointer
restore without a target would also work but is not the code path t5x
takes.

Keys: both checkpoints are read as nested dicts and flattened to key tuples,
shown '/'-joined ('target/encoder/layers_0/attention/query/kernel'), so t5x's
'/'-joined and Orbax's '.'-joined parameter names compare equal.
"""

import argparse
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t5x_import  # pylint: disable=g-import-not-at-top


def _step_of_dir(path):
  m = re.fullmatch(r'checkpoint_(\d+)', os.path.basename(os.path.normpath(path)))
  return int(m.group(1)) if m else None


def _flat(tree, traverse_util):
  out = {}
  for k, v in traverse_util.flatten_dict(dict(tree), sep=None).items():
    out['/'.join(k)] = np.asarray(v)
  return out


def restore_orbax(ckpt_dir, m):
  """{key: np.ndarray} of an Orbax checkpoint, through t5x's Orbax restore."""
  checkpoints, partitioning, utils = m['checkpoints'], m['partitioning'], m['utils']
  import orbax.checkpoint as ocp  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top
  from etils import epath  # pylint: disable=g-import-not-at-top
  from flax import traverse_util  # pylint: disable=g-import-not-at-top

  structure, _ = ocp.PyTreeCheckpointHandler(use_ocdbt=True)._get_internal_metadata(  # pylint: disable=protected-access
      epath.Path(ckpt_dir) / 'state')

  class StructureState:
    """Stand-in TrainState: the checkpoint's own structure."""

    def __init__(self, tree):
      self._tree = tree

    def state_dict(self):
      return self._tree

    def restore_state(self, state_dict):
      return state_dict

  class ReplicatedPartitioner(partitioning.PjitPartitioner):
    """t5x's PjitPartitioner, every array replicated (PartitionSpec())."""

    def get_mesh_axes(self, train_state):
      return StructureState(jax.tree.map(
          lambda _: partitioning.PartitionSpec(), train_state.state_dict()))

  model_dir = os.path.dirname(os.path.abspath(ckpt_dir))
  restore_cfg = utils.RestoreCheckpointConfig(
      path=ckpt_dir, mode='specific', dtype=None)
  manager = utils.create_orbax_checkpoint_manager(
      restore_cfg=restore_cfg, train_state=StructureState(structure),
      partitioner=ReplicatedPartitioner(num_partitions=1), model_dir=model_dir)
  assert isinstance(manager, checkpoints.OrbaxCheckpointManagerInterface)
  state_dict = utils.restore(manager, [ckpt_dir], restore_cfg)
  manager.close()
  return _flat(state_dict, traverse_util)


def compare(orbax, reference):
  """(number of equal arrays, mismatch lines)."""
  bad = []
  for k in sorted(set(orbax) - set(reference)):
    bad.append(f'{k}: only in the Orbax checkpoint')
  for k in sorted(set(reference) - set(orbax)):
    bad.append(f'{k}: only in the reference checkpoint')
  equal = 0
  for k in sorted(set(orbax) & set(reference)):
    a, b = orbax[k], reference[k]
    if a.shape != b.shape:
      bad.append(f'{k}: shape {list(a.shape)} vs reference {list(b.shape)}')
    elif a.dtype != b.dtype:
      bad.append(f'{k}: dtype {a.dtype} vs reference {b.dtype}')
    elif a.tobytes() != b.tobytes():
      bytes_a = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
      bytes_b = np.ascontiguousarray(b).reshape(-1).view(np.uint8)
      n = int((bytes_a != bytes_b).reshape(a.size, -1).any(axis=1).sum())
      d = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
      bad.append(f'{k}: {n} of {a.size} values differ (max abs diff {d:.6g})')
    else:
      equal += 1
  return equal, bad


def main():
  ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  ap.add_argument('--orbax_checkpoint', required=True, help='DIR/checkpoint_N (Orbax)')
  ap.add_argument('--reference_checkpoint', required=True, help='DIR/checkpoint_M (legacy t5x)')
  ap.add_argument('--json_out', help='write the result as JSON here')
  args = ap.parse_args()

  orbax_dir = os.path.abspath(args.orbax_checkpoint)
  ref_dir = os.path.abspath(args.reference_checkpoint)
  if not os.path.isfile(os.path.join(orbax_dir, 'state', 'manifest.ocdbt')):
    print(f'error: {orbax_dir} is no Orbax OCDBT checkpoint (no state/manifest.ocdbt)')
    return 2
  if os.path.exists(os.path.join(orbax_dir, 'checkpoint')):
    print(f'error: {orbax_dir} holds a legacy msgpack `checkpoint` file; t5x '
          'would restore it as a legacy checkpoint')
    return 2
  if not os.path.isfile(os.path.join(ref_dir, 'checkpoint')):
    print(f'error: {ref_dir} is no legacy t5x checkpoint (no `checkpoint` file)')
    return 2

  m = t5x_import.import_t5x(None, (
      'checkpoint_utils', 'checkpoints', 'partitioning', 'utils'))
  t5x_import.fix_orbax_restore_param_paths(m['checkpoint_utils'])
  from flax import traverse_util  # pylint: disable=g-import-not-at-top

  orbax = restore_orbax(orbax_dir, m)
  reference = _flat(m['checkpoints'].load_t5x_checkpoint(ref_dir), traverse_util)

  equal, bad = compare(orbax, reference)
  steps = {}
  for name, arrays, d in (('Orbax', orbax, orbax_dir), ('reference', reference, ref_dir)):
    step = arrays.get('state/step')
    steps[name] = None if step is None or step.size != 1 else int(step)
    if steps[name] is None:
      bad.append(f'state/step: missing or not a scalar in the {name} checkpoint')
    elif _step_of_dir(d) is not None and _step_of_dir(d) != steps[name]:
      bad.append(f'state/step: {name} checkpoint dir {os.path.basename(d)} '
                 f'but state.step is {steps[name]}')
  if steps['Orbax'] != steps['reference'] and None not in steps.values():
    bad.append(f"state/step: {steps['Orbax']} vs reference {steps['reference']}")

  for line in bad:
    print('MISMATCH ' + line)
  print(f"step {steps['Orbax']} (reference {steps['reference']})")
  summary = f'{equal} arrays equal'
  if bad:
    summary += f', {len(bad)} mismatches (of {len(set(orbax) | set(reference))} arrays)'
  print(summary)
  if args.json_out:
    with open(args.json_out, 'w') as f:
      json.dump({
          'orbax_checkpoint': orbax_dir, 'reference_checkpoint': ref_dir,
          'ok': not bad, 'arrays_equal': equal, 'mismatches': bad,
          'step': steps['Orbax'], 'reference_step': steps['reference'],
          'arrays': {k: {'shape': list(v.shape), 'dtype': str(v.dtype)}
                     for k, v in sorted(orbax.items())},
      }, f, indent=1, sort_keys=True)
      f.write('\n')
  return 1 if bad else 0


if __name__ == '__main__':
  sys.exit(main())
