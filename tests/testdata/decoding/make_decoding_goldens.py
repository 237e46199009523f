#!/usr/bin/env python3
"""Makes decoding_goldens.json: t5x's own decoding.py run on toy models.

t5x's decoding.temperature_sample and decoding.beam_search (imported
unchanged from a t5x checkout; t5x/__init__.py is bypassed with an empty
package whose __path__ is the checkout's t5x/ folder, so only decoding.py
and binary_search.py load) decode a batch over a deterministic toy
tokens_to_logits. tests/decoding/goldens_test.cc runs t5xx's decoding over
the same toy model and compares sequences (exactly), scores (to float32
rounding) and the number of tokens_to_logits calls (the loop's step count:
the script runs t5x under jax.disable_jit(), so lax.while_loop calls its body
once per step, and checks that the jitted run gives the same results).

The toy model (the C++ test implements the same arithmetic):
  cache = {'acc': int32 [B], 'step': int32 [B]}   (per example, given)
  logits = table[min(step, P - 1), cur_token, :] + acc_table[acc, :]
  acc'   = (3 * acc + cur_token + 1) % K,   step' = step + 1
so the logits depend on the whole prefix through the cache, and beam search
gives wrong answers unless the cache follows the surviving beams. Tables are
float32 draws from numpy's default_rng(seed) (stored in the JSON, so the C++
side needs no RNG); token 1 is EOS, made likelier at later positions by
`eos_ramp`.

Sampling at temperature > 0 draws from JAX's PRNG, which t5xx cannot and does
not reproduce: the temperature_sample cases here are deterministic ones
(temperature 0, topk = 1, or a topp so small that only the top token
survives); tests/decoding/temperature_sample_test.cc checks sampling
statistically.

Environment: Python 3.11 venv ~/.cache/t5xx/t5x-venv with jax 0.4.31, jaxlib
0.4.31, flax 0.8.5, numpy 1.26 (CPU); t5x checkout at commit
cc342d419ec3e3e9c4bf1df33c82330cafdc1e16 at $T5X_DIR (default
/work/t5x-ref). Command, from the repository root:

  T5X_DIR=/work/t5x-ref ~/.cache/t5xx/t5x-venv/bin/python \\
      tests/testdata/decoding/make_decoding_goldens.py \\
      > tests/testdata/decoding/decoding_goldens.json
"""

import json
import os
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np

T5X_DIR = os.environ.get('T5X_DIR', '/work/t5x-ref')
_pkg = types.ModuleType('t5x')
_pkg.__path__ = [os.path.join(T5X_DIR, 't5x')]
sys.modules['t5x'] = _pkg
from t5x import decoding  # pylint: disable=g-import-not-at-top

EOS = 1


def make_model(name, vocab, positions, acc_mod, seed, eos_ramp):
  rng = np.random.default_rng(seed)
  table = (rng.standard_normal((positions, vocab, vocab)) * 1.5)
  table[:, :, EOS] += eos_ramp * np.arange(positions)[:, None]
  acc_table = rng.standard_normal((acc_mod, vocab))
  return {
      'name': name,
      'vocab': vocab,
      'positions': positions,
      'acc_mod': acc_mod,
      'table': table.astype(np.float32),
      'acc_table': acc_table.astype(np.float32),
  }


MODELS = [
    make_model('v8', 8, 12, 7, 1, 0.25),
    make_model('v5', 5, 12, 5, 2, 0.2),
    make_model('v8eos', 8, 12, 7, 3, 0.9),
]


def tokens_to_logits_fn(model, counter):
  table = jnp.asarray(model['table'])
  acc_table = jnp.asarray(model['acc_table'])
  positions, acc_mod = model['positions'], model['acc_mod']

  def fn(state):
    counter[0] += 1
    cache = state.cache
    token = state.cur_token.reshape(-1)
    step = jnp.minimum(cache['step'], positions - 1)
    logits = table[step, token] + acc_table[cache['acc']]
    new_cache = {
        'acc': (3 * cache['acc'] + token + 1) % acc_mod,
        'step': cache['step'] + 1,
    }
    return logits, new_cache

  return fn


def run(case, model, jit):
  counter = [0]
  fn = tokens_to_logits_fn(model, counter)
  inputs = jnp.asarray(case['inputs'], jnp.int32)
  cache = {
      'acc': jnp.asarray(case['acc'], jnp.int32),
      'step': jnp.asarray(case['step'], jnp.int32),
  }
  kwargs = dict(case['kwargs'])
  if case.get('initial_index') is not None:
    kwargs['initial_index'] = jnp.asarray(case['initial_index'], jnp.int32)
  if isinstance(kwargs.get('temperature'), list):
    kwargs['temperature'] = jnp.asarray(kwargs['temperature'], jnp.float32)
  decode = getattr(decoding, case['fn'])

  def go(inputs, cache):
    return decode(inputs, cache, fn, EOS, **kwargs)

  if jit:
    seqs, scores = jax.jit(go)(inputs, cache)
  else:
    with jax.disable_jit():
      seqs, scores = go(inputs, cache)
  return np.asarray(seqs), np.asarray(scores), counter[0]


def case(name, fn, model, inputs, acc, step=None, initial_index=None, **kwargs):
  return {
      'name': name,
      'fn': fn,
      'model': model,
      'inputs': inputs,
      'acc': acc,
      'step': step if step is not None else (initial_index or [0] * len(inputs)),
      'initial_index': initial_index,
      'kwargs': kwargs,
  }


Z7 = [[0] * 7] * 3
CASES = [
    # temperature_sample: deterministic settings only (see the docstring).
    case('ts_greedy', 'temperature_sample', 'v8', Z7, [0, 3, 5]),
    case('ts_greedy_rescale_false', 'temperature_sample', 'v8', Z7, [0, 3, 5],
         rescale_log_probs=False),
    case('ts_zero_temperature_num_decodes3', 'temperature_sample', 'v8',
         [[0] * 6] * 2, [1, 4], num_decodes=3, temperature=0.0,
         rescale_log_probs=False),
    case('ts_forced_prompt', 'temperature_sample', 'v8',
         [[0, 4, 5, 0, 0, 0, 0], [0, 3, 1, 6, 0, 0, 0], [0, 0, 2, 0, 0, 0, 0]],
         [2, 2, 6], rescale_log_probs=False),
    case('ts_prefill', 'temperature_sample', 'v8',
         [[0, 5, 2, 6, 1, 0], [0, 7, 1, 0, 0, 0]], [3, 1],
         initial_index=[4, 2], rescale_log_probs=False),
    case('ts_prefill_max_decode_steps', 'temperature_sample', 'v8',
         [[0, 2, 0, 0, 0, 0, 0, 0], [0, 3, 4, 0, 0, 0, 0, 0]], [0, 6],
         initial_index=[1, 2], max_decode_steps=2, num_decodes=2,
         rescale_log_probs=False),
    case('ts_max_decode_steps', 'temperature_sample', 'v8',
         [[0, 0, 0, 0, 0, 0, 0], [0, 6, 0, 0, 0, 0, 0]], [5, 2],
         max_decode_steps=3, rescale_log_probs=False),
    case('ts_tiny_topp', 'temperature_sample', 'v8', Z7, [0, 3, 5], topk=0,
         topp=0.05, temperature=0.7),
    case('ts_tiny_topp_rescale_false', 'temperature_sample', 'v8', Z7,
         [0, 3, 5], topk=0, topp=0.05, temperature=0.7,
         rescale_log_probs=False),
    case('ts_per_example_temperature', 'temperature_sample', 'v8', Z7,
         [0, 3, 5], temperature=[0.0, 1.0, 0.5], num_decodes=2,
         rescale_log_probs=False),
    case('ts_eos_heavy', 'temperature_sample', 'v8eos', [[0] * 8] * 3,
         [0, 1, 2], rescale_log_probs=False),
    # beam_search.
    case('bs_beams1', 'beam_search', 'v8', [[0] * 6] * 2, [0, 4],
         num_decodes=1),
    case('bs_beams4', 'beam_search', 'v8', Z7, [0, 3, 5], num_decodes=4),
    case('bs_beams3_alpha0_max_decode_len5', 'beam_search', 'v8', Z7,
         [1, 2, 6], num_decodes=3, alpha=0.0, max_decode_len=5),
    case('bs_beams2_alpha2', 'beam_search', 'v8', Z7, [0, 3, 5],
         num_decodes=2, alpha=2.0),
    case('bs_vocab5_beams4', 'beam_search', 'v5', [[0] * 6] * 2, [0, 3],
         num_decodes=4),
    case('bs_forced_prompt', 'beam_search', 'v8',
         [[0, 4, 5, 0, 0, 0, 0], [0, 3, 1, 6, 0, 0, 0], [0, 0, 2, 0, 0, 0, 7]],
         [2, 2, 6], num_decodes=3),
    case('bs_prefill', 'beam_search', 'v8',
         [[0, 5, 2, 6, 0, 0, 0, 0], [0, 7, 0, 0, 0, 0, 0, 0]], [3, 1],
         initial_index=[3, 1], num_decodes=3),
    case('bs_min_log_prob', 'beam_search', 'v8', Z7, [0, 3, 5], num_decodes=3,
         min_log_prob=-4.0),
    case('bs_max_decode_step', 'beam_search', 'v8', Z7, [0, 3, 5],
         num_decodes=3, max_decode_step=2),
    case('bs_eos_heavy', 'beam_search', 'v8eos', [[0] * 8] * 3, [0, 1, 2],
         num_decodes=4, alpha=0.6),
    case('bs_eos_heavy_alpha0', 'beam_search', 'v8eos', [[0] * 8] * 3,
         [0, 1, 2], num_decodes=4, alpha=0.0),
]


def main():
  models = {m['name']: m for m in MODELS}
  out_cases = []
  for c in CASES:
    model = models[c['model']]
    seqs, scores, calls = run(c, model, jit=False)
    jseqs, jscores, _ = run(c, model, jit=True)
    assert np.array_equal(seqs, jseqs), c['name']
    np.testing.assert_allclose(scores, jscores, rtol=1e-5, atol=1e-4)
    out = dict(c)
    out['expected_sequences'] = seqs.tolist()
    out['expected_scores'] = [[float(v) for v in row] for row in scores]
    out['expected_calls'] = calls
    out_cases.append(out)
  json_models = [{
      'name': m['name'],
      'vocab': m['vocab'],
      'positions': m['positions'],
      'acc_mod': m['acc_mod'],
      'table': [float(v) for v in m['table'].reshape(-1)],
      'acc_table': [float(v) for v in m['acc_table'].reshape(-1)],
  } for m in MODELS]
  json.dump({'eos_id': EOS, 'models': json_models, 'cases': out_cases},
            sys.stdout, indent=None, separators=(',', ':'))
  sys.stdout.write('\n')


if __name__ == '__main__':
  main()
