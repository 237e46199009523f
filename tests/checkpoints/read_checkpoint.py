#!/usr/bin/env python3
"""Cross-checks a t5xx checkpoint with the Python zarr/msgpack/numpy stack.

Usage: read_checkpoint.py MODEL_DIR/checkpoint_<step> [FOREIGN_MODEL_DIR]

MODEL_DIR/expected.json (written by write_example_checkpoint) lists every
array with its dtype, shape and the seed of its values. This script decodes
the msgpack index the way flax does (ext type 1/3 = ndarray: msgpack
[shape, dtype name, bytes]), checks the t5x structure and TensorStore specs,
and reads every zarr array with zarr-python (v2 API). If tensorstore is
installed it also opens every array from the spec stored in the index, after
making its relative path absolute the way t5x does on restore.

With FOREIGN_MODEL_DIR it then writes the same arrays the other way round,
as t5x would (TensorStore if installed, else zarr-python), to
FOREIGN_MODEL_DIR/checkpoint_<step> (+ expected.json) for the C++ side to
read back (write_example_checkpoint --verify).

Exit status: 0 ok, 1 mismatch, 77 if zarr/msgpack/numpy are not installed.
"""
import json
import os
import sys

try:
  import msgpack
  import numpy as np
  import zarr
except ImportError as e:  # ctest SKIP_RETURN_CODE
  print(f'SKIP: {e}; pip install "zarr<3" msgpack numpy')
  sys.exit(77)

FAILURES = []


def check(cond, msg):
  if not cond:
    FAILURES.append(msg)
    print('FAIL:', msg)


def ext_hook(code, data):
  if code in (1, 3):
    shape, dtype, buf = msgpack.unpackb(data, raw=False)
    np_dtype = np.uint16 if dtype == 'bfloat16' else np.dtype(dtype)
    arr = np.frombuffer(buf, dtype=np_dtype).reshape(shape)
    return ('ndarray', dtype, arr)
  return msgpack.ExtType(code, data)


def expected_values(entry):
  n = int(np.prod(entry['shape'], dtype=np.int64))
  i = np.arange(n, dtype=np.int64)
  seed = entry['seed']
  dtype = entry['dtype']
  if dtype == 'float32':
    v = (seed + 0.25 * (i % 64)).astype(np.float32)
  elif dtype == 'bfloat16':
    f = (seed + 0.5 * (i % 8)).astype(np.float32)
    v = (f.view(np.uint32) >> 16).astype(np.uint16)  # exact (low bits 0)
  elif dtype == 'int32':
    v = (seed * 1000 + i - 50).astype(np.int32)
  else:
    v = (seed * 1000 + i - 50).astype(np.int64)
  return v.reshape(entry['shape'])


def leaves(tree, prefix=''):
  if isinstance(tree, dict) and not ('driver' in tree and 'kvstore' in tree):
    for k, v in tree.items():
      yield from leaves(v, f'{prefix}.{k}' if prefix else k)
  else:
    yield prefix, tree


class Bf16AsU2Store(dict):
  """zarr v2 store over a directory; reports dtype 'bfloat16' as '<u2'.

  numpy has no bfloat16, so zarr-python cannot parse it; the bytes are the
  same, and zarr still does the chunk decoding/assembly.
  """

  def __init__(self, directory):
    super().__init__()
    for root, _, files in os.walk(directory):
      for f in files:
        key = os.path.relpath(os.path.join(root, f), directory)
        with open(os.path.join(root, f), 'rb') as fp:
          data = fp.read()
        if key == '.zarray':
          meta = json.loads(data)
          if meta['dtype'] == 'bfloat16':
            meta['dtype'] = '<u2'
          data = json.dumps(meta).encode()
        self[key.replace(os.sep, '/')] = data


def flax_ndarray(arr, dtype_name):
  payload = msgpack.packb((list(arr.shape), dtype_name, arr.tobytes('C')),
                          use_bin_type=True)
  return msgpack.ExtType(1, payload)


def write_foreign(model_dir, expected, ts):
  """Writes `expected` as a t5x legacy checkpoint with Python tools."""
  import shutil
  shutil.rmtree(model_dir, ignore_errors=True)
  ckpt = os.path.join(model_dir, f'checkpoint_{expected["step"]}')
  os.makedirs(ckpt)
  step = np.asarray(expected['step'], np.int32)
  optimizer = {'state': {'step': flax_ndarray(step, 'int32')}}
  for k, e in enumerate(expected['arrays']):
    vals = expected_values(e)
    node = optimizer
    keys = e['path'].split('.')
    for key in keys[:-1]:
      node = node.setdefault(key, {})
    if e['inline']:
      node[keys[-1]] = flax_ndarray(vals, e['dtype'])
      continue
    shape = list(e['shape'])
    # Alternate whole-array chunks and non-dividing (edge-padded) chunks.
    chunks = [max(1, d if k % 2 == 0 else (d + 1) // 2) for d in shape]
    spec = {'driver': 'zarr', 'dtype': e['dtype'],
            'kvstore': {'driver': 'file', 'path': e['path'] + '/'},
            'metadata': {'chunks': chunks,
                         'compressor': {'id': 'gzip', 'level': 1},
                         'shape': shape}}
    node[keys[-1]] = spec
    array_dir = os.path.join(ckpt, e['path'])
    if ts is not None:
      abs_spec = json.loads(json.dumps(spec))
      abs_spec['kvstore']['path'] = array_dir
      if e['dtype'] == 'bfloat16':
        import ml_dtypes  # comes with tensorstore
        vals = vals.view(ml_dtypes.bfloat16)
      t = ts.open(abs_spec, create=True, open=True).result()
      t.write(vals).result()
    else:
      z = zarr.open_array(array_dir, mode='w', shape=shape, chunks=chunks,
                          dtype=vals.dtype, compressor=zarr.GZip(level=1),
                          fill_value=None)
      z[...] = vals
      if e['dtype'] == 'bfloat16':  # numpy has no bfloat16: patch the name
        with open(os.path.join(array_dir, '.zarray')) as f:
          meta = json.load(f)
        meta['dtype'] = 'bfloat16'
        with open(os.path.join(array_dir, '.zarray'), 'w') as f:
          json.dump(meta, f)
  with open(os.path.join(ckpt, 'checkpoint'), 'wb') as f:
    f.write(msgpack.packb({'version': 3, 'optimizer': optimizer},
                          use_bin_type=True))
  with open(os.path.join(model_dir, 'expected.json'), 'w') as f:
    json.dump(expected, f)
  print(f'wrote {ckpt} with {"tensorstore" if ts else "zarr-python"}')


def main():
  ckpt_dir = os.path.abspath(sys.argv[1])
  model_dir = os.path.dirname(ckpt_dir)
  with open(os.path.join(model_dir, 'expected.json')) as f:
    expected = json.load(f)

  check(not [d for d in os.listdir(model_dir) if '.tmp-' in d],
        'temporary directory left behind')
  with open(os.path.join(ckpt_dir, 'checkpoint'), 'rb') as f:
    index = msgpack.unpackb(f.read(), ext_hook=ext_hook, raw=False)
  check(set(index) == {'version', 'optimizer'}, f'top keys {list(index)}')
  check(index['version'] == 3, f'version {index["version"]}')
  opt = index['optimizer']
  check('target' in opt and 'state' in opt, f'optimizer keys {list(opt)}')
  step = opt['state']['step']
  check(step[0] == 'ndarray' and step[1] == 'int32' and step[2].shape == ()
        and int(step[2]) == expected['step'], f'state.step = {step}')

  found = dict(leaves(opt))
  want = {e['path'] for e in expected['arrays']} | {'state.step'}
  check(set(found) == want, f'leaf paths {sorted(set(found) ^ want)} differ')

  try:
    import tensorstore as ts  # optional: proves TensorStore-readability
  except ImportError:
    ts = None
    print('tensorstore not installed: skipping the TensorStore open')

  n_zarr = 0
  for e in expected['arrays']:
    path, want_vals = e['path'], expected_values(e)
    leaf = found.get(path)
    if leaf is None:
      continue
    if e['inline']:
      check(isinstance(leaf, tuple) and leaf[1] == e['dtype'] and
            np.array_equal(leaf[2], want_vals), f'{path}: inline value')
      continue
    check(isinstance(leaf, dict), f'{path}: not a spec')
    check(leaf.get('driver') == 'zarr', f'{path}: driver')
    check(leaf.get('dtype') == e['dtype'], f'{path}: dtype {leaf.get("dtype")}')
    check(leaf.get('kvstore') == {'driver': 'file', 'path': path + '/'},
          f'{path}: kvstore {leaf.get("kvstore")}')
    meta = leaf.get('metadata', {})
    check(list(meta.get('shape', [None])) == e['shape'], f'{path}: shape')
    check(meta.get('compressor') == {'id': 'gzip', 'level': 1},
          f'{path}: compressor {meta.get("compressor")}')

    array_dir = os.path.join(ckpt_dir, leaf['kvstore']['path'])
    with open(os.path.join(array_dir, '.zarray')) as f:
      zmeta = json.load(f)
    check(list(zmeta['chunks']) == list(meta['chunks']), f'{path}: chunks')
    if e['dtype'] == 'bfloat16':
      z = zarr.open_array(store=Bf16AsU2Store(array_dir), mode='r')
    else:
      z = zarr.open_array(array_dir, mode='r')
    got = z[...]
    check(got.dtype == want_vals.dtype and got.shape == want_vals.shape and
          np.array_equal(got, want_vals), f'{path}: zarr values differ')
    n_zarr += 1

    if ts is not None:
      spec = json.loads(json.dumps(leaf))
      spec['kvstore']['path'] = os.path.join(ckpt_dir, spec['kvstore']['path'])
      arr = ts.open(spec, open=True).result().read().result()
      if e['dtype'] == 'bfloat16':
        arr = arr.view(np.uint16)
      check(arr.shape == want_vals.shape and np.array_equal(arr, want_vals),
            f'{path}: tensorstore values differ')

  print(f'checked {len(expected["arrays"])} arrays ({n_zarr} zarr) with '
        f'zarr {zarr.__version__}, msgpack, numpy {np.__version__}' +
        (f', tensorstore {getattr(ts, "__version__", "")}' if ts else ''))
  if FAILURES:
    print(f'{len(FAILURES)} failure(s)')
    return 1
  print('OK')
  if len(sys.argv) > 2:
    write_foreign(os.path.abspath(sys.argv[2]), expected, ts)
  return 0


if __name__ == '__main__':
  sys.exit(main())
