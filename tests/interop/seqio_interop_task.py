"""The cache-interop task, defined in seqio exactly as seqio_cache_task.gin defines it for t5xx.

Task 'interop_cached_upper' (issue 15, caches both ways): tf.Examples
{question, answer} of tests/testdata/seqio_cache/source/ (written by
make_seqio_cache.py) ->
  rekey {inputs: question, targets: answer}
  -> tokenize (ByteVocabulary, copy_pretokenized=True: inputs_pretokenized,
     targets_pretokenized)
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
# T5XX_INTEROP_SOURCE_DIR points the source elsewhere (the tests point it at a
# missing folder to show that a use_cached read never opens the source).
SOURCE_DIR = os.environ.get('T5XX_INTEROP_SOURCE_DIR', SOURCE_DIR)
SPLITS = ('train', 'validation')

VOCABULARY = seqio.ByteVocabulary()
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
