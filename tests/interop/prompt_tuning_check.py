"""Checks of a prompt-tuning run (run_prompt_tuning_test.sh), with t5x's own
checkpoint reader (t5x.checkpoints.load_t5x_checkpoint):
  frozen   every parameter but encoder/prompt/prompt/prompt of the tuned
           checkpoint equals the checkpoint it was tuned from, bit for bit
  prompt   the prompt changed from its value at the first save
  numpy    the numpy checkpoint's encoder.prompt.prompt.prompt (read with
           numpy.load) equals the prompt of the checkpoint of that step

Usage: prompt_tuning_check.py BASE_CKPT FIRST_CKPT TUNED_CKPT NUMPY_FILE
Prints one line per check ("ok <check> ..." / "FAIL <check> ..."); exits 1
on a failure.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import t5x_import  # pylint: disable=g-import-not-at-top

PROMPT = 'encoder/prompt/prompt/prompt'


def flat(ckpt, load):
  import flax  # pylint: disable=g-import-not-at-top
  target = load(ckpt)['target']
  return {'/'.join(k): np.asarray(v) for k, v in flax.traverse_util.flatten_dict(target).items()}


def main():
  base_path, first_path, tuned_path, npy_path = sys.argv[1:5]
  load = t5x_import.import_t5x(None, ('checkpoints',))['checkpoints'].load_t5x_checkpoint
  base, first, tuned = flat(base_path, load), flat(first_path, load), flat(tuned_path, load)
  failures = 0

  def report(ok, name, what):
    nonlocal failures
    failures += 0 if ok else 1
    print(('ok ' if ok else 'FAIL ') + name + ' ' + what)

  frozen = sorted(k for k in tuned if k != PROMPT)
  same = [k for k in frozen if k in base and np.array_equal(base[k], tuned[k])]
  report(len(same) == len(frozen) == len(base) and PROMPT not in base and PROMPT in tuned,
         'frozen', f'{len(same)} of {len(frozen)} parameters equal the base checkpoint\'s '
         f'bit for bit; the base has {len(base)} and no prompt: '
         f'{sorted(set(frozen) - set(same))[:5]}')
  moved = float(np.max(np.abs(tuned[PROMPT] - first[PROMPT])))
  report(moved > 0, 'prompt', f'{tuned[PROMPT].shape}: max |change| since the first save {moved:.3g}')
  saved = np.load(npy_path)
  report(saved.dtype == np.float32 and np.array_equal(saved, tuned[PROMPT]), 'numpy',
         f'{npy_path}: {saved.dtype} {saved.shape} equals the checkpoint\'s prompt')
  return 1 if failures else 0


if __name__ == '__main__':
  sys.exit(main())
