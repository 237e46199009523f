"""What t5's own task and mixture catalog (t5.data.tasks, t5.data.mixtures)
makes of the TFDS fixtures: the oracle t5xx's catalog is compared with.

  python3 make_t5_catalog_oracle.py vocab   # trains tests/testdata/t5_catalog/vocab.model
  python3 make_t5_catalog_oracle.py write   # writes tests/testdata/t5_catalog/catalog_oracle.json
  python3 make_t5_catalog_oracle.py check   # makes it again in memory and compares

Run with the venv scripts/setup_t5x_interop.sh makes (TF 2.17, seqio,
tensorflow_datasets 4.9.6, t5's metric dependencies) and t5's source on
PYTHONPATH (/work/shared/t5, or $T5_DIR): run_t5_catalog_oracle_test.sh
(ctest interop_t5_catalog_oracle) runs `check`.

How it is made:
  * The vocabulary: every SentencePiece path gs://t5-data/vocabs/... that t5
    opens (SentencePieceVocabulary's constructor, patched before t5 is
    imported) is replaced by tests/testdata/t5_catalog/vocab.model, keeping
    each vocabulary's extra_ids (t5's default vocabulary: 100;
    cc_all.32000.100extra, used by the prefix-LM-objective and full_lm tasks:
    0; "vocabulary"/"extra_ids_by_path" lists both). vocab.model is a unigram SentencePiece model (`vocab` mode; trainer
    sentencepiece 0.2.0, one thread, no sampling or shuffling) of 600 pieces
    at most, byte_fallback=True, pad 0 / eos 1 / unk 2 / no bos as t5's,
    trained on every string of tests/testdata/tfds/tfds_reads.json plus the
    words t5's preprocessors write (PROMPTS).
  * The data: seqio.set_tfds_data_dir_override(tests/testdata/tfds/data), the
    fixtures make_tfds_fixtures.py wrote.
  * For every task of seqio.TaskRegistry after `import t5.data.mixtures`
    (60 tasks, the SuperGLUE/DPR/WSC "_1_sentinel" ones included):
      "source": {"tfds_name", "splits": list(task.source.splits)};
      "sequence_length": SEQUENCE_LENGTH ({"inputs": 256, "targets": 128});
      "output_features": {name: {"add_eos", "required"}};
      "postprocess_fn" / "metric_fns": "module.name" of the function (of
        functools.partial's func), null when none;
      "deterministic": false when one of the task's preprocessors draws
        random numbers (RANDOM_PREPROCESSORS, all after t5's
        CacheDatasetPlaceholder);
      "splits": {split: {
         "precache": task.preprocess_precache(task.source.get_dataset(split,
            shuffle=False), seed=0), every example (c4/en's 200-example train
            split: the first PRECACHE_LIMIT examples only);
         "preprocessed" (deterministic tasks): task.get_dataset(
            SEQUENCE_LENGTH, split, use_cached=False, shuffle=False, seed=0);
         "converted" (deterministic tasks): those through
            seqio.EncDecFeatureConverter(pack=False) with SEQUENCE_LENGTH, the
            first CONVERTED_LIMIT of them (the converter pads every example
            to 256 + 3 x 128 numbers; the file stays under 3 MB)}};
      examples flattened as tfds_reads.json's: {feature: {"dtype", "shape",
      "value"}}, strings as UTF-8 text, ragged dims -1;
      "metrics" (tasks with metric_fns; null otherwise): {"split": the eval
        split (validation, else validation_matched, else test), "predictions":
        PREDICTIONS(targets_pretokenized) (mostly the target, every 6th from
        3 the next example's, from 4 perturbed, from 5 garbage), "results":
        what seqio's evaluation computes: each target postprocessed with the
        task's postprocess_fn(target_pretokenized, example=ex, is_target=True),
        each prediction with postprocess_fn(pred, example=ex, is_target=False),
        then every metric fn(targets, predictions), the dicts merged, with
        numpy's global rng seeded 0 before each (t5's rouge reports
        rouge_score's BootstrapAggregator "mid", from resampling); floats
        as JSON numbers, NaN as "nan"}.
  * For every mixture: "tasks" (its task names, as seqio lists them) and
    "rates" {task: mixture.get_rate(task)} (t5's rate_num_examples reads the
    train split's num_examples from the fixtures' dataset_info.json, i.e.
    task.num_input_examples("train")); a rate seqio cannot compute is
    {"error": "<exception type>: <message's first line>"} (en_mix's
    glue_ax_v002, whose source has no train split: KeyError 'train').
"""
import functools
import io
import json
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "testdata", "tfds")
OUT_DIR = os.path.join(ROOT, "tests", "testdata", "t5_catalog")
VOCAB = os.path.join(OUT_DIR, "vocab.model")
VOCAB_REL = "tests/testdata/t5_catalog/vocab.model"
ORACLE = os.path.join(OUT_DIR, "catalog_oracle.json")

SEQUENCE_LENGTH = {"inputs": 256, "targets": 128}
PRECACHE_LIMIT = 20  # examples of a split with more (c4/en train)
CONVERTED_LIMIT = 5  # converted examples kept per split
# Token preprocessors (after the cache placeholder) that draw random numbers.
RANDOM_PREPROCESSORS = {
    "span_corruption", "iid_denoising", "prefix_lm", "unsupervised", "full_lm",
    "targets_for_prefix_lm_objective", "pack_prefix_lm_encoder_decoder",
    "pack_prefix_lm_decoder_only", "trivia_qa_truncate_inputs", "denoise",
    "select_random_chunk", "random_split_text"}
PROMPTS = ("question: context: squad trivia question: answer: summarize: "
           "translate English to German: translate English to French: "
           "translate English to Romanian: cola sentence: sst2 mrpc sentence1: "
           "sentence2: qqp question1: question2: stsb mnli hypothesis: premise: "
           "qnli rte wnli boolq passage: cb copa choice1: choice2: multirc "
           "record query: entities: wic word: wsc text: start: end: "
           "acceptable unacceptable positive negative equivalent not_equivalent "
           "duplicate not_duplicate entailment neutral contradiction "
           "not_entailment True False <unk>")


def train_vocab():
  import sentencepiece as spm
  with open(os.path.join(FIXTURES, "tfds_reads.json")) as f:
    reads = json.load(f)
  lines = [PROMPTS]

  def strings(v):
    if isinstance(v, str):
      if v.strip():
        lines.append(v.replace("\n", " "))
    elif isinstance(v, list):
      for x in v:
        strings(x)

  for key in sorted(reads["examples"]):
    for ex in reads["examples"][key]:
      for feat in sorted(ex):
        strings(ex[feat]["value"])
  model = io.BytesIO()
  spm.SentencePieceTrainer.train(
      sentence_iterator=iter(lines), model_writer=model, model_type="unigram",
      vocab_size=600, hard_vocab_limit=False, byte_fallback=True,
      character_coverage=1.0, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
      num_threads=1, input_sentence_size=0, shuffle_input_sentence=False,
      minloglevel=2)
  os.makedirs(OUT_DIR, exist_ok=True)
  with open(VOCAB, "wb") as f:
    f.write(model.getvalue())
  print(f"wrote {VOCAB} ({len(model.getvalue())} bytes) from {len(lines)} lines")


MAPPED = {}  # gs:// path: the extra_ids t5 asks for


def load_catalog():
  """Imports t5's catalog with the gs:// vocabularies mapped to VOCAB and the
  fixtures as TFDS's data dir."""
  import seqio
  orig = seqio.SentencePieceVocabulary.__init__

  def init(self, sentencepiece_model_file, *args, **kwargs):
    if str(sentencepiece_model_file).startswith("gs://t5-data/vocabs/"):
      MAPPED[sentencepiece_model_file] = args[0] if args else kwargs.get("extra_ids", 0)
      sentencepiece_model_file = VOCAB
    orig(self, sentencepiece_model_file, *args, **kwargs)

  seqio.SentencePieceVocabulary.__init__ = init
  seqio.set_tfds_data_dir_override(os.path.join(FIXTURES, "data"))
  import t5.data.mixtures  # noqa: F401  (registers the tasks and mixtures)
  return seqio


def fn_name(fn):
  if fn is None:
    return None
  while isinstance(fn, functools.partial):
    fn = fn.func
  return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


# The flat {"dtype", "shape", "value"} form of tfds_reads.json.
from make_tfds_fixtures import flatten, plain  # noqa: E402,F401  pylint: disable=g-import-not-at-top


def jsonable(x):
  """Metric results as JSON: numpy scalars/arrays as Python's, NaN as "nan"."""
  import numpy as np
  if isinstance(x, dict):
    return {str(k): jsonable(v) for k, v in x.items()}
  if isinstance(x, (list, tuple)):
    return [jsonable(v) for v in x]
  if isinstance(x, np.ndarray):
    return jsonable(x.tolist())
  if isinstance(x, np.generic):
    x = x.item()
  if isinstance(x, float) and math.isnan(x):
    return "nan"
  if isinstance(x, bytes):
    return x.decode("utf-8")
  return x


def predictions_for(targets):
  """Fixed predictions from the target strings: mostly right, some wrong."""
  out = []
  n = len(targets)
  for i, t in enumerate(targets):
    k = i % 6
    if k == 3 and n > 1:
      out.append(targets[(i + 1) % n])
    elif k == 4:
      words = t.split(" ")
      try:
        out.append(f"{float(t) + 0.4:.1f}")
      except ValueError:
        out.append(" ".join(words[:-1]) if len(words) > 1 else t + " x")
    elif k == 5:
      out.append("qq zz")
    else:
      out.append(t)
  return out


def deterministic(task):
  import seqio
  for p in task.preprocessors:
    if isinstance(p, seqio.CacheDatasetPlaceholder):
      continue
    name = fn_name(p).rsplit(".", 1)[-1]
    if name in RANDOM_PREPROCESSORS:
      return False
  return True


def eval_split(splits):
  for s in ("validation", "validation_matched", "test"):
    if s in splits:
      return s
  return list(splits)[0]


def task_oracle(seqio, task):
  det = deterministic(task)
  src = task.source
  splits = list(task.splits)
  out = {
      "source": {"tfds_name": src.tfds_dataset.name, "splits": list(src.splits)},
      "sequence_length": SEQUENCE_LENGTH,
      "output_features": {k: {"add_eos": f.add_eos, "required": f.required}
                          for k, f in task.output_features.items()},
      "postprocess_fn": fn_name(task.postprocessor),
      "metric_fns": [fn_name(m) for m in task.metric_fns],
      "deterministic": det,
      "splits": {},
  }
  has_inputs = "inputs" in task.output_features
  for split in splits:
    ds = task.preprocess_precache(src.get_dataset(split=split, shuffle=False), seed=0)
    n = src.num_input_examples(split)
    if n > PRECACHE_LIMIT:
      ds = ds.take(PRECACHE_LIMIT)
    entry = {"precache": [flatten(ex) for ex in ds]}
    if det:
      ds = task.get_dataset(SEQUENCE_LENGTH, split, use_cached=False, shuffle=False, seed=0)
      entry["preprocessed"] = [flatten(ex) for ex in ds]
      conv = (seqio.EncDecFeatureConverter(pack=False) if has_inputs
              else seqio.DecoderFeatureConverter(pack=False))
      lengths = SEQUENCE_LENGTH if has_inputs else {"targets": SEQUENCE_LENGTH["targets"]}
      entry["converted"] = [flatten(ex) for ex in conv(ds, lengths).take(CONVERTED_LIMIT)]
    out["splits"][split] = entry
  out["metrics"] = None
  if task.metric_fns and det:
    import numpy as np
    split = eval_split(splits)
    ds = task.get_dataset(SEQUENCE_LENGTH, split, use_cached=False, shuffle=False, seed=0)
    examples = list(ds.as_numpy_iterator())
    vocab = task.output_features["targets"].vocabulary
    targets_text = []
    for ex in examples:
      t = ex["targets_pretokenized"] if "targets_pretokenized" in ex else vocab.decode(
          [int(i) for i in ex["targets"]])
      targets_text.append(t.decode("utf-8") if isinstance(t, bytes) else t)
    preds = predictions_for(targets_text)
    post = task.postprocess_fn
    targets = [post(t, example=ex, is_target=True) for t, ex in zip(targets_text, examples)]
    predictions = [post(p, example=ex, is_target=False) for p, ex in zip(preds, examples)]
    results = {}
    for m in task.metric_fns:
      np.random.seed(0)  # rouge's BootstrapAggregator resamples with numpy's global rng
      results.update(m(targets, predictions))
    out["metrics"] = {"split": split, "predictions": preds, "results": jsonable(results)}
  return out


def oracle():
  import seqio
  import sentencepiece
  import tensorflow as tf
  import tensorflow_datasets as tfds
  seqio = load_catalog()
  tasks = {}
  for name in sorted(seqio.TaskRegistry.names()):
    print(f"task {name}", file=sys.stderr, flush=True)
    tasks[name] = task_oracle(seqio, seqio.TaskRegistry.get(name))
  mixtures = {}
  for name in sorted(seqio.MixtureRegistry.names()):
    mix = seqio.MixtureRegistry.get(name)
    rates = {}
    for t in mix.tasks:
      try:
        rates[t.name] = jsonable(float(mix.get_rate(t)))
      except Exception as e:  # noqa: BLE001  (recorded, as seqio raises it)
        rates[t.name] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0]}"}
    mixtures[name] = {"tasks": [t.name for t in mix.tasks], "rates": rates}
  how = (f"tests/interop/make_t5_catalog_oracle.py write (t5 from PYTHONPATH, seqio "
         f"{getattr(seqio, '__version__', '?')}, tensorflow {tf.__version__}, "
         f"tensorflow_datasets {tfds.__version__}, sentencepiece {sentencepiece.__version__}); "
         f"precache of splits over {PRECACHE_LIMIT} examples (c4/en train): the first "
         f"{PRECACHE_LIMIT}; converted: the first {CONVERTED_LIMIT} of each split; tasks with "
         f"random preprocessors: precache only")
  return {"how": how,
          "vocabulary": {"file": VOCAB_REL, "extra_ids": 100, "gs_paths": sorted(MAPPED),
                         "extra_ids_by_path": MAPPED},
          "tasks": tasks, "mixtures": mixtures}


def dumps(o):
  return json.dumps(o, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def main():
  mode = sys.argv[1] if len(sys.argv) > 1 else "check"
  if mode == "vocab":
    train_vocab()
    return 0
  if mode == "write":
    text = dumps(oracle())
    with open(ORACLE, "w") as f:
      f.write(text)
    print(f"wrote {ORACLE} ({len(text)} bytes)")
    return 0
  with open(ORACLE) as f:
    committed = json.load(f)
  now = json.loads(dumps(oracle()))
  bad = []
  for part in ("vocabulary",):
    if committed[part] != now[part]:
      bad.append(part)
  for part in ("tasks", "mixtures"):
    for k in sorted(set(committed[part]) | set(now[part])):
      a, b = committed[part].get(k), now[part].get(k)
      if a != b:
        sub = [s for s in sorted(set(a or {}) | set(b or {}))
               if (a or {}).get(s) != (b or {}).get(s)]
        bad.append(f"{part}/{k} ({', '.join(sub)})")
  if bad:
    print(f"FAIL: t5's catalog makes {len(bad)} entries differently from "
          f"catalog_oracle.json: {bad[:8]}")
    return 1
  print(f"OK: t5's catalog makes the {len(now['tasks'])} tasks and "
        f"{len(now['mixtures'])} mixtures of catalog_oracle.json alike")
  return 0


if __name__ == "__main__":
  sys.exit(main())
