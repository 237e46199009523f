"""t5x's own EarlyStoppingAction over a t5xx run's inference evaluations.

Usage: early_stopping_oracle.py METRICS_JSONL TASK METRIC MODE PATIENCE

Feeds each row of the run's inference_eval/<task>-metrics.jsonl (one per
evaluation, in order), as {task: {metric: value}}, to t5x's
trainer.EarlyStoppingAction (from the checkout at T5X_DIR), as t5x's train
does with actions['INFER_EVAL'], and prints the step of the first
evaluation after which it asks to stop ("stop 12"), or "stop none".
"""
import json
import sys

import t5x_import


def main(argv):
  path, task, metric, mode, patience = argv[1:]
  try:
    trainer = t5x_import.import_t5x(None, ('trainer',))['trainer']
  except t5x_import.T5xUnavailable as e:
    print(f'SKIP: {e}')
    return 77
  action = trainer.EarlyStoppingAction((task, metric), mode=mode, patience=int(patience))
  rows = [json.loads(line) for line in open(path)]
  print('values', [(r['step'], r[metric]) for r in rows])
  for r in rows:
    if action.run(None, {task: {metric: float(r[metric])}}):
      print('stop', r['step'])
      return 0
  print('stop none')
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
