"""Writes vocab_100extra.model: vocab.model with the 100 extra ids inside the
model, as t5's gs://t5-data/vocabs/cc_all.32000.100extra/ holds cc_all.32000
with them -- the pieces seqio's SentencePieceVocabulary adds for
extra_ids=100 (seqio/vocabularies.py: "▁<extra_id_{i}>", user-defined,
score 0, i from 99 down to 0). t5x's model gins name the 100extra file while
t5's tasks use the base model with extra_ids=100; tests/cli/ checks that
t5xx takes them for one vocabulary, as seqio's equality does.

  ~/.cache/t5xx/t5x-venv/bin/python3 tests/testdata/t5_catalog/make_vocab_100extra.py
"""
import os

from sentencepiece import sentencepiece_model_pb2

here = os.path.dirname(os.path.abspath(__file__))
model = sentencepiece_model_pb2.ModelProto()
with open(os.path.join(here, "vocab.model"), "rb") as f:
  model.ParseFromString(f.read())
for i in reversed(range(100)):
  model.pieces.add(piece=f"\u2581<extra_id_{i}>", score=0.0,
                   type=sentencepiece_model_pb2.ModelProto.SentencePiece.USER_DEFINED)
with open(os.path.join(here, "vocab_100extra.model"), "wb") as f:
  f.write(model.SerializeToString())
