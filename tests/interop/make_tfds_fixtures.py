"""Small TFDS datasets written by TensorFlow Datasets itself, and what TFDS
reads back from them: the fixtures and the oracle of t5xx's TfdsDataSource.

  python3 make_tfds_fixtures.py write OUT_DIR   # OUT_DIR/data/... + OUT_DIR/tfds_reads.json
  python3 make_tfds_fixtures.py check OUT_DIR   # reads OUT_DIR/data with TFDS again and
                                                # compares with OUT_DIR/tfds_reads.json

Run with the venv scripts/setup_t5x_interop.sh makes (tensorflow_datasets
4.9). tests/testdata/tfds/ holds what `write` made; `check` (ctest
interop_tfds_reads) says TFDS still reads those files that way.

Each fixture is a GeneratorBasedBuilder with the name, config and version
t5's catalog asks for (t5/data/tasks.py) and the *features of TFDS's own
builder* of that dataset (tfds.builder(name).info.features), filled with
generated examples: the same layout, features.json and records a real
`tfds build` writes, a few dozen examples each, several shards per split.

tfds_reads.json: what builder_from_directory(dir).as_dataset(split,
shuffle_files=False, read_config=ReadConfig(input_context=...)) yields:
"examples", each whole split in TFDS's order, each feature flattened with
'/' (as t5xx names nested features) as {"dtype", "shape", "value": nested
lists as numpy's tolist() gives them}; "orders", for each split spec
(slices, '+', shards of tf.distribute.InputContext), the examples read in
order as [split, index into "examples"].
"""
import json
import os
import random
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_datasets as tfds  # noqa: E402

WORDS = ("the cat sat on a mat while two dogs ran to eat green apples near old river "
         "bank under blue sky with small red birds singing songs of spring über café").split()

# (catalog name, TFDS builder to take the features from, {split: examples}, shards per split)
FIXTURES = [
    ("c4/en:2.2.0", "c4/en", {"train": 200, "validation": 24}, 4),
    ("glue/cola:1.0.0", "glue/cola", {"train": 30, "validation": 12, "test": 8}, 2),
    ("glue/stsb:1.0.0", "glue/stsb", {"train": 30, "validation": 12, "test": 8}, 2),
    ("squad/v1.1:3.0.0", "squad/v1.1", {"train": 30, "validation": 12}, 2),
    ("wmt_t2t_translate/de-en:1.0.0", "wmt_t2t_translate/de-en", {"train": 30, "validation": 12}, 2),
    ("super_glue/record:1.0.2", "super_glue/record", {"train": 20, "validation": 10}, 2),
    ("super_glue/multirc:1.0.2", "super_glue/multirc", {"train": 20, "validation": 10}, 2),
    ("cnn_dailymail:3.4.0", "cnn_dailymail", {"train": 20, "validation": 10}, 2),
    ("trivia_qa/rc:1.1.0", "trivia_qa/rc", {"train": 20, "validation": 8}, 2),
]

# Split specs read for the oracle, and (spec, num_input_pipelines) sharded reads.
SPECS = ["train", "validation", "train[:10%]", "train[3:17]", "train[-25%:]",
         "train[33%:67%]", "train+validation", "validation[:5]"]
# (every number of input pipelines from 2 to the train split's shards).
SHARDED = ["train"]


def sentence(rng, lo=2, hi=9):
  return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def value_of(feature, rng):
  """An example value for a TFDS feature, drawn from rng."""
  F = tfds.features
  if isinstance(feature, F.FeaturesDict):
    return {k: value_of(f, rng) for k, f in feature.items()}
  if isinstance(feature, F.Translation):
    return {lang: sentence(rng) for lang in feature.languages}
  if isinstance(feature, F.Sequence):
    n = feature._length if feature._length is not None else rng.randint(0, 3)
    items = [value_of(feature.feature, rng) for _ in range(n)]
    if isinstance(feature.feature, F.FeaturesDict):
      return {k: [it[k] for it in items] for k in feature.feature.keys()}
    return items
  if isinstance(feature, F.ClassLabel):
    return rng.randrange(feature.num_classes)
  if isinstance(feature, F.Text):
    return sentence(rng)
  if isinstance(feature, F.Tensor):
    dtype = np.dtype(feature.np_dtype)
    shape = [d if d is not None else rng.randint(0, 3) for d in feature.shape]
    size = int(np.prod(shape)) if shape else 1
    if dtype.kind in "SUO":
      vals = np.array([rng.choice(WORDS) for _ in range(size)], dtype=object)
    elif dtype.kind == "b":
      vals = np.array([rng.random() < 0.5 for _ in range(size)])
    elif dtype.kind == "f":
      vals = np.array([rng.randint(-40, 40) / 8.0 for _ in range(size)], dtype=dtype)
    else:
      vals = np.array([rng.randint(0, 500) for _ in range(size)], dtype=dtype)
    return vals.reshape(shape) if shape else vals.reshape(()).item()
  raise ValueError(f"no generator for {feature!r}")


def make_builder(catalog_name, features, splits):
  name, _, version = catalog_name.partition(":")
  name, _, config = name.partition("/")

  class Fixture(tfds.core.GeneratorBasedBuilder, skip_registration=True):
    VERSION = tfds.core.Version(version)
    BUILDER_CONFIGS = [tfds.core.BuilderConfig(name=config)] if config else []

    def _info(self):
      return tfds.core.DatasetInfo(builder=self, features=features)

    def _split_generators(self, dl_manager):
      return {s: self._generate_examples(s, n) for s, n in splits.items()}

    def _generate_examples(self, split, n):
      rng = random.Random(f"{catalog_name}/{split}")
      for i in range(n):
        yield i, value_of(features, rng)

  Fixture.name = name
  return Fixture


def plain(x):
  """tolist() output with bytes as UTF-8 text and numpy scalars as Python's."""
  if isinstance(x, list):
    return [plain(y) for y in x]
  if isinstance(x, bytes):
    return x.decode("utf-8")
  if isinstance(x, np.generic):
    return x.item()
  return x


def flatten(ex, prefix=""):
  """A TFDS example as {flat key: {"dtype", "shape", "value"}}; a string
  scalar as {"dtype": "string", "shape": [], "value": text}; ragged dims -1."""
  out = {}
  for k, v in ex.items():
    key = prefix + k
    if isinstance(v, dict):
      out.update(flatten(v, key + "/"))
    elif isinstance(v, tf.RaggedTensor):
      inner = list(v.flat_values.shape[1:])
      out[key] = {"dtype": v.dtype.name, "shape": [int(v.shape[0])] + [-1] * v.ragged_rank + inner,
                  "value": plain(v.to_list())}
    else:
      out[key] = {"dtype": v.dtype.name, "shape": list(v.shape), "value": plain(np.asarray(v.numpy()).tolist())}
  return out


def reads(data_dir):
  """{"examples": {"<dataset> <split>": [flat example, ...] as TFDS reads the
  whole split}, "orders": {"<dataset> <spec>[ shard i/n]": [[split, index
  into that split's examples], ...]}}."""
  examples, orders = {}, {}
  for catalog_name, _, splits, shards in FIXTURES:
    name, _, version = catalog_name.partition(":")
    builder = tfds.builder_from_directory(os.path.join(data_dir, name, version))

    def read(spec, ctx=None):
      rc = tfds.ReadConfig(input_context=ctx, try_autocache=False)
      ds = builder.as_dataset(split=spec, shuffle_files=False, read_config=rc)
      return [flatten(ex) for ex in ds]

    where = {}
    for split in splits:
      examples[f"{catalog_name} {split}"] = read(split)
      for i, ex in enumerate(examples[f"{catalog_name} {split}"]):
        key = json.dumps(ex, sort_keys=True)
        assert key not in where, f"{catalog_name}: two equal examples; change the generator"
        where[key] = [split, i]
    cases = [(s, None) for s in SPECS] + [(s, n) for s in SHARDED for n in range(2, shards + 1)]
    for spec, pipelines in cases:
      for i in range(pipelines or 1):
        ctx = None if pipelines is None else tf.distribute.InputContext(
            num_input_pipelines=pipelines, input_pipeline_id=i)
        case = f"{catalog_name} {spec}" + ("" if pipelines is None else f" shard {i}/{pipelines}")
        orders[case] = [where[json.dumps(ex, sort_keys=True)] for ex in read(spec, ctx)]
  return {"examples": examples, "orders": orders}


def write(out_dir):
  data_dir = os.path.join(out_dir, "data")
  shutil.rmtree(data_dir, ignore_errors=True)
  for catalog_name, source, splits, shards in FIXTURES:
    features = tfds.builder(source, data_dir=tempfile.mkdtemp()).info.features
    builder = make_builder(catalog_name, features, splits)(data_dir=data_dir)
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(num_shards=shards))
  # Only what a reader needs (TFDS's own files; no downloads, lock or temp files).
  shutil.rmtree(os.path.join(data_dir, "downloads"), ignore_errors=True)
  for root, _, files in os.walk(data_dir):
    for f in files:
      if f.endswith(".lock") or f.startswith("."):
        os.remove(os.path.join(root, f))
  with open(os.path.join(out_dir, "tfds_reads.json"), "w") as f:
    json.dump(reads(data_dir), f, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    f.write("\n")


def check(out_dir):
  with open(os.path.join(out_dir, "tfds_reads.json")) as f:
    committed = json.load(f)
  now = json.loads(json.dumps(reads(os.path.join(out_dir, "data"))))
  bad = [f"{part}: {k}" for part in ("examples", "orders")
         for k in sorted(set(committed[part]) | set(now[part]))
         if committed[part].get(k) != now[part].get(k)]
  if bad:
    print(f"FAIL: TFDS reads {len(bad)} case(s) differently from tfds_reads.json: {bad[:5]}")
    return 1
  print(f"OK: TFDS {tfds.__version__} reads the {len(now['examples'])} splits and "
        f"{len(now['orders'])} split specs of tfds_reads.json alike")
  return 0


if __name__ == "__main__":
  mode, out = sys.argv[1], sys.argv[2]
  if mode == "write":
    write(out)
  else:
    sys.exit(check(out))
