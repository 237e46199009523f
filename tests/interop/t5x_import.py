"""Imports t5x's modules from a t5x checkout (T5X_DIR) for the interop scripts.

t5x is not installable from PyPI (the package there is an empty placeholder),
so its modules come from a checkout of github.com/google-research/t5x. The
package's t5x/__init__.py imports everything (trainer, infer, ...); like
tests/models/parity/make_goldens.py we bypass it with an empty package whose
__path__ is the checkout's t5x/ folder, so only the modules asked for (and
what they import) load.

One module is stubbed: `airio` (airio.core), which t5x/utils.py imports but
which is not on PyPI. The interop scripts need t5x/utils.py only because
t5x/adafactor.py imports it for `flatten_dict_string_keys`; airio is used by
utils.py's dataset helpers alone, which nothing here calls. The stub's
classes exist so that utils.py's annotations and isinstance checks evaluate.
Everything else (seqio, tensorflow, orbax, tensorstore, flax, jax) is real.
One name is re-exported for an old dependency: see import_t5x.
"""

import importlib
import os
import sys
import types

T5X_COMMIT = 'cc342d419ec3e3e9c4bf1df33c82330cafdc1e16'


class T5xUnavailable(Exception):
  """t5x's checkout or one of its Python dependencies is missing."""


def _stub_airio():
  try:
    importlib.import_module('airio.core')
    return  # the real one is installed
  except ImportError:
    pass
  core = types.ModuleType('airio.core')
  for name in ('Task', 'Mixture', 'AirIODatasetIterator', 'DatasetProviderBase'):
    setattr(core, name, type(name, (), {}))

  def _unavailable(*args, **kwargs):
    raise NotImplementedError('airio is stubbed (tests/interop/t5x_import.py)')

  core.dataset_providers = types.SimpleNamespace(get_vocabularies=_unavailable)
  pkg = types.ModuleType('airio')
  pkg.__path__ = []
  pkg.core = core
  sys.modules['airio'] = pkg
  sys.modules['airio.core'] = core


def import_t5x(t5x_dir=None, modules=('checkpoints',)):
  """Returns {name: module} for t5x.<name> of each name in modules.

  Raises T5xUnavailable (with the reason) when the checkout or a dependency
  is missing.
  """
  t5x_dir = t5x_dir or os.environ.get('T5X_DIR', '')
  pkg_dir = os.path.join(t5x_dir, 't5x')
  if not t5x_dir or not os.path.isfile(os.path.join(pkg_dir, 'checkpoints.py')):
    raise T5xUnavailable(
        f'no t5x checkout at T5X_DIR={t5x_dir!r} (expected t5x/checkpoints.py '
        f'there; github.com/google-research/t5x at {T5X_COMMIT})')
  try:
    import jax  # pylint: disable=g-import-not-at-top
    jax.config.update('jax_platforms', 'cpu')
    jax.config.update('jax_enable_x64', False)
    jax.config.update('jax_default_matmul_precision', 'float32')
  except ImportError as e:
    raise T5xUnavailable(f'cannot import jax: {e}') from e
  # jestimator 0.3.3 (PyPI's newest; t5x/optimizers.py imports it for the
  # Amos optimizer, which nothing here uses) imports PartitionSpec from
  # jax.experimental.pjit, where jax >= 0.4.2x no longer re-exports it.
  import jax.experimental.pjit  # pylint: disable=g-import-not-at-top
  import jax.sharding  # pylint: disable=g-import-not-at-top
  if not hasattr(jax.experimental.pjit, 'PartitionSpec'):
    jax.experimental.pjit.PartitionSpec = jax.sharding.PartitionSpec
  if 't5x' not in sys.modules:
    stub = types.ModuleType('t5x')
    stub.__path__ = [pkg_dir]
    sys.modules['t5x'] = stub
  _stub_airio()
  out = {}
  for name in modules:
    try:
      out[name] = importlib.import_module('t5x.' + name)
    except ImportError as e:
      raise T5xUnavailable(f'cannot import t5x.{name}: {e}') from e
  return out


def fix_orbax_restore_param_paths(checkpoint_utils):
  """Makes t5x's Orbax restore work with orbax-checkpoint 0.6.4.

  t5x's OrbaxCheckpointManagerInterface.restore builds the ParamInfos of the
  arrays to read with t5x.checkpoint_utils.get_restore_parameters. Until t5x
  commit b4802c6 (2025-11-19, "Eliminate usages of `ParamInfo.path` in favor
  of `parent_dir / name`") that function set ParamInfo.path = parent_dir /
  name; the pinned commit no longer does, but orbax-checkpoint 0.6.4 (pinned
  in requirements.txt) still requires it: restoring any Orbax checkpoint
  fails in orbax/checkpoint/type_handlers.py _get_json_tspec with
  "ValueError: Must construct serialization path." This wrapper puts the
  removed line back (the value orbax 0.6.4's own PyTreeCheckpointHandler
  sets); nothing else of the restore changes. Opt-in: only the Orbax interop
  scripts call it, with the t5x.checkpoint_utils module they imported.
  """
  if getattr(checkpoint_utils.get_restore_parameters, '_t5xx_fixed', False):
    return
  import dataclasses  # pylint: disable=g-import-not-at-top
  import jax  # pylint: disable=g-import-not-at-top
  import orbax.checkpoint as ocp  # pylint: disable=g-import-not-at-top

  original = checkpoint_utils.get_restore_parameters

  def get_restore_parameters(directory, structure):
    def with_path(info):
      if isinstance(info, ocp.type_handlers.ParamInfo) and info.path is None:
        return dataclasses.replace(info, path=info.parent_dir / info.name)
      return info
    return jax.tree.map(
        with_path, original(directory, structure),
        is_leaf=lambda x: isinstance(x, ocp.type_handlers.ParamInfo))

  get_restore_parameters._t5xx_fixed = True  # pylint: disable=protected-access
  checkpoint_utils.get_restore_parameters = get_restore_parameters
