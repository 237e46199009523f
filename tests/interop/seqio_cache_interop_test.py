"""Task caches between seqio and t5xx, both ways (issue 15). Run by run_seqio_cache_test.sh.

  seqio_cache_interop_test.py t5xx_to_seqio T5XX_BINARY WORK_DIR
  seqio_cache_interop_test.py seqio_to_t5xx T5XX_BINARY WORK_DIR

The task is interop_cached_upper, defined alike for seqio
(seqio_interop_task.py) and t5xx (seqio_cache_task.gin). "Reads" are
shuffle=False, no sequence_length; seqio's side is seqio_cache_reader.py's
read(), t5xx's is `t5xx data show` (same JSON shape), compared in order.

t5xx_to_seqio: the task's on-the-fly examples agree; `t5xx cache_tasks`
  writes the task's cache (3 shards); seqio's use_cached read of it equals
  `t5xx data show --use_cached=true` of it, in order, and holds the task's
  examples; info.<split>.json's features and num_shards and stats.<split>.json
  equal what seqio computes (seqio_cache_reader.stats).
seqio_to_t5xx: the committed cache seqio's own cache_tasks wrote
  (tests/testdata/seqio_cache, make_seqio_cache.py): t5xx's use_cached read
  equals seqio's, in order; `t5xx train` of T5.1.1 tiny for 3 steps with
  USE_CACHED_TASKS = True (train and train_eval) from it succeeds. t5xx reads
  with the task's source pointed at missing files, so only the cache can
  supply the examples.
Exit 0 when every check passes, 1 otherwise (each failure printed).
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')

import seqio  # pylint: disable=g-import-not-at-top
import seqio_cache_reader
import seqio_interop_task

ROOT = seqio_interop_task.REPO_ROOT
TASK = seqio_interop_task.TASK_NAME
GIN = os.path.join(HERE, 'seqio_cache_task.gin')
# Binds the t5xx task's source to files that do not exist.
NO_SOURCE = ("--gin_bindings=interop/seqio.TFExampleDataSource.split_to_filepattern = "
             "{'train': '/nonexistent/train.tfrecord', "
             "'validation': '/nonexistent/validation.tfrecord'}")

failures = []


def check(ok, what, detail=''):
  print(('PASS ' if ok else 'FAIL ') + what)
  if not ok:
    failures.append(what)
    if detail:
      print('  ' + str(detail).replace('\n', '\n  '))
  return ok


def run(cmd, what):
  """Runs cmd in the repository root; its stdout, or None (a failure) if it fails."""
  r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
  if not check(r.returncode == 0, what, f'$ {" ".join(cmd)}\n{r.stderr[-3000:]}'):
    return None
  return r.stdout


def t5xx_show(t5xx, split, extra):
  out = run([t5xx, 'data', 'show', f'--gin_file={GIN}', f'--task={TASK}',
             f'--split={split}', '--n=1000000'] + extra,
            f't5xx data show {split} {" ".join(extra)}')
  return None if out is None else [json.loads(l) for l in out.splitlines()]


def first_difference(a, b):
  for i, (x, y) in enumerate(zip(a, b)):
    if x != y:
      return f'example {i}:\n t5xx  {json.dumps(x, ensure_ascii=False)}\n seqio {json.dumps(y, ensure_ascii=False)}'
  return f'lengths: t5xx {len(a)}, seqio {len(b)}'


def multiset(examples):
  return sorted(json.dumps(e, sort_keys=True) for e in examples)


def same_examples(t5xx_examples, seqio_examples, what):
  """In order; on a mismatch also says whether they agree as multisets."""
  if t5xx_examples is None:
    return False
  ok = t5xx_examples == seqio_examples
  detail = ''
  if not ok:
    detail = first_difference(t5xx_examples, seqio_examples) + (
        '\n same multiset (order differs)'
        if multiset(t5xx_examples) == multiset(seqio_examples)
        else '\n different multisets')
  return check(ok and len(seqio_examples) > 0,
               f'{what}: {len(seqio_examples)} examples, t5xx equals seqio in order',
               detail)


def t5xx_to_seqio(t5xx, work):
  cache_root = os.path.join(work, 'cache')
  task = seqio.get_mixture_or_task(TASK)
  on_the_fly = {}
  for split in seqio_interop_task.SPLITS:
    on_the_fly[split] = seqio_cache_reader.read(task, split, use_cached=False)
    same_examples(t5xx_show(t5xx, split, []), on_the_fly[split],
                  f'{split} on the fly')
  if run([t5xx, 'cache_tasks', f'--gin_file={GIN}', f'--tasks={TASK}',
          f'--output_cache_dir={cache_root}', '--min_shards=3'],
         't5xx cache_tasks') is None:
    return
  seqio.add_global_cache_dirs([cache_root])
  task_dir = os.path.join(cache_root, TASK)
  check(os.path.realpath(task.cache_dir or '') == os.path.realpath(task_dir),
        f'seqio finds the t5xx cache at {task_dir}', f'found {task.cache_dir}')
  for split in seqio_interop_task.SPLITS:
    cached = seqio_cache_reader.read(task, split, use_cached=True)
    same_examples(t5xx_show(t5xx, split, ['--use_cached=true',
                                          f'--cache_dir={cache_root}', NO_SOURCE]),
                  cached, f'{split} from the t5xx cache')
    check(multiset(cached) == multiset(on_the_fly[split]),
          f'{split}: the t5xx cache holds the task\'s examples (seqio, as multisets)')
    expected = seqio_cache_reader.stats(task, split, use_cached=True)
    with open(seqio.get_cached_stats_path(task_dir, split)) as f:
      stats = json.load(f)
    check(stats == expected['stats'], f'stats.{split}.json equals seqio\'s count',
          f't5xx  {stats}\nseqio {expected["stats"]}')
    with open(seqio.get_cached_info_path(task_dir, split)) as f:
      info = json.load(f)
    shards = [n for n in os.listdir(task_dir)
              if n.startswith(f'{split}.tfrecord-') and n.endswith('-of-00003')]
    check(info.get('features') == expected['info_features'],
          f'info.{split}.json features equal seqio\'s',
          f't5xx  {info.get("features")}\nseqio {expected["info_features"]}')
    check(info.get('num_shards') == 3 and len(shards) == 3,
          f'info.{split}.json num_shards 3, 3 shard files', f'{info} {shards}')
  check(os.path.isfile(os.path.join(task_dir, 'COMPLETED')), 'COMPLETED written')


def seqio_to_t5xx(t5xx, work):
  cache_root = seqio_interop_task.CACHE_ROOT
  seqio.add_global_cache_dirs([cache_root])
  task = seqio.get_mixture_or_task(TASK)
  for split in seqio_interop_task.SPLITS:
    same_examples(t5xx_show(t5xx, split, ['--use_cached=true',
                                          f'--cache_dir={cache_root}', NO_SOURCE]),
                  seqio_cache_reader.read(task, split, use_cached=True),
                  f'{split} from the seqio cache')
  # 3 steps of T5.1.1 tiny, train and train_eval from the cache; the model's
  # vocabulary is the task's (relative to --data_dir, the repository root).
  model_dir = os.path.join(work, 'train')
  out = run([t5xx, 'train', '--gin_file=models/t5_1_1/tiny.gin',
             '--gin_file=runs/pretrain.gin', f'--gin_file={GIN}', NO_SOURCE,
             f'--gin.MODEL_DIR={model_dir}', f"--gin.MIXTURE_OR_TASK_NAME='{TASK}'",
             "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 16}",
             '--gin.TRAIN_STEPS=3', '--gin.BATCH_SIZE=4', '--gin.EVAL_STEPS=1',
             '--gin.DROPOUT_RATE=0.0', '--gin.USE_CACHED_TASKS=True',
             "--gin.seqio.SentencePieceVocabulary.sentencepiece_model_file="
             "'tests/testdata/seqio_cache/vocab/interop_upper.model'",
             '--gin.seqio.SentencePieceVocabulary.extra_ids=0',
             '--gin.network.T5Config.vocab_size=128', f'--data_dir={ROOT}',
             f'--seqio_additional_cache_dirs={cache_root}'],
            't5xx train from the seqio cache')
  if out is not None:
    check(os.path.isdir(os.path.join(model_dir, 'checkpoint_3')),
          'train wrote checkpoint_3', out[-2000:])


def main():
  mode, t5xx, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
  os.makedirs(work, exist_ok=True)
  {'t5xx_to_seqio': t5xx_to_seqio, 'seqio_to_t5xx': seqio_to_t5xx}[mode](t5xx, work)
  print(f'{mode}: {len(failures)} failure(s)')
  sys.exit(1 if failures else 0)


if __name__ == '__main__':
  main()
