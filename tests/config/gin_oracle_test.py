#!/usr/bin/env python3
"""gin-config is the oracle of t5xx's gin engine.

The same gin text is evaluated twice:
  * by gin-config (PyPI), calling stand-in Python configurables with the
    names and signatures of the configurables in a registry; each stand-in
    returns a record of the scope it ran in and the arguments it received;
  * by t5xx (gin_calls_tool: gin::Config + gin::DumpCalls).
Both are written as the same JSON (see src/t5xx/config/call_dump.h) and
compared value by value, types included (1 is not 1.0). A case passes when
both agree on every call, or both refuse the config.

The run model is t5x's: gin parses the files and bindings and finalizes the
config (t5x's gin_utils.parse_gin_flags, finalize_config=True); each root is
called with no arguments at top level; a callable a stand-in received (@x) is
called afterwards, with no arguments, at top level.

Cases: the hand-written corpus (--corpus DIR: *.json, each a case over
t5xx's real registry), the kept regressions (--regressions DIR), and
--random N configs from a seeded generator over gin's grammar: scopes
(nested, scoped and unscoped references), macros (scoped, rebound, in
containers), include, dynamic-registration imports, %gin.REQUIRED, @x and
@x(), blocks, command-line bindings, and reference cycles. For each random
case that gin accepts, t5xx's operative config is evaluated again by gin and
must make the same calls. A random case that disagrees is written to the
build folder (printed) to be kept under --regressions.

Exit 0: no disagreement; 1: disagreements; 77: gin-config is not installed
(pip install gin-config).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------------------
# The gin side (run as a worker process: --gin_worker).


class _Default:
  def __repr__(self):
    return '<default>'


_DEFAULT = _Default()


class _CallRecord:
  def __init__(self, name, scope, args):
    self.name, self.scope, self.args = name, scope, args


class _OracleError(Exception):
  pass


def _make_stand_in(full_name, params, gin):
  short = full_name.rsplit('.', 1)[-1]
  names = [p['name'] for p in params]
  sig = ', '.join(n if p['required'] else n + '=_D' for n, p in zip(names, params))
  body = ', '.join('%r: %s' % (n, n) for n in names)
  src = 'def %s(%s):\n  return _rec(%r, _gin.current_scope_str(), {%s})\n' % (
      short, ('*, ' + sig) if sig else '', full_name, body)
  ns = {'_D': _DEFAULT, '_rec': _CallRecord, '_gin': gin}
  exec(src, ns)  # pylint: disable=exec-used
  fn = ns[short]
  fn.__module__ = full_name.rsplit('.', 1)[0] if '.' in full_name else '__main__'
  fn.__qualname__ = short
  return fn


def _module(name):
  import types
  parts = name.split('.')
  for i in range(1, len(parts) + 1):
    n = '.'.join(parts[:i])
    if n not in sys.modules:
      m = types.ModuleType(n)
      sys.modules[n] = m
      if i > 1:
        setattr(sys.modules['.'.join(parts[:i - 1])], parts[i - 1], m)
  return sys.modules[name]


def _serialize(v, gin, expanding):
  if v is _DEFAULT:
    return {'default': True}
  if v is gin.REQUIRED:
    raise _OracleError('a %gin.REQUIRED value reaches a call')
  if v is None or isinstance(v, (bool, int, float, str)):
    return v
  if isinstance(v, list):
    return {'list': [_serialize(x, gin, expanding) for x in v]}
  if isinstance(v, tuple):
    return {'tuple': [_serialize(x, gin, expanding) for x in v]}
  if isinstance(v, dict):
    return {'dict': [[_serialize(k, gin, expanding), _serialize(x, gin, expanding)]
                     for k, x in v.items()]}
  if isinstance(v, _CallRecord):
    return {'call': _serialize_call(v, gin, expanding)}
  if callable(v):
    rec = v()  # called later, at top level, with no arguments
    if not isinstance(rec, _CallRecord):
      raise _OracleError('callable returned %r' % (rec,))
    key = (rec.name, rec.scope)
    if key in expanding:
      return {'callable': {'fn': rec.name, 'scope': rec.scope, 'recursive': True}}
    return {'callable': _serialize_call(rec, gin, expanding + [key])}
  raise _OracleError('unexpected value %r' % (v,))


def _serialize_call(rec, gin, expanding):
  return {'fn': rec.name, 'scope': rec.scope,
          'args': {k: _serialize(rec.args[k], gin, expanding) for k in sorted(rec.args)}}


def _gin_worker(registry_path, dynamic):
  """Reads cases (JSON lines) on stdin, writes results on stdout."""
  import gin  # pylint: disable=import-outside-toplevel
  with open(registry_path) as f:
    registry = json.load(f)['configurables']
  fns = {}
  names = {c['name'] for c in registry}
  # Classes before their methods: a configurable named '<class>.<method>'
  # (t5x.models.EncoderDecoderModel.predict_batch_with_aux) is the method
  # of configurable <class>, registered as gin registers a method: the
  # class's module, qualified name 'Class.method'.
  for c in sorted(registry, key=lambda c: c['name'].count('.')):
    fn = _make_stand_in(c['name'], c['params'], gin)
    module = c['name'].rsplit('.', 1)[0] if '.' in c['name'] else '__main__'
    owner = None
    if module in names:
      owner = module
      module = owner.rsplit('.', 1)[0] if '.' in owner else '__main__'
      fn.__qualname__ = fns[owner].__qualname__ + '.' + fn.__qualname__
      fn.__module__ = module
    if dynamic:
      # As t5x registers train() (gin.configurable in __main__) and the
      # modules it imports register theirs: the config reaches them through
      # its import aliases.
      if owner:
        setattr(fns[owner], c['name'].rsplit('.', 1)[1], fn)
      else:
        setattr(_module(module), fn.__qualname__, fn)
      fns[c['name']] = gin.configurable(fn.__qualname__, module=module)(fn)
    else:
      fns[c['name']] = gin.external_configurable(fn, name=fn.__qualname__, module=module)
  home = os.getcwd()
  for line in sys.stdin:
    case = json.loads(line)
    out = {'id': case['id']}
    with tempfile.TemporaryDirectory() as d:
      for name, text in case.get('files', {}).items():
        os.makedirs(os.path.dirname(os.path.join(d, name)) or d, exist_ok=True)
        with open(os.path.join(d, name), 'w', encoding='utf-8') as f:
          f.write(text)
      os.chdir(d)
      try:
        gin.config._set_config_is_locked(False)  # pylint: disable=protected-access
        gin.clear_config()
        gin.parse_config_files_and_bindings(case.get('parse', []), case.get('bindings', []),
                                            finalize_config=True)
        calls = []
        for root in case['roots']:
          calls.append(_serialize_call(fns[root](), gin, []))
        out.update(ok=True, calls=calls)
      except (Exception, RecursionError) as e:  # pylint: disable=broad-except
        out.update(ok=False, error='%s: %s' % (type(e).__name__, str(e).splitlines()[0][:300]))
      finally:
        os.chdir(home)
    sys.stdout.write(json.dumps(out) + '\n')
    sys.stdout.flush()


# ---------------------------------------------------------------------------
# The random configs.

MODULES = ['pkg.a', 'pkg.b', 'other']
# (module, name, params): `f` is in two modules (a bare `f` is ambiguous).
CONFIGURABLES = [
    ('pkg.a', 'f', ['x', 'y', 'z']),
    ('pkg.b', 'f', ['x', 'w']),
    ('pkg.a', 'Model', ['net', 'vocab', 'rate']),
    ('pkg.b', 'Net', ['cfg', 'depth', 'act']),
    ('other', 'Cfg', ['size', 'names', 'extra']),
    ('other', 'g', ['x', 'fn']),
    ('pkg.a', 'Feature', ['vocabulary', 'add_eos']),
    ('pkg.b', 'Task', ['features', 'preprocessors', 'name']),
]
REQUIRED_PARAMS = {('other', 'Cfg', 'size')}
# Per file: 'x' is pkg.a in one file and pkg.b in another (gin's imports
# belong to the file that makes them).
ALIASES = {'pkg.a': ['a', 'pa', 'x'], 'pkg.b': ['b', 'x'], 'other': ['other', 'o']}
SCOPES = ['s', 't', 'u', 's/t', 't/s', 'Q']
MACROS = ['A', 'B', 'C', 'Q']  # 'Q' is a scope too: %Q's calls run in scope Q


def synthetic_registry():
  return {'configurables': [
      {'name': '%s.%s' % (m, n),
       'params': [{'name': p, 'required': (m, n, p) in REQUIRED_PARAMS} for p in ps]}
      for m, n, ps in CONFIGURABLES]}


class Generator:
  """Random gin files over the synthetic registry, from one seed."""

  def __init__(self, seed):
    self.r = random.Random(seed)

  def name(self, conf):
    m, n, _ = conf
    if self.dynamic:
      return '%s.%s' % (self.r.choice(self.imported[m]), n)
    k = self.r.random()  # a bare `f` is ambiguous: rarely
    return '%s.%s' % (m, n) if k < 0.45 else n if k > 0.93 else '%s.%s' % (m.split('.')[-1], n)

  def macro_use(self):
    if self.defined and self.r.random() < 0.97:
      return self.r.choice(sorted(self.defined))
    return self.scope(0.15) + self.r.choice(MACROS)  # maybe undefined

  def scope(self, p=0.5):
    return self.r.choice(SCOPES) + '/' if self.r.random() < p else ''

  def literal(self):
    k = self.r.randrange(9)
    if k == 0:
      return self.r.choice(['None', 'True', 'False'])
    if k == 1:
      return str(self.r.randrange(-50, 1000))
    if k == 2:
      return self.r.choice(['1.5', '-2e-3', '1e10', '0.0', '3.', '1_000', '0x1F'])
    if k == 3:
      return self.r.choice(["'abc'", '"x y"', "'it\\'s'", "'a' 'b'", "'\\n\\t'", "'é'", "''"])
    return str(self.r.randrange(10))

  def value(self, depth=0):
    k = self.r.randrange(12)
    if depth >= 3 or k < 3:
      return self.literal()
    if k == 3:
      return '[' + ', '.join(self.value(depth + 1) for _ in range(self.r.randrange(4))) + ']'
    if k == 4:
      n = self.r.randrange(4)
      items = [self.value(depth + 1) for _ in range(n)]
      return '(' + ', '.join(items) + (',' if n == 1 else '') + ')'
    if k == 5:
      keys = [self.r.choice(["'k'", "'j'", '1', '2', "'k'"]) for _ in range(self.r.randrange(4))]
      return '{' + ', '.join('%s: %s' % (key, self.value(depth + 1)) for key in keys) + '}'
    if k in (6, 7, 8):
      conf = self.r.choice(CONFIGURABLES)
      return '@' + self.scope(0.5) + self.name(conf) + ('()' if self.r.random() < 0.7 else '')
    if k in (9, 10):
      return '%' + self.macro_use()
    return '%gin.REQUIRED' if self.r.random() < 0.15 else self.literal()

  def binding(self, conf=None):
    conf = conf or self.r.choice(CONFIGURABLES)
    param = self.r.choice(conf[2] + (['nope'] if self.r.random() < 0.005 else []))
    return '%s%s.%s = %s' % (self.scope(0.4), self.name(conf), param, self.value())

  def statement(self):
    k = self.r.randrange(10)
    if k < 5:
      return self.binding()
    if k < 8:
      name = self.r.choice(sorted(self.defined)) if self.defined else 'A'
      self.emitted.add(name)
      return '%s = %s' % (name, self.value())
    if k == 8:
      conf = self.r.choice(CONFIGURABLES)
      lines = ['%s%s:' % (self.scope(0.3), self.name(conf))]
      for p in self.r.sample(conf[2], self.r.randrange(1, len(conf[2]) + 1)):
        lines.append('  %s = %s' % (p, self.value()))
      return '\n'.join(lines)
    return None  # an include, placed by the caller

  def header(self):
    if not self.dynamic:
      return []
    lines = ['from __gin__ import dynamic_registration']
    for m in MODULES:
      alias = self.imported[m][0]
      if '.' in m:
        parent, leaf = m.rsplit('.', 1)
        lines.append('from %s import %s' % (parent, leaf) if alias == leaf
                     else 'import %s as %s' % (m, alias))
      else:
        lines.append('import %s' % m if alias == m else 'import %s as %s' % (m, alias))
    return lines

  def choose_imports(self):
    while True:
      self.imported = {m: [self.r.choice(ALIASES[m])] for m in MODULES}
      if len({v[0] for v in self.imported.values()}) == len(MODULES):
        return

  def case(self, i):
    self.dynamic = self.r.random() < 0.4
    self.defined = {self.scope(0.15) + m for m in MACROS if self.r.random() < 0.6}
    self.emitted = set()
    files = {}
    n_inc = self.r.randrange(3)
    for j in range(n_inc):
      self.choose_imports()
      body = [s for s in (self.statement() for _ in range(self.r.randrange(1, 5))) if s]
      if self.r.random() < 0.1:
        body.append("include 'inc%d.gin'" % self.r.randrange(n_inc))  # may be a cycle
      files['inc%d.gin' % j] = '\n'.join(self.header() + body) + '\n'
    self.choose_imports()
    body = []
    for _ in range(self.r.randrange(3, 14)):
      s = self.statement()
      if s is None:
        s = "include 'inc%d.gin'" % self.r.randrange(n_inc) if n_inc else self.binding()
      body.append(s)
    if self.r.random() < 0.85:  # other.Cfg.size is required: usually bound
      body.insert(self.r.randrange(len(body) + 1),
                  '%s.size = %s' % (self.name(CONFIGURABLES[4]), self.literal()))
    for m in sorted(self.defined - self.emitted):
      body.append('%s = %s' % (m, self.value(1)))  # every macro it uses is defined
    files['main.gin'] = '\n'.join(self.header() + body) + '\n'
    bindings = []
    if self.r.random() < 0.3:
      # gin joins the command-line bindings into one text: one header.
      hdr = self.header()
      for _ in range(self.r.randrange(1, 3)):
        s = self.statement() or self.binding()
        bindings.append('\n'.join(hdr + [s]) if hdr and not bindings else s)
    roots = sorted({'%s.%s' % c[:2] for c in self.r.sample(CONFIGURABLES, self.r.randrange(1, 3))})
    return {'id': 'random-%d' % i, 'files': files, 'parse': ['main.gin'],
            'bindings': bindings, 'roots': roots, 'operative': True,
            'mode': 'dynamic' if self.dynamic else 'static'}


# ---------------------------------------------------------------------------
# Comparing.

STATS = {}


def same(a, b):
  """Deep equality with types (1 and 1.0, True and 1 differ)."""
  if type(a) is not type(b):
    return False
  if isinstance(a, dict):
    return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
  if isinstance(a, list):
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
  return a == b


def defaults_as_none(v):
  """t5xx's operative config writes a default it read as the value."""
  if isinstance(v, dict):
    if v == {'default': True}:
      return None
    return {k: defaults_as_none(x) for k, x in v.items()}
  if isinstance(v, list):
    return [defaults_as_none(x) for x in v]
  return v


def run_worker(cmd, cases):
  if not cases:
    return {}
  p = subprocess.run(cmd, input=''.join(json.dumps(c) + '\n' for c in cases),
                     capture_output=True, text=True, check=False)
  if p.returncode != 0:
    sys.exit('%s failed (%d):\n%s' % (' '.join(cmd), p.returncode, p.stderr[-3000:]))
  results = {}
  for line in p.stdout.splitlines():
    r = json.loads(line)
    results[r['id']] = r
  return results


def gin_results(cases, registry_path):
  out = {}
  for mode in ('static', 'dynamic'):
    sub = [c for c in cases if c.get('mode', 'dynamic') == mode]
    out.update(run_worker([sys.executable, __file__, '--gin_worker', '--registry', registry_path,
                           '--mode', mode], sub))
  return out


def describe(case):
  text = ''
  for name in sorted(case.get('files', {})):
    text += '--- %s\n%s' % (name, case['files'][name])
  for b in case.get('bindings', []):
    text += '--- binding\n%s\n' % b
  return text + '--- roots %s (%s mode)\n' % (case['roots'], case.get('mode', 'dynamic'))


def compare(cases, registry_path, tool, registry_arg):
  """Returns the cases that disagree, with why."""
  ours = run_worker([tool, '--registry=' + registry_arg], cases)
  theirs = gin_results(cases, registry_path)
  bad = []
  round_trip = []
  for c in cases:
    o, t = ours[c['id']], theirs[c['id']]
    if 'expect_error' in c:
      if o['ok'] or c['expect_error'] not in o['error']:
        bad.append((c, 'expected t5xx to refuse it with %r; t5xx: %s' % (c['expect_error'], o)))
      if t['ok']:
        bad.append((c, 'expected gin to refuse it; gin: %s' % t))
      continue
    if o['ok'] != t['ok']:
      bad.append((c, 't5xx %s, gin %s' % (
          'accepts' if o['ok'] else 'refuses: ' + o['error'],
          'accepts' if t['ok'] else 'refuses: ' + t['error'])))
    elif o['ok'] and not same(o['calls'], t['calls']):
      bad.append((c, 'calls differ:\n  t5xx %s\n  gin  %s' % (
          json.dumps(o['calls']), json.dumps(t['calls']))))
    elif o['ok'] and c.get('expect_calls') is not None and not same(o['calls'],
                                                                     c['expect_calls']):
      bad.append((c, 'calls differ from the expected ones:\n  got  %s\n  want %s' % (
          json.dumps(o['calls']), json.dumps(c['expect_calls']))))
    elif o['ok'] and c.get('operative'):
      round_trip.append(dict(id=c['id'], files={'operative.gin': o['operative']},
                             parse=['operative.gin'], roots=c['roots'], mode='static',
                             want=defaults_as_none(o['calls']), case=c))
  global STATS  # pylint: disable=global-statement
  STATS = {'accepted by both': sum(1 for c in cases if ours[c['id']]['ok'] and theirs[c['id']]['ok']),
           'refused by both': sum(1 for c in cases
                                  if not ours[c['id']]['ok'] and not theirs[c['id']]['ok'])}
  again = gin_results(round_trip, registry_path)
  for rt in round_trip:
    g = again[rt['id']]
    if not g['ok']:
      bad.append((rt['case'], 'gin refuses t5xx\'s operative config: %s\n%s' % (
          g['error'], rt['files']['operative.gin'])))
    elif not same(defaults_as_none(g['calls']), rt['want']):
      bad.append((rt['case'], 'gin calls differently from t5xx\'s operative config:\n'
                  '  want %s\n  gin  %s\n%s' % (json.dumps(rt['want']), json.dumps(g['calls']),
                                               rt['files']['operative.gin'])))
  return bad


def load_cases(folder):
  cases = []
  if folder and os.path.isdir(folder):
    for name in sorted(os.listdir(folder)):
      if name.endswith('.json'):
        with open(os.path.join(folder, name)) as f:
          case = json.load(f)
        case.setdefault('id', name)
        cases.append(case)
  return cases


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument('--gin_worker', action='store_true')
  ap.add_argument('--registry')
  ap.add_argument('--mode', default='static')
  ap.add_argument('--tool')
  ap.add_argument('--random', type=int, default=1000)
  ap.add_argument('--seed', type=int, default=1)
  ap.add_argument('--corpus')
  ap.add_argument('--regressions')
  ap.add_argument('--keep', default=os.getcwd(), help='where disagreeing random cases go')
  args = ap.parse_args()
  if args.gin_worker:
    _gin_worker(args.registry, args.mode == 'dynamic')
    return 0
  try:
    import gin  # pylint: disable=import-outside-toplevel,unused-import
  except ImportError:
    print('SKIP: gin-config is not installed (pip install gin-config)')
    return 77
  bad = []
  with tempfile.TemporaryDirectory() as d:
    # The corpus: t5xx's own registry, its stand-ins from the tool.
    t5xx_registry = os.path.join(d, 't5xx_registry.json')
    with open(t5xx_registry, 'w') as f:
      f.write(subprocess.run([args.tool, '--registry=t5xx', '--dump_registry'],
                             capture_output=True, text=True, check=True).stdout)
    corpus = load_cases(args.corpus)
    bad += compare(corpus, t5xx_registry, args.tool, 't5xx')
    # Random configs and kept regressions: the synthetic registry.
    synthetic = os.path.join(d, 'synthetic_registry.json')
    with open(synthetic, 'w') as f:
      json.dump(synthetic_registry(), f)
    gen = Generator(args.seed)
    cases = [gen.case(i) for i in range(args.random)]
    regressions = load_cases(args.regressions)
    random_bad = compare(cases + regressions, synthetic, args.tool, synthetic)
    bad += random_bad
    stats = STATS
  for case, why in bad:
    print('DISAGREE %s: %s\n%s' % (case['id'], why, describe(case)))
  kept = []
  for case, _ in bad:
    if case['id'].startswith('random-'):
      path = os.path.join(args.keep, 'gin_oracle_%s_seed%d.json' % (case['id'], args.seed))
      with open(path, 'w') as f:
        json.dump({k: v for k, v in case.items() if k != 'id'}, f, indent=1)
      kept.append(path)
  if kept:
    print('kept %d disagreeing cases (copy them to %s):\n  %s' % (
        len(kept), args.regressions, '\n  '.join(kept)))
  print('gin oracle: %d corpus cases, %d random (seed %d; %d accepted by both, %d refused by '
        'both), %d regressions; %d disagreements' % (
            len(corpus), len(cases), args.seed, stats['accepted by both'],
            stats['refused by both'], len(regressions), len(bad)))
  return 1 if bad else 0


if __name__ == '__main__':
  sys.exit(main())
