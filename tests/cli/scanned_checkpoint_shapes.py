#!/usr/bin/env python3
"""Checks a t5xx checkpoint against t5x's scanned layout: names and shapes.

Usage: scanned_checkpoint_shapes.py CHECKPOINT_DIR GOLDEN_JSON RUN VOCAB

GOLDEN_JSON is tests/testdata/parity/adafactor_scalable_t5.json: the
parameters and Adafactor slots t5x's own optimizer holds for a scanned
scalable_t5 model (emb 16, 2 heads x 8, mlp 32, 2 + 3 layers, vocab 40).
The checkpoint, of a model with those dimensions and vocabulary VOCAB, must
hold exactly t5x's paths ('target.<param>', 'state.param_states.<...>'),
each with t5x's shape (40 read as VOCAB). The msgpack index is decoded the
way flax does (inline arrays are ndarray ext types); zarr arrays' shapes come
from their .zarray. Exit status: 0 ok, 1 mismatch, 77 without msgpack.
"""
import json
import os
import sys

try:
  import msgpack
except ImportError as e:
  print(f'SKIP: {e}')
  sys.exit(77)


def ext_hook(code, data):
  if code in (1, 3):
    shape, _, _ = msgpack.unpackb(data, raw=False)
    return ('inline', list(shape))
  return msgpack.ExtType(code, data)


def leaves(tree, prefix=''):
  if isinstance(tree, dict) and not ('driver' in tree and 'kvstore' in tree):
    for k, v in tree.items():
      yield from leaves(v, f'{prefix}.{k}' if prefix else k)
  else:
    yield prefix, tree


def main():
  ckpt, golden, run, vocab = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
  with open(os.path.join(ckpt, 'checkpoint'), 'rb') as f:
    index = msgpack.unpackb(f.read(), raw=False, ext_hook=ext_hook, strict_map_key=False)
  got = {}
  for path, leaf in leaves(index['optimizer']):
    if path == 'state.step':
      continue
    if isinstance(leaf, tuple):
      got[path] = leaf[1]
    else:
      with open(os.path.join(ckpt, path, '.zarray')) as f:
        got[path] = json.load(f)['shape']
  want = {}
  g = json.load(open(golden))['runs'][run]
  for name, t in g['params'].items():
    want['target.' + name] = t['shape']
  for name, t in g['slots'].items():
    want['state.' + name] = t['shape']
  want = {k: [vocab if d == 40 else d for d in s] for k, s in want.items()}
  bad = [f'missing {k} {s}' for k, s in sorted(want.items()) if k not in got]
  bad += [f'not in t5x: {k} {s}' for k, s in sorted(got.items()) if k not in want]
  bad += [f'{k}: {got[k]}, t5x {s}' for k, s in sorted(want.items()) if k in got and got[k] != s]
  for b in bad:
    print('FAIL', b)
  print(f'{len(want)} arrays of t5x\'s, {len(bad)} differences')
  sys.exit(1 if bad else 0)


if __name__ == '__main__':
  main()
