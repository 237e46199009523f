"""Small TFDS datasets written by TensorFlow Datasets itself, and what TFDS
reads back from them: the fixtures and the oracle of t5xx's TfdsDataSource.

  python3 make_tfds_fixtures.py write OUT_DIR   # OUT_DIR/data/... + OUT_DIR/tfds_reads.json
  python3 make_tfds_fixtures.py check OUT_DIR   # reads OUT_DIR/data with TFDS again and
                                                # compares with OUT_DIR/tfds_reads.json

Run with the venv scripts/setup_t5x_interop.sh makes (tensorflow_datasets
4.9). tests/testdata/tfds/ holds what `write` made; `check` (ctest
interop_tfds_reads) says TFDS still reads those files that way.

Each fixture is a GeneratorBasedBuilder with the name, config and version
t5's catalog asks for (t5/data/tasks.py) and the *features of TFDS's own
builder* of that dataset (tfds.builder(name).info.features), filled with
generated examples: the same layout, features.json and records a real
`tfds build` writes, a few dozen examples each, several shards per split.
FIXTURES covers every TFDS dataset a task of t5.data.tasks reads (C4's four
configs, Wikipedia, every GLUE and SuperGLUE config, CNN/DailyMail, the WMT
pairs, DPR, SQuAD, TriviaQA), with the splits TFDS's builders write (e.g.
glue/mnli's validation_matched ... test_mismatched, glue/ax's and
super_glue/axb's test only); the newer ones are tiny (4-12 examples a split).
Where t5's preprocessors need consistent content the generator makes it
(SPECIAL, deterministic per dataset and split): SQuAD's answers are spans of
the context at their answer_start (some end the context, which t5's span
task drops); TriviaQA's answers appear in every, some or none of the
entity_pages/search_results contexts (some examples have no context at all;
the test split has empty answers as TFDS's); ReCoRD's queries hold
'@placeholder', its entities are the passage's mentions, answers among them,
several queries per passage, '@highlight' lines; MultiRC groups several
answers per question and several questions per paragraph with global idx
counters and <b>/<br> markup; WSC's span texts sit at their word indices;
DPR's pronoun and candidates occur in the sentence; WNLI's hypothesis is the
premise's clause with the pronoun replaced; GLUE and SuperGLUE idx = the
example's index and unlabeled test splits have label -1 (AX-b/AX-g labeled);
STS-B's similarity is in [0, 5].

tfds_reads.json: what builder_from_directory(dir).as_dataset(split,
shuffle_files=False, read_config=ReadConfig(input_context=...)) yields:
"examples", each whole split in TFDS's order (every split of every fixture), each feature flattened with
'/' (as t5xx names nested features) as {"dtype", "shape", "value": nested
lists as numpy's tolist() gives them}; "orders", for each split spec
(slices, '+', shards of tf.distribute.InputContext), the examples read in
order as [split, index into "examples"] (for the first nine fixtures).
"""
import json
import os
import random
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_datasets as tfds  # noqa: E402

WORDS = ("the cat sat on a mat while two dogs ran to eat green apples near old river "
         "bank under blue sky with small red birds singing songs of spring über café").split()
# Proper names for answers and entities: never drawn into WORDS' sentences, so a
# context holds one only where the generator put it.
NAMES = ("Paris Lisbon Oslo Quito Lima Cairo Dakar Hanoi Riga Sofia Tunis Accra "
         "Bern Doha Kyiv Minsk Nairobi Ottawa Rabat Seoul").split()
PRONOUNS = ["he", "she", "it", "they"]
NOUNS = "cat dog bird fox horse farmer teacher sailor baker child".split()
ADJECTIVES = "hungry tired happy angry small brave quiet late".split()

# (catalog name, TFDS builder to take the features from, {split: examples},
# shards per split, whether tfds_reads.json holds SPECS/SHARDED orders too).
# The catalog names are those t5's tasks read (t5/data/tasks.py); the splits
# those of TFDS's own builder of that dataset.
_GLUE_SPLITS = {"train": 10, "validation": 5, "test": 5}
_SG_SPLITS = {"train": 10, "validation": 5, "test": 5}
_WMT_SPLITS = {"train": 10, "validation": 5, "test": 5}
FIXTURES = [
    ("c4/en:2.2.0", "c4/en", {"train": 200, "validation": 24}, 4, True),
    ("glue/cola:1.0.0", "glue/cola", {"train": 30, "validation": 12, "test": 8}, 2, True),
    ("glue/stsb:1.0.0", "glue/stsb", {"train": 30, "validation": 12, "test": 8}, 2, True),
    ("squad/v1.1:3.0.0", "squad/v1.1", {"train": 30, "validation": 12}, 2, True),
    ("wmt_t2t_translate/de-en:1.0.0", "wmt_t2t_translate/de-en",
     {"train": 30, "validation": 12, "test": 6}, 2, True),
    ("super_glue/record:1.0.2", "super_glue/record", {"train": 20, "validation": 10, "test": 5}, 2, True),
    ("super_glue/multirc:1.0.2", "super_glue/multirc", {"train": 20, "validation": 10, "test": 6}, 2, True),
    ("cnn_dailymail:3.4.0", "cnn_dailymail", {"train": 20, "validation": 10, "test": 5}, 2, True),
    ("trivia_qa/rc:1.1.0", "trivia_qa/rc", {"train": 20, "validation": 8, "test": 4}, 2, True),
    # The other datasets t5's catalog reads: every split, examples only.
    ("c4/en.noclean:2.2.0", "c4/en.noclean", {"train": 12, "validation": 5}, 2, False),
    ("c4/en.realnewslike:2.2.0", "c4/realnewslike", {"train": 12, "validation": 5}, 2, False),
    ("c4/en.webtextlike:2.2.0", "c4/webtextlike", {"train": 12, "validation": 5}, 2, False),
    ("wikipedia/20190301.en:1.0.0", "wikipedia/20190301.en", {"train": 12}, 2, False),
    ("glue/sst2:1.0.0", "glue/sst2", _GLUE_SPLITS, 1, False),
    ("glue/mrpc:1.0.0", "glue/mrpc", _GLUE_SPLITS, 1, False),
    ("glue/qqp:1.0.0", "glue/qqp", _GLUE_SPLITS, 1, False),
    ("glue/mnli:1.0.0", "glue/mnli",
     {"train": 12, "validation_matched": 5, "validation_mismatched": 5,
      "test_matched": 4, "test_mismatched": 4}, 2, False),
    ("glue/mnli_mismatched:1.0.0", "glue/mnli_mismatched", {"validation": 5, "test": 4}, 1, False),
    ("glue/mnli_matched:1.0.0", "glue/mnli_matched", {"validation": 5, "test": 4}, 1, False),
    ("glue/qnli:1.0.0", "glue/qnli", _GLUE_SPLITS, 1, False),
    ("glue/rte:1.0.0", "glue/rte", _GLUE_SPLITS, 1, False),
    ("glue/wnli:1.0.0", "glue/wnli", _GLUE_SPLITS, 1, False),
    ("glue/ax:1.0.0", "glue/ax", {"test": 6}, 1, False),
    ("wmt14_translate/de-en:1.0.0", "wmt14_translate/de-en", _WMT_SPLITS, 1, False),
    ("wmt14_translate/fr-en:1.0.0", "wmt14_translate/fr-en", _WMT_SPLITS, 1, False),
    ("wmt15_translate/fr-en:1.0.0", "wmt15_translate/fr-en", _WMT_SPLITS, 1, False),
    ("wmt16_translate/ro-en:1.0.0", "wmt16_translate/ro-en", _WMT_SPLITS, 1, False),
    ("wmt19_translate/de-en:1.0.0", "wmt19_translate/de-en", {"train": 10, "validation": 5}, 1, False),
    ("super_glue/boolq:1.0.2", "super_glue/boolq", _SG_SPLITS, 1, False),
    ("super_glue/cb:1.0.2", "super_glue/cb", _SG_SPLITS, 1, False),
    ("super_glue/copa:1.0.2", "super_glue/copa", _SG_SPLITS, 1, False),
    ("super_glue/rte:1.0.2", "super_glue/rte", _SG_SPLITS, 1, False),
    ("super_glue/wic:1.0.2", "super_glue/wic", _SG_SPLITS, 1, False),
    ("super_glue/wsc.fixed:1.0.2", "super_glue/wsc.fixed", {"train": 12, "validation": 6, "test": 5}, 2, False),
    ("super_glue/axb:1.0.2", "super_glue/axb", {"test": 6}, 1, False),
    ("super_glue/axg:1.0.2", "super_glue/axg", {"test": 6}, 1, False),
    ("definite_pronoun_resolution:1.1.0", "definite_pronoun_resolution", {"train": 10, "test": 6}, 1, False),
]

# Split specs read for the oracle, and (spec, num_input_pipelines) sharded reads.
SPECS = ["train", "validation", "train[:10%]", "train[3:17]", "train[-25%:]",
         "train[33%:67%]", "train+validation", "validation[:5]"]
# (every number of input pipelines from 2 to the train split's shards).
SHARDED = ["train"]


def sentence(rng, lo=2, hi=9):
  return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def prose(rng, lo=1, hi=3, insert=()):
  """A few sentences ending in '.' (some with a comma), with the phrases in
  `insert` put in place of random words."""
  sents = []
  for _ in range(rng.randint(lo, hi)):
    words = [rng.choice(WORDS) for _ in range(rng.randint(4, 9))]
    if rng.random() < 0.3:
      words[rng.randrange(1, len(words))] += ","
    sents.append(words)
  for phrase in insert:
    words = rng.choice(sents)
    words.insert(rng.randrange(0, len(words)), phrase)
  return " ".join(" ".join(w).rstrip(",") + "." for w in sents)


def value_of(feature, rng):
  """An example value for a TFDS feature, drawn from rng."""
  F = tfds.features
  if isinstance(feature, F.FeaturesDict):
    return {k: value_of(f, rng) for k, f in feature.items()}
  if isinstance(feature, F.Translation):
    return {lang: sentence(rng) for lang in feature.languages}
  if isinstance(feature, F.Sequence):
    n = feature._length if feature._length is not None else rng.randint(0, 3)
    items = [value_of(feature.feature, rng) for _ in range(n)]
    if isinstance(feature.feature, F.FeaturesDict):
      return {k: [it[k] for it in items] for k in feature.feature.keys()}
    return items
  if isinstance(feature, F.ClassLabel):
    return rng.randrange(feature.num_classes)
  if isinstance(feature, F.Text):
    return sentence(rng)
  if isinstance(feature, F.Tensor):
    dtype = np.dtype(feature.np_dtype)
    shape = [d if d is not None else rng.randint(0, 3) for d in feature.shape]
    size = int(np.prod(shape)) if shape else 1
    if dtype.kind in "SUO":
      vals = np.array([rng.choice(WORDS) for _ in range(size)], dtype=object)
    elif dtype.kind == "b":
      vals = np.array([rng.random() < 0.5 for _ in range(size)])
    elif dtype.kind == "f":
      vals = np.array([rng.randint(-40, 40) / 8.0 for _ in range(size)], dtype=dtype)
    else:
      vals = np.array([rng.randint(0, 500) for _ in range(size)], dtype=dtype)
    return vals.reshape(shape) if shape else vals.reshape(()).item()
  raise ValueError(f"no generator for {feature!r}")


# Datasets whose t5 preprocessors need consistent content: one function per
# dataset name making a split's n examples (rng seeded by dataset and split).
# The others take value_of's random values; GLUE and SuperGLUE get idx = the
# example's index and, in their unlabeled test splits, label -1 (as TFDS's
# builders write them).

def _squad(rng, split, n, features):
  out = []
  for i in range(n):
    context = prose(rng, 2, 3)
    words = context.split(" ")
    answers = {"text": [], "answer_start": []}
    for _ in range(1 if split == "train" else rng.randint(2, 3)):
      # A span of words; ~1/4 end the context (t5's span task drops those).
      k = rng.randint(1, 3)
      a = len(words) - k if rng.random() < 0.25 else rng.randrange(0, len(words) - k)
      text = " ".join(words[a:a + k]).rstrip(".,")
      answers["text"].append(text)
      answers["answer_start"].append(len(" ".join(words[:a])) + (1 if a else 0))
    out.append({"id": f"{rng.getrandbits(48):012x}", "title": rng.choice(NAMES),
                "context": context, "question": sentence(rng, 3, 7) + "?",
                "answers": answers})
  return out


def _trivia_qa(rng, split, n, features):
  out = []
  for i in range(n):
    value = rng.choice(NAMES) + (" " + rng.choice(NAMES) if rng.random() < 0.3 else "")
    alias = value.split(" ")[0] + " city"
    test = split == "test"
    # 0: the answer in every context; 1: in none; 2: in some.
    kind = 0 if i % 4 < 2 else (1 if i % 4 == 2 else 2)
    def ctx(j):
      has = kind == 0 or (kind == 2 and j == 0)
      return prose(rng, 1, 2, insert=[value if rng.random() < 0.7 else alias] if has else ())
    n_pages, n_results = rng.randint(0, 2), rng.randint(0, 2)
    if i % 5 == 4:
      n_pages = n_results = 0
    elif n_pages + n_results == 0:
      n_pages = 1
    pages = [ctx(j) for j in range(n_pages)]
    results = [ctx(j + n_pages) for j in range(n_results)]
    names = [rng.choice(NAMES) for _ in range(n_pages + n_results)]
    out.append({
        "question": sentence(rng, 3, 7) + "?",
        "question_id": f"tc_{rng.randint(0, 99999)}",
        "question_source": "http://www.quiz.example/",
        "answer": {
            "aliases": [] if test else [value, alias],
            "normalized_aliases": [] if test else [value.lower(), alias.lower()],
            "matched_wiki_entity_name": "" if test else value,
            "normalized_matched_wiki_entity_name": "" if test else value.lower(),
            "normalized_value": "" if test else value.lower(),
            "type": "" if test else "WikipediaEntity",
            "value": "" if test else value,
        },
        "entity_pages": {
            "doc_source": ["TagMe"] * n_pages,
            "filename": [f"{t}.txt" for t in names[:n_pages]],
            "title": names[:n_pages],
            "wiki_context": pages,
        },
        "search_results": {
            "description": [sentence(rng) for _ in results],
            "filename": [f"{j}/{t}.txt" for j, t in enumerate(names[n_pages:])],
            "rank": list(range(n_results)),
            "search_context": results,
            "title": names[n_pages:],
            "url": [f"http://www.{t.lower()}.example/" for t in names[n_pages:]],
        },
    })
  return out


def _record(rng, split, n, features):
  out, passage_idx, query_idx = [], 0, 0
  while len(out) < n:
    entities = rng.sample(NAMES, rng.randint(3, 5))
    passage = prose(rng, 2, 3, insert=entities) + "".join(
        "\n@highlight\n" + sentence(rng, 3, 6) + (" " + rng.choice(entities) if h == 0 else "")
        for h in range(rng.randint(1, 2)))
    for _ in range(rng.randint(1, 3)):
      if len(out) == n:
        break
      answers = [] if split == "test" else rng.sample(entities, 1 if rng.random() < 0.7 else 2)
      query = sentence(rng, 2, 5) + " @placeholder " + sentence(rng, 1, 4) + "."
      # ReCoRD's entities: each mention in the passage (so repeats happen).
      ents = [e for e in entities for _ in range(passage.count(e))]
      out.append({"passage": passage, "query": query, "entities": ents, "answers": answers,
                  "idx": {"passage": passage_idx, "query": query_idx}})
      query_idx += 1
    passage_idx += 1
  return out


def _multirc(rng, split, n, features):
  out, q_idx, a_idx, p_idx = [], 0, 0, 0
  while len(out) < n:
    sents = [sentence(rng, 4, 8) + "." for _ in range(rng.randint(2, 3))]
    paragraph = "".join(f"<b>Sent {j + 1}: </b>{s}<br>" for j, s in enumerate(sents))
    for _ in range(rng.randint(2, 3)):
      question = sentence(rng, 3, 6) + "?"
      for _ in range(rng.randint(2, 4)):
        if len(out) == n:
          break
        out.append({"paragraph": paragraph, "question": question, "answer": sentence(rng, 1, 4),
                    "label": -1 if split == "test" else rng.randrange(2),
                    "idx": {"paragraph": p_idx, "question": q_idx, "answer": a_idx}})
        a_idx += 1
      q_idx += 1
    p_idx += 1
  return out


def _wsc(rng, split, n, features):
  out = []
  for i in range(n):
    noun, other = rng.sample(NOUNS, 2)
    pron = rng.choice(PRONOUNS)
    pre = [rng.choice(WORDS) for _ in range(rng.randint(0, 2))]
    if i % 3 == 2:  # the pronoun before the noun phrase
      words = pre + ["when", pron, "was", rng.choice(ADJECTIVES), ",", "the", noun, "met", "the", other, "."]
      span2, span1 = len(pre) + 1, len(pre) + 5
    else:
      words = pre + ["the", noun, "saw", "the", other, "because", pron, "was", rng.choice(ADJECTIVES), "."]
      span1, span2 = len(pre), len(pre) + 6
    if span2 == 0:
      words.insert(0, "so")
      span1 += 1
      span2 += 1
    out.append({"text": " ".join(words), "span1_index": span1, "span1_text": f"the {noun}",
                "span2_index": span2, "span2_text": pron,
                "label": -1 if split == "test" else rng.randrange(2), "idx": i})
  return out


def _dpr(rng, split, n, features):
  out = []
  for i in range(n):
    a, b = rng.sample(NOUNS, 2)
    pron = rng.choice(PRONOUNS)
    after = rng.choice([" ", ".", ","])
    tail = {" ": " was " + rng.choice(ADJECTIVES) + ".", ".": ".", ",": ", and left."}[after]
    sent = f"The {a} thanked the {b} because {pron}{tail}"
    out.append({"sentence": sent, "pronoun": pron, "candidates": [f"The {a}", f"the {b}"],
                "label": rng.randrange(2)})
  return out


def _wnli(rng, split, n, features):
  out = []
  for i in range(n):
    a, b = rng.sample(NOUNS, 2)
    adj = rng.choice(ADJECTIVES)
    pron = rng.choice(PRONOUNS)
    ref = rng.choice([a, b])
    out.append({"sentence1": f"The {a} chased the {b} because {pron} was {adj}.",
                "sentence2": f"The {ref} was {adj}.",
                "label": -1 if split == "test" else rng.randrange(2), "idx": i})
  return out


def _wic(rng, split, n, features):
  out = []
  for i in range(n):
    word = rng.choice(WORDS[:20])
    ex = {"word": word, "idx": i, "label": -1 if split == "test" else rng.randrange(2)}
    for k in ("1", "2"):
      pre, post = sentence(rng, 1, 4), sentence(rng, 1, 4)
      ex["sentence" + k] = f"{pre} {word} {post}."
      ex["start" + k] = len(pre) + 1
      ex["end" + k] = len(pre) + 1 + len(word)
    out.append(ex)
  return out


def _copa(rng, split, n, features):
  out = []
  for i in range(n):
    out.append({"premise": sentence(rng, 3, 7) + ".", "question": rng.choice(["cause", "effect"]),
                "choice1": sentence(rng, 2, 5) + ".", "choice2": sentence(rng, 2, 5) + ".",
                "label": -1 if split == "test" else rng.randrange(2), "idx": i})
  return out


SPECIAL = {"squad": _squad, "trivia_qa": _trivia_qa, "super_glue/record": _record,
           "super_glue/multirc": _multirc, "super_glue/wsc.fixed": _wsc,
           "definite_pronoun_resolution": _dpr, "glue/wnli": _wnli,
           "super_glue/wic": _wic, "super_glue/copa": _copa}
# Test splits TFDS writes with label -1 (GLUE's and SuperGLUE's unlabeled
# ones; AX-b and AX-g come with labels).
UNLABELED_TEST = ("glue/", "super_glue/")
LABELED_TEST = ("super_glue/axb", "super_glue/axg")


def split_examples(catalog_name, features, split, n):
  """The n examples of a fixture's split, deterministic in its name and split."""
  rng = random.Random(f"{catalog_name}/{split}")
  name = catalog_name.partition(":")[0]
  make = SPECIAL.get(name) or SPECIAL.get(name.partition("/")[0])
  if make:
    return make(rng, split, n, features)
  out = [value_of(features, rng) for _ in range(n)]
  if name.startswith(UNLABELED_TEST):
    for i, ex in enumerate(out):
      ex["idx"] = i
      if name == "glue/stsb":  # similarity in [0, 5] (t5 rounds it to 0.2)
        ex["label"] = rng.randint(0, 5000) / 1000
      if split.startswith("test") and not name.startswith(LABELED_TEST):
        ex["label"] = -1
  return out


def make_builder(catalog_name, features, splits):
  name, _, version = catalog_name.partition(":")
  name, _, config = name.partition("/")

  class Fixture(tfds.core.GeneratorBasedBuilder, skip_registration=True):
    VERSION = tfds.core.Version(version)
    BUILDER_CONFIGS = [tfds.core.BuilderConfig(name=config)] if config else []

    def _info(self):
      return tfds.core.DatasetInfo(builder=self, features=features)

    def _split_generators(self, dl_manager):
      return {s: self._generate_examples(s, n) for s, n in splits.items()}

    def _generate_examples(self, split, n):
      for i, ex in enumerate(split_examples(catalog_name, features, split, n)):
        yield i, ex

  Fixture.name = name
  return Fixture


def plain(x):
  """tolist() output with bytes as UTF-8 text and numpy scalars as Python's."""
  if isinstance(x, list):
    return [plain(y) for y in x]
  if isinstance(x, bytes):
    return x.decode("utf-8")
  if isinstance(x, np.generic):
    return x.item()
  return x


def flatten(ex, prefix=""):
  """A TFDS example as {flat key: {"dtype", "shape", "value"}}; a string
  scalar as {"dtype": "string", "shape": [], "value": text}; ragged dims -1."""
  out = {}
  for k, v in ex.items():
    key = prefix + k
    if isinstance(v, dict):
      out.update(flatten(v, key + "/"))
    elif isinstance(v, tf.RaggedTensor):
      inner = list(v.flat_values.shape[1:])
      out[key] = {"dtype": v.dtype.name, "shape": [int(v.shape[0])] + [-1] * v.ragged_rank + inner,
                  "value": plain(v.to_list())}
    else:
      out[key] = {"dtype": v.dtype.name, "shape": list(v.shape), "value": plain(np.asarray(v.numpy()).tolist())}
  return out


def reads(data_dir):
  """{"examples": {"<dataset> <split>": [flat example, ...] as TFDS reads the
  whole split}, "orders": {"<dataset> <spec>[ shard i/n]": [[split, index
  into that split's examples], ...]}}."""
  examples, orders = {}, {}
  for catalog_name, _, splits, shards, with_orders in FIXTURES:
    name, _, version = catalog_name.partition(":")
    builder = tfds.builder_from_directory(os.path.join(data_dir, name, version))

    def read(spec, ctx=None):
      rc = tfds.ReadConfig(input_context=ctx, try_autocache=False)
      ds = builder.as_dataset(split=spec, shuffle_files=False, read_config=rc)
      return [flatten(ex) for ex in ds]

    where = {}
    for split in splits:
      examples[f"{catalog_name} {split}"] = read(split)
      for i, ex in enumerate(examples[f"{catalog_name} {split}"]):
        key = json.dumps(ex, sort_keys=True)
        assert key not in where, f"{catalog_name}: two equal examples; change the generator"
        where[key] = [split, i]
    if not with_orders:
      continue
    cases = [(s, None) for s in SPECS] + [(s, n) for s in SHARDED for n in range(2, shards + 1)]
    for spec, pipelines in cases:
      for i in range(pipelines or 1):
        ctx = None if pipelines is None else tf.distribute.InputContext(
            num_input_pipelines=pipelines, input_pipeline_id=i)
        case = f"{catalog_name} {spec}" + ("" if pipelines is None else f" shard {i}/{pipelines}")
        orders[case] = [where[json.dumps(ex, sort_keys=True)] for ex in read(spec, ctx)]
  return {"examples": examples, "orders": orders}


def write(out_dir):
  data_dir = os.path.join(out_dir, "data")
  shutil.rmtree(data_dir, ignore_errors=True)
  for catalog_name, source, splits, shards, _ in FIXTURES:
    features = tfds.builder(source, data_dir=tempfile.mkdtemp()).info.features
    builder = make_builder(catalog_name, features, splits)(data_dir=data_dir)
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(num_shards=shards))
  # Only what a reader needs (TFDS's own files; no downloads, lock or temp files).
  shutil.rmtree(os.path.join(data_dir, "downloads"), ignore_errors=True)
  for root, _, files in os.walk(data_dir):
    for f in files:
      if f.endswith(".lock") or f.startswith("."):
        os.remove(os.path.join(root, f))
  with open(os.path.join(out_dir, "tfds_reads.json"), "w") as f:
    json.dump(reads(data_dir), f, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    f.write("\n")


def check(out_dir):
  with open(os.path.join(out_dir, "tfds_reads.json")) as f:
    committed = json.load(f)
  now = json.loads(json.dumps(reads(os.path.join(out_dir, "data"))))
  bad = [f"{part}: {k}" for part in ("examples", "orders")
         for k in sorted(set(committed[part]) | set(now[part]))
         if committed[part].get(k) != now[part].get(k)]
  if bad:
    print(f"FAIL: TFDS reads {len(bad)} case(s) differently from tfds_reads.json: {bad[:5]}")
    return 1
  print(f"OK: TFDS {tfds.__version__} reads the {len(now['examples'])} splits and "
        f"{len(now['orders'])} split specs of tfds_reads.json alike")
  return 0


if __name__ == "__main__":
  mode, out = sys.argv[1], sys.argv[2]
  if mode == "write":
    write(out)
  else:
    sys.exit(check(out))
