#!/usr/bin/env python3
"""Writes t5_preprocessor_goldens.json: t5's OWN preprocessors run on hand-made
examples, for tests/data/preprocessors/t5_catalog_preprocessors_test.cc.

Run (t5x's interop venv, TensorFlow + seqio 0.0.19 + t5's dependencies):
  PYTHONPATH=../shared/t5 ~/.cache/t5xx/t5x-venv/bin/python3 \
      tests/data/preprocessors/make_t5_preprocessor_goldens.py

Each case names a preprocessor (t5's Python name, as t5xx registers it), its
keyword arguments, the sequence_length, and the input examples in t5xx's
flattened form: a TFDS FeaturesDict's nested features are keys joined with
'/' ("answers/text"), and each value is either a JSON string (a tf.string
scalar) or {"dtype", "shape", "values"} (an array; int32 rank 1 is a token
list in t5xx). The script rebuilds the nested dicts TFDS gives seqio, runs
t5's function on a tf.data pipeline (tf.data.Dataset.from_generator), and
stores the outputs in the same flattened form -- or "error" with TF's
message when t5's function fails. Randomized steps run under
seqio.utils.map_seed_manager(42); the C++ test checks those by structure.
"""
import inspect
import json
import os
import sys

import numpy as np
import tensorflow as tf
import seqio
import t5.data.preprocessors as P

tf.get_logger().setLevel('ERROR')
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   't5_preprocessor_goldens.json')
VOCAB = seqio.PassThroughVocabulary(size=100, eos_id=1)


def S(x):
  return x


def A(dtype, values, shape=None):
  arr = np.array(values, dtype={'int32': np.int32, 'int64': np.int64,
                                'float32': np.float32, 'bool': np.bool_,
                                'string': object}[dtype])
  if shape is not None:
    arr = arr.reshape(shape)
  vals = arr.reshape(-1).tolist()  # Python ints/floats/strs
  if dtype == 'float32':
    vals = [float(np.float32(v)) for v in vals]
  return {'dtype': dtype, 'shape': list(arr.shape), 'values': vals}


def T(values):  # an int32 token list
  return A('int32', values, [len(values)])


def I64(v):
  return A('int64', v, [])


def I32(v):
  return A('int32', v, [])


def STRS(vs):
  return A('string', vs, [len(vs)])


def to_tf(v):
  if isinstance(v, str):
    return tf.constant(v)
  dt = {'int32': tf.int32, 'int64': tf.int64, 'float32': tf.float32,
        'bool': tf.bool, 'string': tf.string}[v['dtype']]
  if v['dtype'] == 'string':
    return tf.constant(np.array(v['values'], dtype=object).reshape(v['shape']),
                       dtype=tf.string)
  return tf.constant(np.array(v['values']).reshape(v['shape']), dtype=dt)


def nest(flat):
  out = {}
  for k, v in flat.items():
    parts = k.split('/')
    d = out
    for p in parts[:-1]:
      d = d.setdefault(p, {})
    d[parts[-1]] = to_tf(v)
  return out


def flatten(ex, prefix=''):
  out = {}
  for k, v in ex.items():
    key = prefix + k
    if isinstance(v, dict):
      out.update(flatten(v, key + '/'))
      continue
    v = np.asarray(v)
    if v.dtype == object or v.dtype.kind == 'S':
      if v.shape == ():
        out[key] = v.item().decode('utf-8')
      else:
        out[key] = {'dtype': 'string', 'shape': list(v.shape),
                    'values': [s.decode('utf-8') for s in v.reshape(-1)]}
    else:
      name = {np.dtype(np.int32): 'int32', np.dtype(np.int64): 'int64',
              np.dtype(np.float32): 'float32', np.dtype(np.bool_): 'bool'}[
                  v.dtype]
      out[key] = {'dtype': name, 'shape': list(v.shape),
                  'values': [x.item() for x in v.reshape(-1)]}
  return out


def spec_of(t):
  if isinstance(t, dict):
    return {k: spec_of(v) for k, v in t.items()}
  return tf.TensorSpec([None] * t.shape.rank, t.dtype)


def run(fn, examples):
  nested = [nest(e) for e in examples]
  sig = spec_of(nested[0])
  ds = tf.data.Dataset.from_generator(lambda: iter(nested),
                                      output_signature=sig)
  with seqio.utils.map_seed_manager(42):
    ds = fn(ds)
  return [flatten(e) for e in ds.as_numpy_iterator()]


CASES = []


def case(name, inputs, kwargs=None, sequence_length=None, note='',
         fn=None):
  kwargs = kwargs or {}
  short = name.split('.')[-1]
  def default_fn(ds):
    f = getattr(P, short)
    kw = dict(kwargs)
    if short in ('trivia_qa_truncate_inputs', 'targets_for_prefix_lm_objective'):
      kw['output_features'] = {'inputs': seqio.Feature(VOCAB),
                               'targets': seqio.Feature(VOCAB)}
    if sequence_length is not None:
      kw['sequence_length'] = sequence_length
    if short in ('pack_prefix_lm_encoder_decoder',
                 'pack_prefix_lm_decoder_only'):
      return f(ds, **kw)
    return f(ds, **kw)
  c = {'preprocessor': name, 'kwargs': kwargs, 'note': note,
       'inputs': inputs}
  if sequence_length is not None:
    c['sequence_length'] = sequence_length
  try:
    c['outputs'] = run(fn or default_fn, inputs)
  except Exception as e:  # pylint: disable=broad-except
    c['error'] = type(e).__name__ + ': ' + str(e).split('\n')[0][:200]
  CASES.append(c)


# ---------------------------------------------------------------- glue
MRPC = ['not_equivalent', 'equivalent']
case('t5.data.preprocessors.glue', [
    {'sentence1': 'Amrozi accused his brother .', 'sentence2': 'Referring to him as only " the witness " .', 'label': I64(1), 'idx': I32(0)},
    {'sentence1': 'Yucaipa owned Dominick \'s', 'sentence2': 'Café — naïve 日本', 'label': I64(0), 'idx': I32(1)},
    {'sentence1': 'test', 'sentence2': '', 'label': I64(-1), 'idx': I32(2)},
], {'benchmark_name': 'mrpc', 'label_names': MRPC}, note='sorted features, label -1, unicode')
case('t5.data.preprocessors.glue', [
    {'premise': 'P.', 'hypothesis': 'H.', 'label': I64(2), 'idx': I32(7)},
    {'premise': 'P2', 'hypothesis': 'H2', 'label': I64(-1), 'idx': I32(8)},
], {'benchmark_name': 'mnli', 'label_names': ['entailment', 'neutral', 'contradiction'], 'feature_names': None})
case('t5.data.preprocessors.glue', [
    {'sentence1': 'He ran.', 'sentence2': 'A run.', 'word': 'run', 'start1': I32(3), 'end1': I32(6), 'start2': I32(2), 'end2': I32(5), 'label': I64(1), 'idx': I32(4)},
], {'benchmark_name': 'wic', 'label_names': ['False', 'True'], 'feature_names': ['sentence1', 'sentence2', 'word']}, note='wic: explicit order, ints ignored')
case('t5.data.preprocessors.glue', [
    {'question': 'Who?', 'answer': 'Bob', 'paragraph': 'Sent 1: <b>Bob</b> went.<br>Sent 2: He <b>left</b>.', 'idx/paragraph': I32(0), 'idx/question': I32(1), 'idx/answer': I32(2), 'label': I64(1)},
    {'question': 'Why <br> not?', 'answer': 'x', 'paragraph': '<b/>p</b>', 'idx/paragraph': I32(5), 'idx/question': I32(6), 'idx/answer': I32(7), 'label': I64(-1)},
], {'benchmark_name': 'multirc', 'label_names': ['False', 'True'], 'feature_names': ['question', 'answer', 'paragraph']}, note='multirc: markup and nested idx')
case('t5.data.preprocessors.glue', [
    {'sentence': 'Our friends won\'t buy this analysis.', 'label': I64(1), 'idx': I32(0)},
], {'benchmark_name': 'cola', 'label_names': ['unacceptable', 'acceptable'], 'id_key': None}, note='id_key None: no idx')
case('t5.data.preprocessors.glue', [
    {'question': 'is it?', 'passage': 'It is.', 'label': I64(0), 'idx': I32(3)},
], {'benchmark_name': 'boolq', 'label_names': ['False', 'True'], 'feature_names': [], 'id_key': 'question'}, note='feature_names [] sorts; id_key another feature')
case('t5.data.preprocessors.glue', [
    {'question': 'is it?', 'passage': 'It is.', 'label': I64(0), 'idx': I32(3), 'extra': I64(99)},
], {'benchmark_name': 'boolq', 'label_names': ['False', 'True']}, note='a non-text feature in the sorted join: t5 fails')
case('t5.data.preprocessors.glue', [
    {'sentence': 'x', 'label': I64(2), 'idx': I32(0)},
], {'benchmark_name': 'sst2', 'label_names': ['negative', 'positive']}, note='label out of range')

# ---------------------------------------------------------------- stsb
case('t5.data.preprocessors.stsb', [
    {'sentence1': 'A man is playing a flute.', 'sentence2': 'A man plays a flute.', 'label': A('float32', v, []), 'idx': I32(i)}
    for i, v in enumerate([3.8, 1.7, 4.99, 0.0, -1.0, 2.1, 0.45, -0.05, 5.0, 0.5, 2.3, 0.1])
], note='rounding to 0.2 (half to even), test label -1')

# ---------------------------------------------------------------- record
case('t5.data.preprocessors.record', [
    {'passage': 'The cat sat.\n@highlight\nCats like mats\n@highlight\nDogs bark!\n@highlight\nEnd', 'query': 'A @placeholder sat.', 'entities': STRS(['cat', 'mat', 'Dogs']), 'answers': STRS(['cat', 'Cat']), 'idx/passage': I32(3), 'idx/query': I32(4)},
    {'passage': 'No highlights here.', 'query': '@placeholder ran', 'entities': STRS(['x']), 'answers': STRS([]), 'idx/passage': I32(5), 'idx/query': I32(6)},
    {'passage': 'Één.\n@highlight\n\n@highlight\nTwo', 'query': 'q', 'entities': STRS(['Één', 'Two', 'Three']), 'answers': STRS(['Two']), 'idx/passage': I32(7), 'idx/query': I32(8)},
], note='one example per answer; none -> <unk>')

# ---------------------------------------------------------------- squad
SQ = [
    {'id': 'a1', 'title': 'T', 'context': 'The cat (Felis catus) is a small, carnivorous mammal.', 'question': 'What is the cat\'s name?', 'answers/text': STRS(['Felis catus', 'catus']), 'answers/answer_start': A('int32', [9, 15], [2])},
    {'id': 'a2', 'title': 'T', 'context': '  Ünïcode — text…  with\ttabs\nand "quotes".', 'question': ' Where?? ', 'answers/text': STRS(['"quotes"']), 'answers/answer_start': A('int32', [30], [1])},
    {'id': 'a3', 'title': 'T', 'context': 'Beyoncé Giselle Knowles-Carter (born 1981) is a singer.', 'question': 'When was Beyoncé born?', 'answers/text': STRS(['1981', 'in 1981']), 'answers/answer_start': A('int32', [37, 34], [2])},
    {'id': 'a4', 'title': 'T', 'context': 'Answer at the end is Paris', 'question': 'Where?', 'answers/text': STRS(['Paris']), 'answers/answer_start': A('int32', [21], [1])},
    {'id': 'a5', 'title': 'T', 'context': 'Nothing here.', 'question': 'Q?', 'answers/text': STRS(['absent answer']), 'answers/answer_start': A('int32', [0], [1])},
    {'id': 'a6', 'title': 'T', 'context': 'Answer at the end is Paris.', 'question': 'Where?', 'answers/text': STRS(['Paris']), 'answers/answer_start': A('int32', [21], [1])},
    {'id': 'a7', 'title': 'T', 'context': 'Le café coûte 2€ à Zürich', 'question': 'Coût?', 'answers/text': STRS(['2€ à Zürich']), 'answers/answer_start': A('int32', [0], [1])},
    {'id': 'a8', 'title': 'T', 'context': 'x', 'question': 'Q?', 'answers/text': STRS(['']), 'answers/answer_start': A('int32', [0], [1])},
]
case('t5.data.preprocessors.squad', SQ, note='punctuation padding, whitespace, unicode')
case('t5.data.preprocessors.squad', SQ[:2], {'include_context': False})
case('t5.data.preprocessors.squad', [
    {'id': 'e', 'title': 'T', 'context': 'c', 'question': 'q', 'answers/text': STRS([]), 'answers/answer_start': A('int32', [], [0])},
], note='no answers: t5 fails')
case('t5.data.preprocessors.squad_span_space_tokenized', SQ,
     note='answers not found dropped; one at the very end is missed (range(0, l_h - l_n))')

# ---------------------------------------------------------------- trivia_qa
def TQ(q, wiki, search, aliases, with_entity=True, with_search=True):
  ex = {'question': q, 'question_id': 'qid', 'question_source': 'src',
        'answer/aliases': STRS(aliases), 'answer/normalized_aliases': STRS([a.lower() for a in aliases]),
        'answer/value': aliases[0] if aliases else '', 'answer/normalized_value': aliases[0].lower() if aliases else '',
        'answer/type': 'WikipediaEntity', 'answer/matched_wiki_entity_name': '', 'answer/normalized_matched_wiki_entity_name': ''}
  if with_entity:
    ex['entity_pages/wiki_context'] = STRS(wiki)
    ex['entity_pages/title'] = STRS(['t'] * len(wiki))
  if with_search:
    ex['search_results/search_context'] = STRS(search)
    ex['search_results/title'] = STRS(['s'] * len(search))
  return ex

case('t5.data.preprocessors.trivia_qa', [
    TQ('Which city is the capital of France?', ['Paris is the capital of France.', 'Lyon is big.\nVery big.'], ['PARIS, France (AP) - news', 'The city of light'], ['Paris', 'City of Light', 'Lutetia']),
    TQ('Who wrote "Hamlet"?', ['Hamlet was written by William Shakespeare in 1600.'], [], ['William Shakespeare', 'Shakespeare', 'Bard']),
    TQ('Nothing?', [], ['no match here'], ['zzz']),
    TQ('Café?', ['Le Café de Flore à Paris'], ['ÉCOLE café'], ['café', 'école']),
    TQ('st. louis?', ['He went to st. louis', 'St x louis is here'], [], ['st. louis']),
], note='context-major order, ASCII-only lowercase, regex answer')
case('t5.data.preprocessors.trivia_qa', [
    TQ('Only wiki?', ['alpha beta', 'gamma'], [], ['beta', 'gamma'], with_search=False),
], note='no search_results feature')

# ---------------------------------------------------------------- trivia_qa_truncate_inputs
case('t5.data.preprocessors.trivia_qa_truncate_inputs', [
    {'inputs': T([10, 11, 12]), 'targets': T([11]), 'inputs_pretokenized': 'x'},
    {'inputs': T([5, 6, 7, 8, 9, 10, 11, 12]), 'targets': T([5, 6]), 'inputs_pretokenized': 'y'},
    {'inputs': T([5, 6, 7, 8, 9, 10, 11, 12]), 'targets': T([40]), 'inputs_pretokenized': 'z'},
    {'inputs': T([20, 21, 22, 23, 24, 25, 26, 27, 28]), 'targets': T([28]), 'inputs_pretokenized': 'w'},
    {'inputs': T([3, 4]), 'targets': T([99]), 'inputs_pretokenized': 'v'},
    {'inputs': T([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 'targets': T([5, 6, 7]), 'inputs_pretokenized': 'u'},
    {'inputs': T([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 'targets': T([2, 3, 4, 5]), 'inputs_pretokenized': 't'},
], sequence_length={'inputs': 4, 'targets': 4},
   note='short kept (answer or not), not found dropped; random windows')
case('t5.data.preprocessors.trivia_qa_truncate_inputs', [
    {'inputs': T([1, 2, 3, 4, 5, 6]), 'targets': T([2, 3, 4, 5, 6])},
], sequence_length={'inputs': 4, 'targets': 8}, note='answer longer than the window: t5 fails')

# ---------------------------------------------------------------- wsc_simple
WSC = [
    {'text': 'Mitchell asked Tom if he could lend some money.', 'span1_text': 'Tom', 'span1_index': I32(2), 'span2_text': 'he', 'span2_index': I32(4), 'label': I64(1), 'idx': I32(0)},
    {'text': 'Mitchell asked Tom if he could lend some money.', 'span1_text': 'Mitchell', 'span1_index': I32(0), 'span2_text': 'he', 'span2_index': I32(4), 'label': I64(0), 'idx': I32(1)},
    {'text': 'The X man saw Bob and greeted him', 'span1_text': 'Bob', 'span1_index': I32(4), 'span2_text': 'him', 'span2_index': I32(7), 'label': I64(-1), 'idx': I32(2)},
    {'text': 'The boy continued to whip the pony , and eventually the pony threw him over. John laughed out quite loud. "Good for him," he said. ', 'span1_text': 'the pony', 'span1_index': I32(5), 'span2_text': 'him', 'span2_index': I32(20), 'label': I64(0), 'idx': I32(3)},
    {'text': 'Zoë told  Ana that she won.', 'span1_text': 'Ana', 'span1_index': I32(2), 'span2_text': 'she', 'span2_index': I32(5), 'label': I64(1), 'idx': I32(4)},
]
case('t5.data.preprocessors.wsc_simple', WSC, note='all kept; " X " replaced globally; special case; double space')
case('t5.data.preprocessors.wsc_simple', WSC, {'correct_referent_only': True}, note='label -1 is truthy: kept')
case('t5.data.preprocessors.wsc_simple', [dict(WSC[0], span2_text='she')], note='span2_text mismatch: t5 fails')
case('t5.data.preprocessors.wsc_simple', [{k: v for k, v in WSC[0].items() if k != 'label'}], note='no label: 0')

# ---------------------------------------------------------------- wnli_simple
def WN(s1, s2, label, idx):
  return {'sentence1': s1, 'sentence2': s2, 'label': I64(label), 'idx': I32(idx)}
case('t5.data.preprocessors.wnli_simple', [
    WN('The fish ate the worm. It was tasty.', 'The worm was tasty.', 1, 0),
    WN('I stuck a pin through a carrot. When I pulled the pin out, it had a hole.', 'The carrot had a hole.', 1, 1),
    WN('Sam pulled up a chair to the piano, but it was broken, so he had to stand instead.', 'The piano was broken.', 0, 2),
    WN('John couldn\'t see the stage with Billy in front of him because he is so short.', 'John is so short.', 1, 3),
    WN('The trophy doesn\'t fit into the brown suitcase because it is too large.', 'The trophy is too large.', 1, 4),
    WN('Jane knocked on Susan\'s door but she did not answer.', 'Susan did not answer.', -1, 5),
    WN('Pete envies Martin although he is very successful.', 'Martin is very successful.', 0, 6),
    WN('The man lifted the boy onto his shoulders.', 'The man lifted the boy onto the boy\'s shoulders.', 0, 7),
    WN('Bob paid for Charlie\'s college education. He is very grateful.', 'Charlie is very grateful.', 1, 8),
], note='pronoun match scoring, possessive, article clean-up')
case('t5.data.preprocessors.wnli_simple', [WN('No pronoun at all.', 'Nothing.', 0, 0)], note='no pronoun: t5 fails')

# ---------------------------------------------------------------- dpr
def DPR(s, p, c, label):
  return {'sentence': s, 'pronoun': p, 'candidates': STRS(c), 'label': I64(label)}
case('t5.data.preprocessors.definite_pronoun_resolution_simple', [
    DPR('Bob asked Tom if he can lend some money.', 'he', ['Bob', 'Tom'], 1),
    DPR('The dog chased the cat, because it was hungry.', 'it', ['The dog', 'the cat'], 0),
    DPR('He said he would come and he did.', 'he', ['A', 'B'], 1),
    DPR('Anna met Zoë; she smiled.', 'she', ['Anna', 'Zoë'], 1),
    DPR('Tom saw Bob and spoke to him.', 'him', ['Tom', 'Bob'], 1),
    DPR('Tom saw Bob and thanked himself', 'him', ['Tom', 'Bob'], 0),
    DPR('I saw it.', 'it', ['first', 'last'], -1),
], note='first match only; no match keeps the sentence; label -1 indexes from the end')
case('t5.data.preprocessors.definite_pronoun_resolution_simple', [
    DPR('I saw it.', 'it', ['a', 'b'], 2),
], note='label past the candidates: t5 fails')
case('t5.data.preprocessors.definite_pronoun_resolution_simple', [
    DPR('Bob asked Tom if he can lend some money.', 'he', ['Bob', 'Tom'], 1),
], {'label': 'dpr:'})

# ---------------------------------------------------------------- prefix LM
case('t5.data.preprocessors.targets_for_prefix_lm_objective', [
    {'targets': T([10, 11, 12])},
    {'targets': T([])},
    {'targets': T([20, 21, 22, 23, 24, 25, 26, 27, 28, 29])},
    {'targets': T([30])},
], sequence_length={'inputs': 8, 'targets': 8}, note='deterministic below 65536 tokens')
PL = [T([2, 3, 4, 5, 6, 7, 8, 9]), T([12, 13, 14, 15, 16, 1, 0, 0]),
      T([22, 23, 24, 25, 26, 27, 28, 29]), T([32, 33, 1, 0, 0, 0, 0, 0])]
case('t5.data.preprocessors.pack_prefix_lm_encoder_decoder',
     [{'targets': t} for t in PL], sequence_length={'inputs': 8, 'targets': 8},
     note='random split: the test recovers it from encoder_segment_ids')
case('t5.data.preprocessors.pack_prefix_lm_encoder_decoder',
     [{'targets': t} for t in PL[:3]], sequence_length={'inputs': 8, 'targets': 8},
     note='odd count: the last batch holds one example')
case('t5.data.preprocessors.pack_prefix_lm_decoder_only',
     [{'targets': t} for t in PL], sequence_length={'targets': 8},
     note='random split: the test recovers it from decoder_causal_attention')
case('t5.data.preprocessors.pack_prefix_lm_decoder_only',
     [{'targets': t} for t in PL], {'loss_on_targets_only': False},
     sequence_length={'targets': 8})

# ---------------------------------------------------------------- sentinels
def sentinel_case(steps, num_sentinels, examples, seq_len):
  name = 'golden_sentinel_%d_%d' % (len(CASES), num_sentinels)
  feats = {'inputs': seqio.Feature(VOCAB), 'targets': seqio.Feature(VOCAB)}
  seqio.TaskRegistry.add(
      name, source=seqio.FunctionDataSource(lambda split, shuffle_files: None,
                                            splits=['train']),
      preprocessors=steps, output_features=feats)
  seqio.experimental.add_task_with_sentinels(name, num_sentinels=num_sentinels)
  new_name = name + '_%d_sentinel' % num_sentinels
  new = seqio.TaskRegistry.get(new_name)
  names = [getattr(p, '__name__', None) or getattr(p.func, '__name__') for p in new.preprocessors]
  def fn(ds):
    for p in new.preprocessors:
      params = inspect.signature(p).parameters
      kw = {k: v for k, v in (('sequence_length', seq_len), ('output_features', feats)) if k in params}
      ds = p(ds, **kw)
    return ds
  c = {'preprocessor': 'seqio.experimental.add_task_with_sentinels',
       'kwargs': {'num_sentinels': num_sentinels,
                  'steps': [getattr(p, '__name__') for p in steps]},
       'new_task_name': new_name, 'new_steps': names,
       'sequence_length': seq_len, 'inputs': examples}
  try:
    c['outputs'] = run(fn, examples)
  except Exception as e:  # pylint: disable=broad-except
    c['error'] = type(e).__name__ + ': ' + str(e).split('\n')[0][:200]
  CASES.append(c)

SEX = [{'inputs': T([10, 11, 12, 13, 14, 15]), 'targets': T([20, 21])},
       {'inputs': T([]), 'targets': T([20, 21, 22, 23, 24, 25, 26])},
       {'inputs': T([10, 11]), 'targets': T([])}]
sentinel_case([seqio.preprocessors.append_eos_after_trim], 1, SEX, {'inputs': 5, 'targets': 5})
sentinel_case([seqio.preprocessors.append_eos_after_trim], 2, SEX, {'inputs': 5, 'targets': 5})
sentinel_case([seqio.preprocessors.append_eos_after_trim], 2, SEX, {'inputs': 1, 'targets': 2})
sentinel_case([seqio.preprocessors.append_eos], 1, SEX, {'inputs': 5, 'targets': 5})

with open(OUT, 'w') as f:
  json.dump({'made_by': 'tests/data/preprocessors/make_t5_preprocessor_goldens.py: '
                        't5 (PYTHONPATH=/work/shared/t5) with seqio %s, TensorFlow %s'
                        % (getattr(seqio, '__version__', '?'), tf.__version__),
             'cases': CASES}, f, ensure_ascii=False, separators=(',', ':'))
  f.write('\n')
print('wrote', OUT, len(CASES), 'cases;', sum('error' in c for c in CASES), 'errors')
for c in CASES:
  if 'error' in c:
    print('  error:', c['preprocessor'], c.get('note', ''), c['error'][:150])
