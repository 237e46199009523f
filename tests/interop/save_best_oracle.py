"""t5x's own SaveBestCheckpointer decides which of a t5xx run's checkpoints stay.

Usage: save_best_oracle.py MODEL_DIR KEEP METRIC MODE KEEP_WITHOUT_METRICS FORCE_KEEP_PERIOD SAVED_STEPS [orbax]

Replays t5x's SaveBestCheckpointer._remove_old_checkpoints (t5x's code, from
the checkout at T5X_DIR) after each save of SAVED_STEPS (comma-separated,
in order), with the metric values its populate_metrics_for_steps reads from
the event files t5xx wrote in MODEL_DIR, and prints the steps it keeps
("kept 4,6,8"). Reading the final event files is what t5x read at each
save: a save at step s ranks only steps before s (the newest is always
kept), whose summaries were all written before s was saved. Only the
deletion is replaced (it is recorded instead of removing a directory).
FORCE_KEEP_PERIOD is 0 for None.

With `orbax`: t5x with train.use_orbax = True and the metric arguments of
OrbaxCheckpointManagerInterface instead -- after each save, t5x's
_CheckpointManagerImpl._get_old_steps_to_remove sets each checkpoint's
metrics from populate_metrics_for_steps and calls Orbax's own
CheckpointManager._get_old_steps_to_remove (orbax-checkpoint from the venv)
with the options t5x builds (max_to_keep=KEEP, best_fn, best_mode,
keep_checkpoints_without_metrics, keep_period=FORCE_KEEP_PERIOD); no lock
files exist (are_locked answers False). Only train/ metrics are replayed
exactly this way: they are written before the save of their step.
"""
import datetime
import sys
import types

import t5x_import


def orbax_kept(ckpt, model_dir, keep, metric, mode, without, period, saved):
  from orbax.checkpoint import checkpoint_manager as cm  # pylint: disable=g-import-not-at-top
  cm.utils.are_locked = lambda directory, steps, step_name_format: [False] * len(steps)
  infos = []
  options = types.SimpleNamespace(
      max_to_keep=keep, best_fn=lambda m: m[metric], best_mode=mode,
      keep_checkpoints_without_metrics=without, keep_period=period,
      keep_time_interval=None, metric_name_to_monitor=metric)
  fake = types.SimpleNamespace(_options=options, _checkpoints=infos, _track_best=True,
                               directory=model_dir, _step_name_format=None)
  fake._sort_checkpoints_by_metrics = (
      lambda c: cm.CheckpointManager._sort_checkpoints_by_metrics(fake, c))
  fake._get_interval_preserved_checkpoints = (
      lambda c: cm.CheckpointManager._get_interval_preserved_checkpoints(fake, c))
  now = datetime.datetime.now(tz=datetime.timezone.utc)
  for step in saved:
    infos.append(cm.CheckpointInfo(step, now, None))
    # t5x's _CheckpointManagerImpl._get_old_steps_to_remove, then Orbax's.
    step_to_metric = ckpt.populate_metrics_for_steps(model_dir, metric, [i.step for i in infos])
    for info in infos:
      if info.step in step_to_metric:
        info.metrics = {metric: step_to_metric[info.step]}
    remove = set(cm.CheckpointManager._get_old_steps_to_remove(fake))
    infos[:] = [i for i in infos if i.step not in remove]
  return [i.step for i in infos]


def main(argv):
  model_dir, keep, metric, mode, without, period, saved = argv[1:8]
  orbax = len(argv) > 8 and argv[8] == 'orbax'
  try:
    ckpt = t5x_import.import_t5x(None, ('checkpoints',))['checkpoints']
  except t5x_import.T5xUnavailable as e:
    print(f'SKIP: {e}')
    return 77
  if orbax:
    kept = orbax_kept(ckpt, model_dir, int(keep), metric, mode, without == 'True',
                      int(period) or None, [int(s) for s in saved.split(',')])
    metrics = ckpt.populate_metrics_for_steps(model_dir, metric, kept)
    print('metrics', {k: float(v) for k, v in sorted(metrics.items())})
    print('kept', ','.join(str(s) for s in sorted(kept)))
    return 0
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
