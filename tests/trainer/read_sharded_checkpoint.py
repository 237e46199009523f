"""Reads every zarr array of a checkpoint directory (argv[1]) with
zarr-python and, when installed, TensorStore (as t5x's reader does), and
prints {"<array dir>": {"shape": [...], "chunks": [...], "values": [...]}} as
JSON. Exits 77 when zarr is not installed, 1 when the two readers disagree.
Used by sharded_checkpoint_test."""
import json
import os
import sys

try:
    import numpy as np
    import zarr
except ImportError:
    print("SKIP: zarr/numpy not installed")
    sys.exit(77)
try:
    import tensorstore as ts
except ImportError:
    ts = None

root = os.path.normpath(os.path.abspath(sys.argv[1]))
out = {}
for name in sorted(os.listdir(root)):
    path = os.path.join(root, name)
    if not os.path.isfile(os.path.join(path, ".zarray")):
        continue
    z = zarr.open(path, mode="r")
    values = np.asarray(z[...])
    if ts is not None:
        spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": path}}
        t = ts.open(spec, open=True, read=True).result().read().result()
        if not np.array_equal(np.asarray(t), values):
            print("tensorstore and zarr disagree on " + name)
            sys.exit(1)
    out[name] = {"shape": list(z.shape), "chunks": list(z.chunks),
                 "values": values.astype(np.float64).ravel().tolist(),
                 "tensorstore": ts is not None}
print(json.dumps(out))
