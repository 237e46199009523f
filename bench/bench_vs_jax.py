#!/usr/bin/env python3
"""t5xx against t5x on JAX, side by side: training tokens/s and their ratio.

Run through scripts/bench_vs_jax.sh, which provides what this needs (the
JAX venv, a t5x checkout, the t5xx_train_bench binary) and passes its
arguments here:

  scripts/bench_vs_jax.sh [--configs=tiny,small,base] \\
      [--dtypes=float32,bfloat16] [--rounds=3] [--steps=N] [--json_out=F]

For each config and dtype it starts one JAX worker (bench/t5x_jax_bench.py
--serve), which compiles t5x's train step once, then runs `rounds` rounds of
A/B in alternating order (t5xx then JAX, JAX then t5xx, ...): the t5xx side
is one run of build/bin/t5xx_train_bench for that config's BM_TrainStep
(a fresh process: model built, one warm-up step, then its timed steps), the
JAX side one round of the worker (one untimed step, then as many timed
steps as t5xx timed). Both count tokens/s the same way: batch * (inputs +
targets) positions per step, over the timed steps' wall time.

Configs: the groups tiny (T5.1.1 tiny at 32 x (128+32) and 8 x (512+114)),
small (T5.1.1 small at 8 x (128+32) and 2 x (512+114)) and base
(decoder-only base at 2 x 512), or single shapes by their
bench/t5x_jax_bench.py names (tiny_32x128+32, ...). Dtypes: float32,
bfloat16 (activations; parameters float32 on both sides).

Prints (stdout) the machine, versions and a table: config, batch x lengths,
dtype, t5xx tokens/s and JAX tokens/s (median of the rounds, with min-max),
t5xx / JAX (ratio of the medians) and whether it meets issue 16's bar,
t5xx >= 1.5x JAX. bfloat16 rows count toward the bar only where the CPU has
native bfloat16 (avx512_bf16 or amx_bf16 in /proc/cpuinfo); elsewhere they
say "n/a". Progress goes to stderr. --json_out=F also writes the table, every
round's figures and the environment as JSON (format "t5xx bench_vs_jax",
version 1). Exits 0 when every config ran (whether or not the bar is met),
1 when a side failed (with the failing side's last output), 2 for bad flags.

Run time on 2 cores (estimated from issue 16's rates): t5xx_train_bench
times 20 steps per tiny shape and 10 per small/base shape (--steps=N: N
each); a round of both sides takes about 20 s + 35 s (tiny), 30 s + 30 s
(small), 80 s + 85 s (base). XLA compiles each (config, dtype) once per
run: 1-5 min for tiny, 6-10 min for small and base the first time, seconds
afterwards (JAX's persistent compilation cache,
~/.cache/t5xx/jax-compile-cache). So all 10 rows x 3 rounds take about
1.5-2 h the first time and about 40 min once compiled; one tiny row with 2
rounds about 2 min once compiled. The figures are only as good as the
machine is quiet: a busy machine slows both sides, t5xx more (issue 16's
contention item); the JSON's ratio_by_median_step, from the median step
times, shows how much a disturbed round moved the tokens/s ratio.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(_HERE)
sys.path.insert(0, _HERE)
import t5x_jax_bench  # pylint: disable=g-import-not-at-top  (stdlib only at import)

BAR = 1.5  # issue 16: t5xx >= 1.5x t5x-on-JAX tokens/s
GROUPS = {
    'tiny': ('tiny_32x128+32', 'tiny_8x512+114'),
    'small': ('small_8x128+32', 'small_2x512+114'),
    'base': ('do_base_2x512',),
}
# t5xx_train_bench's BM_TrainStep model argument and display name per model.
MODELS = {'tiny': (0, 'T5.1.1 tiny'), 'small': (1, 'T5.1.1 small'),
          'decoder_only_base': (2, 'decoder-only base')}
NATIVE_BF16_FLAGS = ('avx512_bf16', 'amx_bf16')


class BenchError(Exception):
  """One side failed; the message names it and carries its last output."""


def _tail(text, lines=15):
  return '\n'.join(text.strip().splitlines()[-lines:])


def cpu_info():
  """CPU model, usable cores and which native bfloat16 flags it has."""
  model, flags = platform.processor() or platform.machine(), set()
  try:
    with open('/proc/cpuinfo') as f:
      for line in f:
        key, _, value = line.partition(':')
        if key.strip() == 'model name':
          model = value.strip()
        elif key.strip() == 'flags':
          flags = set(value.split())
          break
  except OSError:
    pass
  return {'cpu_model': model, 'cpu_count': os.cpu_count(),
          'usable_cores': len(os.sched_getaffinity(0)),
          'native_bf16_flags': [f for f in NATIVE_BF16_FLAGS if f in flags]}


def git_commit(path):
  """`git rev-parse HEAD` (+ '-dirty') of the checkout at path, or None."""
  try:
    head = subprocess.run(['git', '-C', path, 'rev-parse', 'HEAD'],
                          capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(['git', '-C', path, 'status', '--porcelain',
                            '--untracked-files=no'],
                           capture_output=True, text=True, check=True).stdout.strip()
    return head + ('-dirty' if dirty else '')
  except (OSError, subprocess.CalledProcessError):
    return None


def expand_configs(spec):
  names = []
  for item in filter(None, spec.split(',')):
    if item in GROUPS:
      names.extend(GROUPS[item])
    elif item in t5x_jax_bench.CONFIGS:
      names.append(item)
    else:
      raise ValueError(
          f'--configs: unknown {item!r}; use {", ".join(GROUPS)} or one of '
          f'{", ".join(t5x_jax_bench.CONFIGS)}')
  return list(dict.fromkeys(names))


def lengths_text(batch, in_len, tg_len):
  return f'{batch} × ({in_len}+{tg_len})' if in_len else f'{batch} × {tg_len}'


def run_t5xx(binary, name, dtype, steps):
  """One t5xx_train_bench run of the config's BM_TrainStep; its record."""
  model, batch, in_len, tg_len = t5x_jax_bench.CONFIGS[name]
  pattern = (f'^BM_TrainStep/{MODELS[model][0]}/{t5x_jax_bench.DTYPES.index(dtype)}'
             f'/{batch}/{in_len}/{tg_len}/')
  env = dict(os.environ)
  if steps:
    env['T5XX_BENCH_STEPS'] = str(steps)
  proc = subprocess.run([binary, f'--benchmark_filter={pattern}',
                         '--benchmark_format=json'],
                        capture_output=True, text=True, env=env)
  if proc.returncode != 0:
    raise BenchError(f'{binary} --benchmark_filter={pattern} exited with '
                     f'{proc.returncode}:\n{_tail(proc.stderr + proc.stdout)}')
  try:
    runs = [b for b in json.loads(proc.stdout)['benchmarks']
            if b.get('run_type', 'iteration') == 'iteration']
  except (ValueError, KeyError) as e:
    raise BenchError(f'{binary} printed no benchmark JSON ({e}):\n'
                     f'{_tail(proc.stdout)}') from e
  if len(runs) != 1:
    raise BenchError(f'{binary} ran {len(runs)} benchmarks for filter '
                     f'{pattern}, expected 1: rebuild it (scripts/build.sh) so '
                     'that its BM_TrainStep configs match bench/t5x_jax_bench.py')
  r = runs[0]
  return {'tokens_per_second': r['tokens_per_second'],
          'step_ms_median': r['step_ms_median'], 'steps_timed': r['iterations'],
          'mfu': r.get('mfu'), 'label': r.get('label', '')}


class JaxWorker:
  """bench/t5x_jax_bench.py --serve for one config and dtype."""

  def __init__(self, name, dtype, t5x_dir):
    self._log = tempfile.TemporaryFile(mode='w+')
    self._proc = subprocess.Popen(
        [sys.executable, os.path.join(_HERE, 't5x_jax_bench.py'), '--serve',
         f'--configs={name}', f'--dtypes={dtype}', f'--t5x_dir={t5x_dir}'],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
        text=True)
    self.info = self._receive()

  def _receive(self):
    line = self._proc.stdout.readline()
    record = json.loads(line) if line.startswith('{') else None
    if record is None or 'error' in record:
      self._proc.kill()
      self._proc.wait()
      self._log.seek(0)
      why = record['error'] if record else 'exited without a result'
      raise BenchError(f'the JAX worker (bench/t5x_jax_bench.py --serve) '
                       f'failed: {why}\n{_tail(self._log.read())}')
    return record

  def run_round(self, steps):
    self._proc.stdin.write(f'{steps}\n')
    self._proc.stdin.flush()
    return self._receive()

  def close(self):
    if self._proc.poll() is None:
      self._proc.stdin.close()
      self._proc.wait()
    self._log.close()


def _spread(values):
  return {'median': statistics.median(values), 'min': min(values),
          'max': max(values), 'rounds': values}


def bench_config(name, dtype, args, native_bf16):
  """Alternating A/B rounds of one config and dtype; the table row."""
  model, batch, in_len, tg_len = t5x_jax_bench.CONFIGS[name]
  log = lambda msg: print(f'[{name} {dtype}] {msg}', file=sys.stderr, flush=True)
  log('compiling the JAX step (XLA: minutes the first time, then cached) ...')
  t0 = time.time()
  worker = JaxWorker(name, dtype, args.t5x_dir)
  log(f'JAX step ready in {time.time() - t0:.0f} s '
      f'(compile {worker.info["compile_s"]:.0f} s)')
  t5xx_rounds, jax_rounds = [], []
  steps = args.steps
  try:
    for r in range(args.rounds):
      for side in (('t5xx', 'jax') if r % 2 == 0 else ('jax', 't5xx')):
        if side == 't5xx':
          t5xx_rounds.append(run_t5xx(args.t5xx_bench, name, dtype, args.steps))
          steps = steps or t5xx_rounds[-1]['steps_timed']
        else:
          jax_rounds.append(worker.run_round(steps))
      log(f'round {r + 1}/{args.rounds}: t5xx '
          f'{t5xx_rounds[-1]["tokens_per_second"]:.0f} tokens/s, JAX '
          f'{jax_rounds[-1]["tokens_per_second"]:.0f} tokens/s '
          f'({steps} steps each)')
  finally:
    worker.close()
  t5xx = _spread([x['tokens_per_second'] for x in t5xx_rounds])
  jax = _spread([x['tokens_per_second'] for x in jax_rounds])
  ratio = t5xx['median'] / jax['median']
  counts = dtype == 'float32' or native_bf16
  label = t5xx_rounds[-1]['label']
  return {
      'config': name, 'model': MODELS[model][1], 'batch': batch,
      'inputs_len': in_len, 'targets_len': tg_len, 'dtype': dtype,
      'steps_per_round': steps,
      't5xx_tokens_per_second': t5xx, 'jax_tokens_per_second': jax,
      'ratio': ratio,
      # The same ratio from the median step times, which a round's outliers
      # (the machine busy, the process paused) move less than tokens/s.
      'ratio_by_median_step': (
          statistics.median(x['step_ms_median'] for x in jax_rounds) /
          statistics.median(x['step_ms_median'] for x in t5xx_rounds)),
      'counts_toward_bar': counts,
      'meets_bar': ratio >= BAR if counts else None,
      't5xx_bf16_matmul': (label.rsplit('; bf16 matmul ', 1)[1]
                           if '; bf16 matmul ' in label else None),
      't5xx_mfu': [x['mfu'] for x in t5xx_rounds],
      't5xx_step_ms_median': [x['step_ms_median'] for x in t5xx_rounds],
      'jax_step_ms_median': [x['step_ms_median'] for x in jax_rounds],
      'jax_compile_s': worker.info['compile_s'],
      'jax_env': worker.info['env'],
  }


def _k(x):
  return f'{x / 1e3:.2f}k' if x >= 1e4 else f'{x / 1e3:.1f}k' if x >= 1e3 else f'{x:.0f}'


def format_table(rows, machine):
  head = ['config', 'batch × lengths', 'dtype', 't5xx tokens/s (min–max)',
          'JAX tokens/s (min–max)', 't5xx ÷ JAX', f'≥ {BAR}×']
  body = []
  for r in rows:
    t, j = r['t5xx_tokens_per_second'], r['jax_tokens_per_second']
    dtype = r['dtype'] + (f' ({r["t5xx_bf16_matmul"]})' if r['t5xx_bf16_matmul'] else '')
    bar = ('n/a: no native bf16' if not r['counts_toward_bar']
           else 'yes' if r['meets_bar'] else 'NO')
    body.append([r['model'], lengths_text(r['batch'], r['inputs_len'], r['targets_len']),
                 dtype, f'{_k(t["median"])} ({_k(t["min"])}–{_k(t["max"])})',
                 f'{_k(j["median"])} ({_k(j["min"])}–{_k(j["max"])})',
                 f'{r["ratio"]:.2f}', bar])
  widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
  line = lambda cells: '| ' + ' | '.join(c.ljust(w) for c, w in zip(cells, widths)) + ' |'
  out = [line(head), '|' + '|'.join('-' * (w + 2) for w in widths) + '|']
  out += [line(b) for b in body]
  counted = [r for r in rows if r['counts_toward_bar']]
  met = sum(1 for r in counted if r['meets_bar'])
  out.append('')
  out.append(f'tokens/s: median over the rounds; t5xx ÷ JAX: ratio of the medians. '
             f'Bar (t5xx ≥ {BAR}× JAX): {met} of {len(counted)} counted rows meet it'
             + (' — met.' if counted and met == len(counted) else '.'))
  if machine['native_bf16_flags']:
    out.append(f'bfloat16 rows count toward the bar: this CPU has '
               f'{" and ".join(machine["native_bf16_flags"])}.')
  else:
    out.append('bfloat16 rows do not count toward the bar: this CPU has neither '
               'avx512_bf16 nor amx_bf16.')
  return '\n'.join(out)


def main():
  ap = argparse.ArgumentParser(
      description=__doc__.split('\n', 1)[0],
      epilog='Run it as scripts/bench_vs_jax.sh [flags]; see bench/bench_vs_jax.py.')
  ap.add_argument('--configs', default='tiny,small,base',
                  help='groups tiny, small, base or shapes (tiny_32x128+32, ...)')
  ap.add_argument('--dtypes', default='float32,bfloat16')
  ap.add_argument('--rounds', type=int, default=3, help='A/B rounds per config')
  ap.add_argument('--steps', type=int, default=0,
                  help="timed steps per round on each side (default: "
                       "t5xx_train_bench's, 20 tiny, 10 small/base)")
  ap.add_argument('--json_out', default='', help='also write the results here')
  ap.add_argument('--t5xx_bench', default=os.path.join(_REPO, 'build', 'bin',
                                                       't5xx_train_bench'))
  ap.add_argument('--t5x_dir', default=os.environ.get('T5X_DIR', ''),
                  help='t5x checkout (default $T5X_DIR)')
  args = ap.parse_args()
  try:
    configs = expand_configs(args.configs)
  except ValueError as e:
    ap.error(str(e))
  dtypes = list(dict.fromkeys(filter(None, args.dtypes.split(','))))
  for d in dtypes:
    if d not in t5x_jax_bench.DTYPES:
      ap.error(f'--dtypes: unknown {d!r}; use float32, bfloat16')
  if not configs or not dtypes:
    ap.error('--configs and --dtypes need at least one entry each')
  if args.rounds < 1 or args.steps < 0:
    ap.error('--rounds must be >= 1 and --steps >= 0')
  if not os.access(args.t5xx_bench, os.X_OK):
    ap.error(f'--t5xx_bench: no executable at {args.t5xx_bench} (build it with '
             'T5XX_BUILD_TARGETS=t5xx_train_bench scripts/build.sh)')
  machine = cpu_info()
  native_bf16 = bool(machine['native_bf16_flags'])
  rows = []
  try:
    for dtype in dtypes:
      for name in configs:
        rows.append(bench_config(name, dtype, args, native_bf16))
  except BenchError as e:
    print(f'error: {e}', file=sys.stderr)
    return 1
  env = rows[0]['jax_env']
  for r in rows:
    del r['jax_env']  # one worker per row, all in this venv: kept once below
  t5x_commit = git_commit(args.t5x_dir)
  print(f'CPU: {machine["cpu_model"]}, {machine["usable_cores"]} usable of '
        f'{machine["cpu_count"]} cores, native bf16: '
        f'{", ".join(machine["native_bf16_flags"]) or "none"}')
  print(f't5xx: {args.t5xx_bench} (repository at {git_commit(_REPO) or "?"})')
  print(f'JAX: jax {env["jax"]}, jaxlib {env["jaxlib"]}, flax {env["flax"]}, '
        f'Python {env["python"]}; t5x at {args.t5x_dir} '
        f'({t5x_commit or "not a git checkout; expected " + t5x_jax_bench.T5X_COMMIT})')
  print(f'{args.rounds} A/B rounds per row (alternating order), '
        f'{"%d" % args.steps if args.steps else "t5xx_train_bench default"} '
        'timed steps per round on each side\n')
  print(format_table(rows, machine))
  if args.json_out:
    doc = {'format': 't5xx bench_vs_jax', 'version': 1, 'bar': BAR,
           'machine': machine, 'rounds': args.rounds,
           't5xx_bench': args.t5xx_bench, 't5xx_commit': git_commit(_REPO),
           't5x_dir': args.t5x_dir, 't5x_commit': t5x_commit,
           'jax_env': env, 'rows': rows}
    with open(args.json_out, 'w') as f:
      json.dump(doc, f, indent=1)
    print(f'\nwrote {args.json_out}')
  return 0


if __name__ == '__main__':
  sys.exit(main())
