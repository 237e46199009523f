"""The cache-interop task, defined in seqio exactly as seqio_cache_task.gin defines it for t5xx.

Task 'interop_cached_upper' (issue 15, caches both ways): tf.Examples
{question, answer} of tests/testdata/seqio_cache/source/ (written by
make_seqio_cache.py) ->
  rekey {inputs: question, targets: answer}
  -> tokenize (SentencePiece vocab/interop_upper.model, copy_pretokenized=True:
     inputs_pretokenized, targets_pretokenized)
  -> CacheDatasetPlaceholder()
  -> append_eos_after_trim.
Importing this module registers the task (cache_tasks_main --module_import
and the reader scripts import it). Keep it in step with seqio_cache_task.gin.
"""

import functools
import os

import seqio
import tensorflow as tf

TASK_NAME = 'interop_cached_upper'
REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
# The committed cache root (seqio's <root>/<task>/ layout) and the task's source.
CACHE_ROOT = os.path.join(REPO_ROOT, 'tests', 'testdata', 'seqio_cache')
SOURCE_DIR = os.path.join(CACHE_ROOT, 'source')
SPLITS = ('train', 'validation')
# A SentencePiece model (t5's ids: pad 0, eos 1, unk 2, no bos) trained on the
# source's phrases by make_seqio_cache.py: t5xx trains only with a
# SentencePiece vocabulary, and test (b) trains on this task.
VOCAB_FILE = os.path.join(CACHE_ROOT, 'vocab', 'interop_upper.model')

VOCABULARY = seqio.SentencePieceVocabulary(VOCAB_FILE, extra_ids=0)
OUTPUT_FEATURES = {
    'inputs': seqio.Feature(VOCABULARY, add_eos=True),
    'targets': seqio.Feature(VOCABULARY, add_eos=True),
}


def register():
  if TASK_NAME in seqio.TaskRegistry.names():
    return seqio.TaskRegistry.get(TASK_NAME)
  source = seqio.TFExampleDataSource(
      split_to_filepattern={
          s: os.path.join(SOURCE_DIR, f'{s}.tfrecord') for s in SPLITS
      },
      feature_description={
          'question': tf.io.FixedLenFeature([], tf.string),
          'answer': tf.io.FixedLenFeature([], tf.string),
      },
  )
  return seqio.TaskRegistry.add(
      TASK_NAME,
      source=source,
      preprocessors=[
          functools.partial(
              seqio.preprocessors.rekey,
              key_map={'inputs': 'question', 'targets': 'answer'},
          ),
          seqio.preprocessors.tokenize,
          seqio.CacheDatasetPlaceholder(),
          seqio.preprocessors.append_eos_after_trim,
      ],
      output_features=OUTPUT_FEATURES,
  )


register()
