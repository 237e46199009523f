#!/usr/bin/env python3
"""Makes tests/testdata/ocdbt_tree/: an OCDBT database written by TensorStore.

TensorStore itself (not t5xx) writes the database, so that t5xx's OCDBT
reader (src/t5xx/checkpoints/orbax/ocdbt_reader.h) is checked against the format's
own implementation on what Orbax's small checkpoints never show: a B+tree of
several levels (max_decoded_node_bytes = 256 forces interior nodes), 40
generations (more than 2^version_tree_arity_log2 = 16, so older versions
move into version tree nodes), zstd-compressed nodes, and values both inline
(<= max_inline_value_bytes = 16) and out of line in data files.

db/        the database (manifest.ocdbt + d/<files>)
expected.json  {"keys": {key: value as hex}} for every key of the newest
               version, as TensorStore lists and reads them.

How it was made (the committed files): tensorstore 0.1.65 on Python 3.11
(/work/golden-venv: jax 0.4.30, tensorstore 0.1.65, orbax-checkpoint 0.6.4):
    /work/golden-venv/bin/python tests/checkpoints/make_ocdbt_testdata.py \\
        tests/testdata/ocdbt_tree
The manifest holds a random uuid and commit times, so bytes differ between
runs; the keys and values do not.
"""
import json
import os
import shutil
import sys

import tensorstore as ts


def main():
  out = os.path.abspath(sys.argv[1])
  db = os.path.join(out, 'db')
  shutil.rmtree(db, ignore_errors=True)
  kv = ts.KvStore.open({
      'driver': 'ocdbt', 'base': 'file://' + db,
      'config': {'max_decoded_node_bytes': 256, 'max_inline_value_bytes': 16,
                 'compression': {'id': 'zstd', 'level': 3}},
  }).result()
  for i in range(40):  # one commit (generation) per write
    key = f'target.layer_{i:03d}.kernel/{i % 3}.0'
    value = (f'value{i};' * (1 + i % 5)).encode()
    kv.write(key, value).result()
  kv.delete_range(ts.KvStore.KeyRange('target.layer_010', 'target.layer_012')).result()
  listed = sorted(k.decode() for k in kv.list().result())
  expected = {k: kv.read(k).result().value.hex() for k in listed}
  with open(os.path.join(out, 'expected.json'), 'w') as f:
    json.dump({'keys': expected}, f, indent=1, sort_keys=True)
    f.write('\n')
  print(len(expected), 'keys')


if __name__ == '__main__':
  main()
