"""Prints a seqio task's examples, as seqio itself reads them, in `t5xx data show`'s JSON lines.

  seqio_cache_reader.py --cache_root=DIR [--task=interop_cached_upper]
      [--split=train] [--use_cached=true] [--shard=J/M] [--stats]

Registers the task (seqio_interop_task.py), seqio.add_global_cache_dirs([DIR])
and prints task.get_dataset(use_cached=..., shuffle=False, sequence_length=None,
shard_info=ShardInfo(J, M) if --shard) one JSON object per line, keys as
`t5xx data show` prints them: a token feature as its id list plus
"<feature>_text" (the vocabulary's decode), a string feature as its text.

--stats prints instead one JSON object of what seqio's cache_tasks writes for
the split, computed here with seqio on the same read:
  {"stats": {examples, <f>_tokens, <f>_max_tokens} (tokens neither EOS nor PAD,
             as seqio's beam_utils._CountTokens counts them),
   "info_features": {f: {dtype, shape}} of the pre-cache examples (seqio's
             beam_utils.GetInfo: dtype name, [None] + shape[1:]),
   "cache_dir": the directory seqio found the task's cache in (use_cached)}.
"""

import argparse
import json
import os
import sys

os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # pylint: disable=g-import-not-at-top
import seqio
import tensorflow as tf
import seqio_interop_task


def to_json(ex, output_features):
  out = {}
  for k, v in sorted(ex.items()):
    if isinstance(v, bytes):
      out[k] = v.decode('utf-8')
      continue
    ids = np.asarray(v).tolist()
    out[k] = ids
    if k in output_features:
      out[k + '_text'] = output_features[k].vocabulary.decode(ids)
  return out


def stats_of(examples, task, split, use_cached):
  stats = {'examples': len(examples)}
  for name, feat in task.output_features.items():
    counts = []
    for ex in examples:
      if name not in ex:
        continue
      v = np.asarray(ex[name])
      ok = np.ones_like(v, dtype=bool)
      for special in (feat.vocabulary.eos_id, feat.vocabulary.pad_id):
        if special is not None:
          ok &= v != special
      counts.append(int(ok.sum()))
    if counts:
      stats[f'{name}_tokens'] = sum(counts)
      stats[f'{name}_max_tokens'] = max(counts)
  # The features a cache of this task holds: the pre-cache steps' output,
  # read on the fly from the source (as cache_tasks does, shuffle=False).
  ds = task.preprocess_precache(task.source.get_dataset(split, shuffle=False))
  first = next(iter(ds))
  features = {}
  for k, t in first.items():
    shape = t.shape.as_list()
    features[k] = {'dtype': t.dtype.name,
                   'shape': [None] + shape[1:] if shape else []}
  out = {'stats': stats, 'info_features': features}
  if use_cached:
    out['cache_dir'] = task.cache_dir
  return out


def read(task, split, use_cached, shard_info=None):
  """seqio's examples of `split` (shuffle=False, no sequence_length) as JSON objects."""
  ds = task.get_dataset(sequence_length=None, split=split,
                        use_cached=use_cached, shuffle=False,
                        shard_info=shard_info, num_epochs=1)
  return [to_json(ex, task.output_features) for ex in ds.as_numpy_iterator()]


def stats(task, split, use_cached):
  """--stats's object (see the module doc) for `split`."""
  ds = task.get_dataset(sequence_length=None, split=split,
                        use_cached=use_cached, shuffle=False, num_epochs=1)
  return stats_of(list(ds.as_numpy_iterator()), task, split, use_cached)


def main():
  p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  p.add_argument('--cache_root', required=True)
  p.add_argument('--task', default=seqio_interop_task.TASK_NAME)
  p.add_argument('--split', default='train')
  p.add_argument('--use_cached', default='true', choices=['true', 'false'])
  p.add_argument('--shard', default=None, help='J/M: seqio.ShardInfo(J, M)')
  p.add_argument('--stats', action='store_true')
  a = p.parse_args()
  seqio.add_global_cache_dirs([a.cache_root])
  task = seqio.get_mixture_or_task(a.task)
  use_cached = a.use_cached == 'true'
  if a.stats:
    print(json.dumps(stats(task, a.split, use_cached), sort_keys=True))
    return
  shard_info = None
  if a.shard:
    j, m = (int(x) for x in a.shard.split('/'))
    shard_info = seqio.ShardInfo(index=j, num_shards=m)
  for ex in read(task, a.split, use_cached, shard_info):
    print(json.dumps(ex, ensure_ascii=False, sort_keys=True))


if __name__ == '__main__':
  tf.get_logger().setLevel('ERROR')
  main()
