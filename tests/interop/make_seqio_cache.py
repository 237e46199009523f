"""Makes tests/testdata/seqio_cache/: the interop task's source and seqio's own cache of it.

Run outside the tests (needs apache-beam, which tests/interop/requirements.txt
leaves out), from the repository root, with the t5x interop venv:

  ~/.cache/t5xx/t5x-venv/bin/python3 tests/interop/make_seqio_cache.py

Versions used for the committed data: Python 3.11, seqio 0.0.19,
tensorflow-cpu 2.17.1, sentencepiece 0.2.0, apache-beam 2.59.0 (pip install
apache-beam==2.59.0 into that venv).

1. Writes the source (skipped when it exists; --rewrite_source redoes it):
   source/train.tfrecord (64 records) and source/validation.tfrecord (12), of
   tf.Example {question: b'upper: <adjective> <noun>', answer: the phrase in
   capitals}, the adjective/noun products below, in order; and
   vocab/interop_upper.model, a SentencePiece unigram model (sentencepiece
   0.2.0, t5's ids pad 0 / eos 1 / unk 2 / no bos, 100 pieces at most, no
   normalization: identity keeps the file a few KB) trained
   on those questions and answers.
2. Runs seqio's cache_tasks (seqio/scripts/cache_tasks_main.py, Beam
   DirectRunner) on task interop_cached_upper (seqio_interop_task.py) into a
   temporary folder, the exact command being
     PYTHONPATH=tests/interop python3 -m seqio.scripts.cache_tasks_main \
       --module_import=seqio_interop_task --tasks=interop_cached_upper \
       --output_cache_dir=<tmp> --min_shards=2 \
       --pipeline_options=--runner=DirectRunner
   and moves <tmp>/interop_cached_upper to tests/testdata/seqio_cache/
   (replacing it). cache_tasks' Reshuffle puts the examples in an arbitrary
   order in its 2 shards, so every run writes a different (equally valid)
   cache: the tests read the committed one, whatever its order.
"""

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
OUT = os.path.join(ROOT, 'tests', 'testdata', 'seqio_cache')
TASK = 'interop_cached_upper'

# 8 x 8 = 64 train phrases, 3 x 4 = 12 validation phrases; two words are not
# ASCII (multi-byte UTF-8 for the byte vocabulary).
TRAIN = itertools.product(
    ['red', 'small', 'quiet', 'old', 'naïve', 'bright', 'slow', 'warm'],
    ['fox', 'river', 'lamp', 'café', 'tree', 'stone', 'bird', 'road'])
VALIDATION = itertools.product(['green', 'tall', 'cold'],
                               ['house', 'boat', 'cloud', 'bell'])


def write_source():
  import sentencepiece as spm  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  os.makedirs(os.path.join(OUT, 'source'), exist_ok=True)
  os.makedirs(os.path.join(OUT, 'vocab'), exist_ok=True)
  texts = []
  for split, pairs in (('train', TRAIN), ('validation', VALIDATION)):
    path = os.path.join(OUT, 'source', f'{split}.tfrecord')
    with tf.io.TFRecordWriter(path) as w:
      for adjective, noun in pairs:
        phrase = f'{adjective} {noun}'
        texts += [f'upper: {phrase}', phrase.upper()]
        ex = tf.train.Example(features=tf.train.Features(feature={
            'question': tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[f'upper: {phrase}'.encode()])),
            'answer': tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[phrase.upper().encode()])),
        }))
        w.write(ex.SerializeToString())
    print('wrote', path)
  spm.SentencePieceTrainer.train(
      sentence_iterator=iter(texts),
      model_prefix=os.path.join(OUT, 'vocab', 'interop_upper'),
      model_type='unigram', vocab_size=100, hard_vocab_limit=False,
      pad_id=0, eos_id=1, unk_id=2, bos_id=-1, character_coverage=1.0,
      normalization_rule_name='identity', num_threads=1)
  os.remove(os.path.join(OUT, 'vocab', 'interop_upper.vocab'))


def main():
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--rewrite_source', action='store_true')
  args = parser.parse_args()
  if args.rewrite_source or not os.path.exists(
      os.path.join(OUT, 'source', 'train.tfrecord')):
    write_source()
  with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, PYTHONPATH=HERE)
    subprocess.run(
        [sys.executable, '-m', 'seqio.scripts.cache_tasks_main',
         '--module_import=seqio_interop_task', f'--tasks={TASK}',
         f'--output_cache_dir={tmp}', '--min_shards=2',
         '--pipeline_options=--runner=DirectRunner'],
        env=env, check=True)
    dest = os.path.join(OUT, TASK)
    shutil.rmtree(dest, ignore_errors=True)
    shutil.move(os.path.join(tmp, TASK), dest)
  print('wrote', dest, sorted(os.listdir(dest)))


if __name__ == '__main__':
  main()
