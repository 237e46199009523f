"""t5x's own SaveBestCheckpointer decides which of a t5xx run's checkpoints stay.

Usage: save_best_oracle.py MODEL_DIR KEEP METRIC MODE KEEP_WITHOUT_METRICS FORCE_KEEP_PERIOD SAVED_STEPS

Replays t5x's SaveBestCheckpointer._remove_old_checkpoints (t5x's code, from
the checkout at T5X_DIR) after each save of SAVED_STEPS (comma-separated,
in order), with the metric values its populate_metrics_for_steps reads from
the event files t5xx wrote in MODEL_DIR, and prints the steps it keeps
("kept 4,6,8"). Reading the final event files is what t5x read at each
save: a save at step s ranks only steps before s (the newest is always
kept), whose summaries were all written before s was saved. Only the
deletion is replaced (it is recorded instead of removing a directory).
FORCE_KEEP_PERIOD is 0 for None.
"""
import sys
import types

import t5x_import


def main(argv):
  model_dir, keep, metric, mode, without, period, saved = argv[1:]
  try:
    ckpt = t5x_import.import_t5x(None, ('checkpoints',))['checkpoints']
  except t5x_import.T5xUnavailable as e:
    print(f'SKIP: {e}')
    return 77
  existing = set()
  removed = []
  ckpt.checkpoint_utils.remove_checkpoint_dir = lambda d: removed.append(d)
  cls = ckpt.SaveBestCheckpointer
  fake = types.SimpleNamespace(
      keep=int(keep),
      checkpoints_dir=model_dir,
      _metric_name_to_monitor=metric,
      _metric_mode=mode,
      _keep_checkpoints_without_metrics=without == 'True',
      _force_keep_period=int(period) or None,
      all_steps=lambda: sorted(existing),
      _get_checkpoint_dir=lambda step: step)
  fake._filter_out_force_keep_period_steps = (
      lambda steps: cls._filter_out_force_keep_period_steps(fake, steps))
  for step in (int(s) for s in saved.split(',')):
    existing.add(step)
    removed.clear()
    cls._remove_old_checkpoints(fake)
    existing.difference_update(removed)
  metrics = ckpt.populate_metrics_for_steps(model_dir, metric, sorted(existing))
  print('metrics', {k: float(v) for k, v in sorted(metrics.items())})
  print('kept', ','.join(str(s) for s in sorted(existing)))
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
