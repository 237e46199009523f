#!/usr/bin/env python3
"""Makes tests/testdata/orbax_zarr3/: an Orbax checkpoint in zarr v3.

orbax-checkpoint itself writes checkpoint_3/ with
PyTreeCheckpointHandler(use_ocdbt=True, use_zarr3=True) (Orbax's zarr v3
layout: zarr.json per array, chunk keys c/i/j, every chunk a shard of the
sharding_indexed codec with zstd inner chunks and a CRC-32C index) from a
small train state: a float32 (4, 8) array sharded over a 2x2 mesh of CPU
devices (4 shards), a bfloat16 array, an int32 slot and state.step 3. Then
TensorStore adds, in the same OCDBT database, an array whose shards hold
several inner chunks, one of them never written (read as fill_value):
target.inner, float32 (6, 4), shards (6, 4), inner chunks (2, 2), fill 0.

expected.json: every array as {dtype, shape, values (flat, C order)} and
the step, as numpy holds them before saving.

How it was made (the committed files), with /work/golden-venv (jax 0.4.30,
orbax-checkpoint 0.6.4, tensorstore 0.1.65, Python 3.11):
    /work/golden-venv/bin/python tests/checkpoints/make_orbax_zarr3_testdata.py \\
        tests/testdata/orbax_zarr3
Timestamps, uuids and data file names differ between runs; arrays do not.
"""
import json
import os
import shutil
import sys

os.environ.setdefault('XLA_FLAGS', '--xla_force_host_platform_device_count=4')
import jax  # pylint: disable=g-import-not-at-top
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
import tensorstore as ts
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def main():
  out = os.path.abspath(sys.argv[1])
  shutil.rmtree(os.path.join(out, 'checkpoint_3'), ignore_errors=True)
  mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ('x', 'y'))
  w = np.arange(32, dtype=np.float32).reshape(4, 8) * 0.5 - 3
  state = {
      'target': {'w': jax.device_put(w, NamedSharding(mesh, P('x', 'y'))),
                 'b': jnp.asarray([1.0, -2.0, 3.140625], dtype=jnp.bfloat16)},
      'state': {'step': np.int32(3),
                'param_states': {'w': {'v': np.asarray([5, -6, 7], dtype=np.int32)}}},
  }
  mgr = ocp.CheckpointManager(
      out, item_handlers={'state': ocp.PyTreeCheckpointHandler(use_ocdbt=True, use_zarr3=True)},
      options=ocp.CheckpointManagerOptions(step_prefix='checkpoint'))
  mgr.save(3, args=ocp.args.Composite(state=ocp.args.PyTreeSave(state)), force=True)
  mgr.wait_until_finished()
  mgr.close()
  inner = np.arange(24, dtype=np.float32).reshape(6, 4) + 100
  arr = ts.open({
      'driver': 'zarr3',
      'kvstore': {'driver': 'ocdbt', 'base': 'file://' + os.path.join(out, 'checkpoint_3/state'),
                  'path': 'target.inner/'},
      'metadata': {'shape': [6, 4], 'data_type': 'float32', 'fill_value': 0,
                   'chunk_grid': {'name': 'regular', 'configuration': {'chunk_shape': [6, 4]}},
                   'codecs': [{'name': 'sharding_indexed', 'configuration': {
                       'chunk_shape': [2, 2],
                       'codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}},
                                  {'name': 'zstd', 'configuration': {'level': 3}}],
                       'index_codecs': [{'name': 'bytes', 'configuration': {'endian': 'little'}},
                                        {'name': 'crc32c'}]}}]},
      'create': True}).result()
  written = inner.copy()
  written[2:4, 2:4] = 0  # this inner chunk is never written
  arr[0:2, :] = inner[0:2, :]
  arr[2:4, 0:2] = inner[2:4, 0:2]
  arr[4:6, :] = inner[4:6, :]
  assert np.array_equal(arr.read().result(), written)
  expected = {'step': 3, 'arrays': {
      'target.w': w, 'target.b': np.asarray([1.0, -2.0, 3.140625], np.float32),
      'state.param_states.w.v': np.asarray([5, -6, 7], np.int32), 'target.inner': written}}
  dtypes = {'target.b': 'bfloat16'}
  with open(os.path.join(out, 'expected.json'), 'w') as f:
    json.dump({'step': 3, 'arrays': {
        k: {'dtype': dtypes.get(k, str(v.dtype)), 'shape': list(v.shape),
            'values': v.ravel().tolist()} for k, v in expected['arrays'].items()}},
              f, indent=1, sort_keys=True)
    f.write('\n')
  # Orbax restores it, the added array aside.
  mgr = ocp.CheckpointManager(
      out, item_handlers={'state': ocp.PyTreeCheckpointHandler(use_ocdbt=True, use_zarr3=True)},
      options=ocp.CheckpointManagerOptions(step_prefix='checkpoint'))
  restored = mgr.restore(3, args=ocp.args.Composite(state=ocp.args.PyTreeRestore()))['state']
  assert np.array_equal(np.asarray(restored['target']['w']), w)
  print('ok')


if __name__ == '__main__':
  main()
