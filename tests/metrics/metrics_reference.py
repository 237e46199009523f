"""The reference side of t5xx's metric checks: answers the JSON requests of
tests/metrics/metrics_requests.h with the Python libraries, called with the
arguments t5's t5/evaluation/metrics.py passes them (sacrebleu.corpus_bleu,
rouge_score.rouge_scorer / scoring, scipy.stats, editdistance, NLTK's
PorterStemmer), and builds the fixed request list.

Used by make_metrics_goldens.py (writes metrics_goldens.json) and
metrics_live_test.py (compares t5xx with the libraries live).
"""

import collections
import importlib.util
import math
import re

import editdistance
import numpy as np
import regex
import sacrebleu
import scipy.stats
from nltk.stem import porter
from rouge_score import rouge_scorer
from rouge_score import scoring

DEFAULT_ROUGE_KEYS = ["rouge1", "rouge2", "rougeLsum"]


def load_qa_utils(t5_src):
  """t5/evaluation/qa_utils.py from a t5 checkout, without importing t5
  (whose __init__ needs TensorFlow)."""
  spec = importlib.util.spec_from_file_location(
      "t5_qa_utils", f"{t5_src}/t5/evaluation/qa_utils.py")
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


# --- t5's metric functions, as calls into the libraries -------------------


def t5_bleu(targets, predictions, tokenizer="intl"):
  # t5 metrics.bleu: lists of references are passed on as they are.
  if isinstance(targets[0], list):
    targets = [list(t) for t in targets]
  else:
    targets = [targets]
  return {"bleu": sacrebleu.corpus_bleu(
      predictions, targets, smooth_method="exp", smooth_value=0.0, force=False,
      lowercase=False, tokenize=tokenizer, use_effective_order=False).score}


def t5_prepare_summary_rouge(summary):
  return summary.replace(" . ", " .\n")


def t5_rouge_scores(targets, predictions, score_keys, use_stemmer):
  scorer = rouge_scorer.RougeScorer(rouge_types=score_keys, use_stemmer=use_stemmer)
  return [scorer.score(target=t5_prepare_summary_rouge(t),
                       prediction=t5_prepare_summary_rouge(p))
          for p, t in zip(predictions, targets)]


def t5_rouge_mean(targets, predictions, score_keys, use_stemmer):
  # t5 metrics.rouge_mean
  sums = collections.defaultdict(float)
  count = 0
  for scores in t5_rouge_scores(targets, predictions, score_keys, use_stemmer):
    count += 1
    for k, v in scores.items():
      sums[k] += v.fmeasure
  return {k: sums[k] / count * 100 for k in score_keys}


def t5_rouge_bootstrap(targets, predictions, score_keys, use_stemmer, seed):
  """t5 metrics.rouge: BootstrapAggregator low/mid/high F ×100, with NumPy's
  global random state seeded (t5 leaves it unseeded)."""
  aggregator = scoring.BootstrapAggregator()
  for scores in t5_rouge_scores(targets, predictions, score_keys, use_stemmer):
    aggregator.add_scores(scores)
  np.random.seed(seed)
  result = aggregator.aggregate()
  return {k: (result[k].low.fmeasure * 100, result[k].mid.fmeasure * 100,
              result[k].high.fmeasure * 100) for k in score_keys}


def t5_edit_distance(targets, predictions, lower=True):
  distances = []
  for pred, target in zip(predictions, targets):
    if lower:
      pred, target = pred.lower(), target.lower()
    distances.append(editdistance.distance(re.split("[^\\w]", pred),
                                           re.split("[^\\w]", target)))
  return {"min_edit": min(distances), "max_edit": max(distances),
          "mean_edit": float(np.mean(distances)),
          "median_edit": float(np.median(distances)), "sum_edit": sum(distances)}


def _nan_to_none(x):
  x = float(x)
  return None if math.isnan(x) else x


def _numbers(xs):
  return [float("nan") if x is None else x for x in xs]


def _ranges(pred):
  out, start = [], None
  for c in range(0x110001):
    if 0xD800 <= c <= 0xDFFF:
      continue
    inside = c < 0x110000 and pred(chr(c))
    if inside and start is None:
      start = c
    if not inside and start is not None:
      out.append([start, c - 1])
      start = None
  return out


def answer(request, qa_utils=None):
  """The library answer to one request; None when it needs t5's qa_utils
  and none was given."""
  fn = request["fn"]
  try:
    if fn == "bleu":
      return t5_bleu(request["targets"], request["predictions"], request.get("tokenizer", "intl"))
    if fn == "corpus_bleu":
      s = sacrebleu.corpus_bleu(
          request["hypotheses"], request["references"],
          smooth_method=request.get("smooth_method", "exp"),
          smooth_value=request.get("smooth_value"), force=False,
          lowercase=request.get("lowercase", False), tokenize=request.get("tokenize", "13a"),
          use_effective_order=request.get("use_effective_order", False))
      return {"score": s.score, "counts": [float(c) for c in s.counts],
              "totals": [float(t) for t in s.totals],
              "precisions": [float(p) for p in s.precisions], "bp": float(s.bp),
              "sys_len": s.sys_len, "ref_len": s.ref_len}
    if fn == "tokenize":
      metric = sacrebleu.BLEU(tokenize=request["tokenizer"])
      return [metric.tokenizer(line) for line in request["lines"]]
    if fn in ("rouge", "rouge_mean"):
      return t5_rouge_mean(request["targets"], request["predictions"],
                           request.get("score_keys", DEFAULT_ROUGE_KEYS),
                           request.get("use_stemmer", False))
    if fn == "rouge_score":
      scorer = rouge_scorer.RougeScorer(request["rouge_types"],
                                        use_stemmer=request.get("use_stemmer", False))
      scores = scorer.score(request["target"], request["prediction"])
      return {k: [float(v.precision), float(v.recall), float(v.fmeasure)]
              for k, v in scores.items()}
    if fn == "rouge_tokenize":
      scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=request.get("use_stemmer", False))
      return [scorer._tokenizer.tokenize(t) for t in request["texts"]]
    if fn == "porter_stem":
      stemmer = porter.PorterStemmer(mode=request.get("mode", "NLTK_EXTENSIONS"))
      return [stemmer.stem(w) for w in request["words"]]
    if fn == "pearson_corrcoef":
      r = scipy.stats.pearsonr(_numbers(request["targets"]), _numbers(request["predictions"]))[0]
      return {"pearson_corrcoef": _nan_to_none(100 * r)}
    if fn == "spearman_corrcoef":
      r = scipy.stats.spearmanr(_numbers(request["targets"]), _numbers(request["predictions"]))[0]
      return {"spearman_corrcoef": _nan_to_none(100 * r)}
    if fn == "edit_distance":
      return t5_edit_distance(request["targets"], request["predictions"],
                              request.get("lower", True))
    if fn in ("squad", "trivia_qa", "normalize_squad", "normalize_trivia_qa"):
      if qa_utils is None:
        return None
      norm = (qa_utils.normalize_squad if "squad" in fn else qa_utils.normalize_trivia_qa)
      if fn.startswith("normalize"):
        return [norm(t) for t in request["texts"]]
      targets = [[norm(t) for t in u] for u in request["targets"]]
      predictions = [norm(p) for p in request["predictions"]]
      return {k: float(v) for k, v in qa_utils.qa_metrics(targets, predictions).items()}
    if fn == "python_lower":
      return [t.lower() for t in request["texts"]]
    if fn == "unicode_ranges":
      out = {"space": _ranges(str.isspace),
             "word": _ranges(lambda x: re.match(r"\w", x) is not None),
             "punctuation": _ranges(lambda x: regex.match(r"\p{P}", x) is not None),
             "symbol": _ranges(lambda x: regex.match(r"\p{S}", x) is not None),
             "number": _ranges(lambda x: regex.match(r"\p{N}", x) is not None)}
      out["lower"] = [[c, chr(c).lower()] for c in range(0x110000)
                      if not 0xD800 <= c <= 0xDFFF and chr(c).lower() != chr(c)]
      return out
  except (ValueError, ZeroDivisionError, IndexError, TypeError) as e:
    return {"error": f"{type(e).__name__}: {e}"}
  raise ValueError(f"unknown request fn {fn!r}")


# --- the fixed inputs -----------------------------------------------------

# (reference, prediction) for BLEU: punctuation, numbers, HTML entities,
# Unicode punctuation/symbols, CJK, emoji, empty sides, repeated n-grams.
BLEU_PAIRS = [
    ("The cat sat on the mat.", "The cat sat on the mat."),
    ("The cat sat on the mat.", "A cat was sitting on the mat!"),
    ("It costs $1,000.50 today.", "It costs $1,000 today ."),
    ("In 2019, sales rose 3.5% to 1.2 million.", "Sales rose 3.5 % in 2019."),
    ("He said, &quot;hello&quot; &amp; left.", "He said \"hello\" & left."),
    ("Das Haus ist groß – nicht klein.", "Das Haus ist groß - nicht klein."),
    ("\u201cQuoted\u201d text\u2026 and \u2018more\u2019.", "\"Quoted\" text... and 'more'."),
    ("Prices: \u20ac5, \u00a33, \u00a5100 + tax = total",
     "Prices : \u20ac 5 , \u00a3 3 , \u00a5 100 + tax = total"),
    ("日本語の文です。これはテストです。", "日本語の文です。"),
    ("emoji \U0001F600 test \U0001F44D\U0001F3FD!", "emoji \U0001F600 test \U0001F44D!"),
    ("the the the the the the the", "the the the the"),
    ("", "something"),
    ("a b c d e f g", ""),
    ("well-known 10-20 range", "well known 10 - 20 range"),
    ("<skipped> line with skip", "line with skip"),
    ("multi\nline text-\nbroken", "multi line textbroken"),
    ("trailing spaces   \t", "trailing spaces"),
    ("Ελληνικά: ΟΔΟΣ και οδός.", "Ελληνικά : οδός και ΟΔΟΣ ."),
    ("math 2+2=4 and x^2", "math 2 + 2 = 4 and x ^ 2"),
    ("URL http://example.com/a?b=c&d=e", "URL http : / / example . com"),
    ("tabs\tand\u00a0nbsp\u2003em space", "tabs and nbsp em space"),
    ("Numbers 1.5, 2.25. End.", "Numbers 1.5 , 2.25 . End ."),
    ("O'Neil's dog's toy", "O ' Neil ' s dog's toy"),
    ("repeat repeat repeat a b a b a b", "a b a b repeat"),
    ("x", "x"),
    ("(parenthesised) [bracketed] {braced}", "parenthesised bracketed braced"),
    ("\ufb01 ligature and \uff21\uff22\uff23 fullwidth\uff01", "fi ligature and ABC fullwidth!"),
    ("dash\u2014em dash\u2013en dash", "dash \u2014 em dash \u2013 en dash"),
    ("3.14159 is pi, 2.718 is e.", "pi is 3.14159 and e is 2.718"),
    ("\u00bfQu\u00e9 tal? \u00a1Bien!", "Qu\u00e9 tal ? Bien !"),
    ("a.b,c.d", "a . b , c . d"),
    ("1.a 2,b a.1 b,2 .5 ,5", "1 . a 2 , b"),
    ("1-2 a-b 3 -4", "1 - 2"),
    ("&lt;tag&gt; &amp;amp; &quot;", "<tag> &amp; \""),
    ("Il a dit\u00a0: \u00ab\u00a0oui\u00a0\u00bb.", "Il a dit : \u00ab oui \u00bb ."),
    ("She scored 9/10 (90%) on 03/04/2021.", "She scored 90 % on 03/04/2021 ."),
]

# (target, prediction) summaries for ROUGE; " . " separates sentences as in
# t5's data, some use newlines, some are empty.
ROUGE_PAIRS = [
    ("The quick brown fox jumps over the lazy dog . It was fast .",
     "A quick brown dog jumps over the lazy fox . It was slow ."),
    ("Police killed the gunman . The victims were identified .",
     "The gunman was killed by police . Victims identified today ."),
    ("running runners ran quickly . generously generalized relational hopefulness",
     "run runner running quick . generous generalization relate hope"),
    ("", "nothing here"),
    ("something here", ""),
    ("Numbers 2019 and 3.5 percent . Rise of 10 %", "numbers 2019 , 3 . 5 percent rise"),
    ("Caf\u00e9 r\u00e9sum\u00e9 na\u00efve \u0130stanbul \u212aELVIN \u212a",
     "cafe resume naive istanbul kelvin k"),
    ("the the the cat . the cat", "the cat the cat the cat"),
    ("line one\nline two\n\nline three", "line two\nline one"),
    (" . leading dot . . double", "leading dot double ."),
    ("Scientists at the university announced on Tuesday that they had discovered a new "
     "species of frog in the rainforest . The frog is bright green and about two "
     "centimetres long . It was found near a river after heavy rains . Researchers "
     "believe the species is endangered because of habitat loss .",
     "A new species of bright green frog has been discovered in the rainforest by "
     "university scientists . The two centimetre frog , found near a river , may be "
     "endangered . Habitat loss threatens it , researchers say ."),
    ("A B C D", "D C B A"),
    ("happiness is relational and conditional . hopefulness", "happy relate condition hope"),
    ("ALL CAPS SUMMARY . WITH TWO SENTENCES .", "all caps summary with two sentences"),
    ("don't stop-believing: it's 100% real!", "dont stop believing its 100 real"),
]

# (targets, predictions) for the correlations: ties, two points, constants,
# NaN, large offsets.
CORRELATION_CASES = [
    ([0, 2], [0, 1]),
    ([0, 2, 1], [0, 1, 2]),
    ([0.1, 0.5, 0.3, 0.9, 0.7, 0.2], [0.2, 0.4, 0.35, 0.8, 0.9, 0.1]),
    ([1, 2, 2, 3, 3, 3, 4], [1, 1, 2, 2, 3, 3, 3]),
    ([1e6, -2e6, 3.5e6, 0, 1], [2.5, -1.0, 4.0, 0.5, 0.4]),
    ([1, 1, 1], [1, 2, 3]),
    ([3, 1], [1, 3]),
    ([5.0], [2.0]),
    ([1, None, 3], [1, 2, 3]),
    ([1e9 + 1, 1e9 + 2, 1e9 + 4], [1, 2, 3]),
    ([4.6, 3.2, 0.0, 5.0, 2.4, 1.8, 3.8, 4.2, 0.6, 2.0, 3.0, 4.0, 1.0, 3.2, 2.8, 5.0,
      0.4, 3.6, 2.2, 4.8],
     [4.2, 3.0, 0.5, 4.9, 2.0, 2.5, 3.3, 4.4, 1.1, 1.7, 3.1, 3.9, 0.8, 2.9, 3.4, 4.7,
      0.0, 3.8, 2.1, 4.1]),
    ([-3, -1, -2, 10], [-30, -10, -20, 100]),
]

EDIT_PAIRS = [
    ("This is a sentence.", "This is a different SENTENCE."),
    ("Non-ascii separate.", "Non-ascii\U0001F642separate."),
    ("ΟΔΟΣ ΟΔΟΣ", "οδος οδοσ"),
    ("\u0130stanbul", "istanbul"),
    ("hello,  world", "hello world"),
    ("", ""),
    ("", "a b"),
    ("a_b c-d", "a b c d"),
    ("\u00dcn\u00efc\u00f6d\u00e9 \u00c0\u00c9\u00ce", "\u00fcn\u00efc\u00f6d\u00e9 \u00e0\u00e9\u00ee"),
    ("x\u00b2 \u00bd cup", "x2 1/2 cup"),
    ("caf\u00e9", "cafe\u0301"),
    ("The end.", "the end"),
]

QA_CASES = [  # (targets, predictions): t5's metrics_test cases, then Unicode
    ([["", "this is a string"], ["this is a string", "this is a string"]],
     ["this is a string", "this is a string"]),
    ([["this is a string"] * 2, ["this is a string"] * 2], ["", ""]),
    ([["big moose", "hippo"], ["correct1"], ["correct2.1", "correct2.2"], ["a", "b"]],
     ["\u2018a big  Moose!\u2018", "wrong", "correct2.2", "c"]),
    ([["abc abd", "$$$$"]], ["abd"]),
    ([["The Caf\u00e9"], ["\u00dcn\u00efted States"], ["\u2018quoted\u2019 answer"],
      ["an apple", "apple pie"], ["ΟΔΟΣ"], ["\u0130stanbul"], ["snake_case word\u00b4s"]],
     ["caf\u00e9", "the \u00fcn\u00efted states!", "quoted answer", "An Apple",
      "οδος", "istanbul", "snake case words"]),
]

LOWER_TEXTS = ["ΟΔΟΣ", "Σ", "ΑΣ.", "ΑΣΑ", "Α'Σ", "ΑΣ'", "ΑΣ'Α", "ͅΣ", "AΣ\u0345", "\u0130",
               "\u1e9e", "\u212a", "\u2126", "\u01c5", "\u1f88", "Σ\u0308", "MiXeD Case ÀÉ"]


def porter_words():
  """Words for the stemmer check: NLTK's irregular forms, short and y-heavy
  words, and for every suffix a rule looks at up to 12 GCIDE headwords
  ending in it, plus an even sample of the rest (when GCIDE is installed)."""
  words = ["sky", "skies", "dying", "lying", "tying", "news", "innings", "inning",
           "outings", "outing", "cannings", "canning", "howe", "proceed", "exceed",
           "succeed", "a", "is", "be", "ties", "dies", "lied", "tied", "yy", "yyyy",
           "syzygy", "toy", "ivy", "by", "say", "sayying", "caresses", "ponies",
           "caress", "cats", "feed", "agreed", "plastered", "bled", "motoring", "sing",
           "conflated", "troubled", "sized", "hopping", "tanned", "falling", "hissing",
           "fizzed", "failing", "filing", "happy", "relational", "conditional",
           "rational", "valenci", "hesitanci", "digitizer", "conformabli", "radicalli",
           "differentli", "vileli", "analogousli", "vietnamization", "predication",
           "operator", "feudalism", "decisiveness", "hopefulness", "callousness",
           "formaliti", "sensitiviti", "sensibiliti", "triplicate", "formative",
           "formalize", "electriciti", "electrical", "hopeful", "goodness", "revival",
           "allowance", "inference", "airliner", "gyroscopic", "adjustable",
           "defensible", "irritant", "replacement", "adjustment", "dependent",
           "adoption", "homologou", "communism", "activate", "angulariti",
           "homologous", "effective", "bowdlerize", "probate", "rate", "cease",
           "controll", "roll", "generously", "archaeology", "fully", "beautifully",
           "logically", "2019s", "abc123ing", "x1ed", "caf\u00e9s", "\u00c9TUDES"]
  try:
    with open("/usr/share/dictd/gcide.index", encoding="utf-8", errors="replace") as f:
      heads = sorted({line.split("\t")[0].lower() for line in f
                      if re.fullmatch(r"[A-Za-z]+", line.split("\t")[0])})
  except OSError:
    return words
  suffixes = ["sses", "ies", "ss", "s", "ied", "eed", "ed", "ing", "at", "bl", "iz", "y",
              "ational", "tional", "enci", "anci", "izer", "bli", "abli", "alli", "entli",
              "eli", "ousli", "ization", "ation", "ator", "alism", "iveness", "fulness",
              "ousness", "aliti", "iviti", "biliti", "fulli", "logi", "icate", "ative",
              "alize", "iciti", "ical", "ful", "ness", "al", "ance", "ence", "er", "ic",
              "able", "ible", "ant", "ement", "ment", "ent", "sion", "tion", "ou", "ism",
              "ate", "iti", "ous", "ive", "ize", "e", "ll"]
  chosen = []
  for suffix in suffixes:
    chosen += [w for w in heads if w.endswith(suffix)][:12]
  chosen += heads[::max(1, len(heads) // 400)]
  seen = set(words)
  for w in chosen:
    if w not in seen:
      seen.add(w)
      words.append(w)
  return words


def requests():
  """The fixed request list (porter_words() reads GCIDE when installed)."""
  refs = [r for r, _ in BLEU_PAIRS]
  preds = [p for _, p in BLEU_PAIRS]
  out = []
  t5_ref = "this is a string"
  out += [  # t5's metrics_test cases
      {"fn": "bleu", "targets": [t5_ref, t5_ref], "predictions": [t5_ref, t5_ref]},
      {"fn": "bleu", "targets": [t5_ref, t5_ref], "predictions": ["", ""]},
      {"fn": "bleu", "targets": [["", t5_ref], [t5_ref, ""]], "predictions": [t5_ref, t5_ref]},
      {"fn": "rouge", "targets": [t5_ref, t5_ref], "predictions": [t5_ref, t5_ref]},
      {"fn": "rouge", "targets": [t5_ref, t5_ref], "predictions": ["", ""]},
  ]
  for tok in ("intl", "13a", "none"):
    out.append({"fn": "bleu", "targets": refs, "predictions": preds, "tokenizer": tok})
    out.append({"fn": "tokenize", "tokenizer": tok, "lines": refs + preds})
  for tok in ("intl", "13a"):
    for r, p in BLEU_PAIRS:  # each pair as its own corpus, with the statistics
      out.append({"fn": "corpus_bleu", "hypotheses": [p], "references": [[r]], "tokenize": tok,
                  "smooth_method": "exp", "smooth_value": 0.0})
  for method, value, eff, lower in (("floor", None, False, False), ("add-k", None, True, False),
                                    ("none", None, False, True), ("floor", 0.3, True, True),
                                    ("exp", None, True, False)):
    out.append({"fn": "corpus_bleu", "hypotheses": preds, "references": [refs],
                "tokenize": "13a", "smooth_method": method, "smooth_value": value,
                "use_effective_order": eff, "lowercase": lower})
  # Several references per example: square (as t5's test) and not square.
  out.append({"fn": "bleu", "targets": [refs[0:3], preds[0:3], refs[3:6]],
              "predictions": preds[0:3]})
  out.append({"fn": "bleu", "targets": [refs[0:3], preds[0:3]], "predictions": preds[0:2]})
  out.append({"fn": "corpus_bleu", "hypotheses": preds[:8], "references": [refs[:8], preds[8:16]],
              "tokenize": "intl"})
  rt = [t for t, _ in ROUGE_PAIRS]
  rp = [p for _, p in ROUGE_PAIRS]
  for stem in (False, True):
    out.append({"fn": "rouge", "targets": rt, "predictions": rp, "use_stemmer": stem})
    out.append({"fn": "rouge_mean", "targets": rt, "predictions": rp, "use_stemmer": stem,
                "score_keys": ["rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"]})
    out.append({"fn": "rouge_tokenize", "texts": rt + rp, "use_stemmer": stem})
    for t, p in ROUGE_PAIRS:
      out.append({"fn": "rouge_score", "target": t, "prediction": p, "use_stemmer": stem,
                  "rouge_types": ["rouge1", "rouge2", "rougeL", "rougeLsum"]})
  words = porter_words()
  for mode in ("NLTK_EXTENSIONS", "MARTIN_EXTENSIONS", "ORIGINAL_ALGORITHM"):
    out.append({"fn": "porter_stem", "mode": mode, "words": words})
  for fn in ("pearson_corrcoef", "spearman_corrcoef"):
    for t, p in CORRELATION_CASES:
      out.append({"fn": fn, "targets": t, "predictions": p})
  et = [t for t, _ in EDIT_PAIRS]
  ep = [p for _, p in EDIT_PAIRS]
  for lower in (True, False):
    out.append({"fn": "edit_distance", "targets": et, "predictions": ep, "lower": lower})
    for t, p in EDIT_PAIRS:
      out.append({"fn": "edit_distance", "targets": [t], "predictions": [p], "lower": lower})
  for fn in ("squad", "trivia_qa"):
    for t, p in QA_CASES:
      out.append({"fn": fn, "targets": t, "predictions": p})
  qa_texts = sorted({s for t, p in QA_CASES for s in sum(t, []) + p})
  out.append({"fn": "normalize_squad", "texts": qa_texts})
  out.append({"fn": "normalize_trivia_qa", "texts": qa_texts})
  out.append({"fn": "python_lower", "texts": LOWER_TEXTS + et + ep})
  return out
