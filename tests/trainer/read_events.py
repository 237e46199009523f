#!/usr/bin/env python3
"""Reads a TensorBoard log directory the way TensorBoard does; prints JSON.

Used by tests/trainer/summary_writer_test.cc to check t5xx's event files with
tensorboard's own reader (pip install tensorboard; no TensorFlow needed).

Usage: read_events.py LOG_DIR

Prints one JSON object:
  scalars: {tag: [[step, value, wall_time], ...]}   EventAccumulator.Scalars
  texts:   {tag: [[step, text, plugin_name], ...]}  EventAccumulator.Tensors
                                                    (string_val[0], UTF-8)
  files:   [event file names], sorted
  records: total TFRecord records in those files, read with the framing and
           masked CRC-32C of tensorboard.compat.tensorflow_stub (crc_ok: every
           length and data CRC matched)
  file_version: the first record's Event.file_version, per file
  canonical: every record equals Event.FromString(record).SerializeToString()
             (the writer encodes exactly as protobuf does)
  text_pb_equal: every text Summary.Value equals, byte for byte, the one
                 tensorboard.plugins.text.summary_v2.text_pb(tag, text) makes
Exit status: 0 ok, 1 when the directory has no event file (message on
stderr), 77 when tensorboard is not installed.
"""

import json
import os
import struct
import sys

try:
  from tensorboard.backend.event_processing import event_accumulator
  from tensorboard.compat.proto import event_pb2
  from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
  from tensorboard.plugins.text.summary_v2 import text_pb
except ImportError as e:
  print(f"SKIP: {e}; pip install tensorboard (scripts/setup.sh --test)")
  sys.exit(77)


def read_records(path):
  """Yields (data, crc_ok) for each TFRecord record of the file at path."""
  with open(path, "rb") as f:
    blob = f.read()
  pos = 0
  while pos < len(blob):
    header = blob[pos:pos + 8]
    (length,) = struct.unpack("<Q", header)
    (length_crc,) = struct.unpack("<I", blob[pos + 8:pos + 12])
    data = blob[pos + 12:pos + 12 + length]
    (data_crc,) = struct.unpack("<I", blob[pos + 12 + length:pos + 16 + length])
    yield data, (masked_crc32c(header) == length_crc and
                 masked_crc32c(data) == data_crc)
    pos += 16 + length


def main():
  log_dir = sys.argv[1]
  files = sorted(f for f in os.listdir(log_dir) if "tfevents" in f)
  if not files:
    print("no event file in " + log_dir, file=sys.stderr)
    return 1

  out = {"files": files, "records": 0, "crc_ok": True, "canonical": True,
         "file_version": [], "text_pb_equal": True}
  for name in files:
    for i, (data, crc_ok) in enumerate(read_records(os.path.join(log_dir, name))):
      out["records"] += 1
      out["crc_ok"] = out["crc_ok"] and crc_ok
      event = event_pb2.Event.FromString(data)
      out["canonical"] = out["canonical"] and event.SerializeToString() == data
      if i == 0:
        out["file_version"].append(event.file_version)
      for value in event.summary.value:
        if value.HasField("tensor"):
          reference = text_pb(value.tag, value.tensor.string_val[0]).value[0]
          out["text_pb_equal"] = (out["text_pb_equal"] and
                                  reference.SerializeToString() ==
                                  value.SerializeToString())

  # size_guidance 0 for every kind: keep all events (no reservoir sampling).
  guidance = {k: 0 for k in event_accumulator.DEFAULT_SIZE_GUIDANCE}
  acc = event_accumulator.EventAccumulator(log_dir, size_guidance=guidance)
  acc.Reload()
  tags = acc.Tags()
  out["scalars"] = {
      tag: [[e.step, e.value, e.wall_time] for e in acc.Scalars(tag)]
      for tag in tags["scalars"]
  }
  out["texts"] = {
      tag: [[e.step, e.tensor_proto.string_val[0].decode("utf-8"),
             acc.SummaryMetadata(tag).plugin_data.plugin_name]
            for e in acc.Tensors(tag)]
      for tag in tags["tensors"]
  }
  print(json.dumps(out))
  return 0


if __name__ == "__main__":
  sys.exit(main())
