#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/) from
t5xx's test data and small hand-made files. Run from the repository root
with a Python that has msgpack (the test venv of scripts/setup.sh --test):
    python3 fuzz/make_seeds.py
Each seed is a valid (or deliberately near-valid) input in the target's
input layout (see the target's *_fuzzer.cc); the fuzzer mutates from there.
Multi-file inputs separate their files with "\\n%%\\n" (fuzz_support.h)."""
import glob
import gzip
import json
import os
import struct
import zlib

import msgpack

SEP = b"\n%%\n"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")


def gz(data):  # reproducible: no timestamp in the header
    return gzip.compress(data, mtime=0)


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(records):
    out = b""
    for r in records:
        n = struct.pack("<Q", len(r))
        out += n + struct.pack("<I", masked(crc32c(n))) + r + struct.pack("<I", masked(crc32c(r)))
    return out


def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):  # length-delimited
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def tf_example(features):
    entries = b""
    for key, value in sorted(features.items()):
        if isinstance(value, str):
            feature = field(1, field(1, value.encode()))
        else:
            packed = b"".join(varint(v & 0xFFFFFFFFFFFFFFFF) for v in value)
            feature = field(3, field(1, packed))
        entries += field(1, field(1, key.encode()) + field(2, feature))
    return field(1, entries)


# ---- json_lines: option byte, then the file.
c4 = b'{"text": "Hello world.", "url": "https://x", "timestamp": "2019"}\n\n{"text": "caf\\u00e9 \\ud83d\\ude00"}\n'
put("json_lines", "c4_plain", b"\x00" + c4)
put("json_lines", "c4_fields_skip", b"\x03" + c4 + b'{"text": 3}\nnot json\n{"url": "u"}\n')
put("json_lines", "c4_gzip", b"\x01" + gz(c4))
tokens = b'{"inputs": [1, 2, 3], "targets": [4], "text": "x"}\n\n{"inputs": [], "targets": [2147483647]}\n'
put("json_lines", "token_ids", b"\x04" + tokens)
put("json_lines", "token_ids_fields_skip", b"\x07" + tokens + b'{"text": [1.5]}\n{"text": [99999999999]}\n')
# ---- text_lines
text = b"first line\r\nsecond\n\nthird without newline"
put("text_lines", "plain", b"\x00" + text)
put("text_lines", "header", b"\x01" + text)
put("text_lines", "gzip", b"\x02" + gz(text))
# ---- tfrecord
recs = [tf_example({"inputs": [1, 2, 3], "targets": [4, 5], "text": "hi"}),
        tf_example({"inputs": [], "targets": [7]})]
put("tfrecord", "examples", b"\x00" + tfrecord(recs))
put("tfrecord", "examples_selected", b"\x02" + tfrecord(recs))
put("tfrecord", "examples_gzip_skip", b"\x03" + gz(tfrecord(recs)))
bad = bytearray(tfrecord(recs))
bad[20] ^= 0xFF
put("tfrecord", "bad_crc_skip", b"\x01" + bytes(bad))
put("tfrecord", "seqio_cache_validation",
    b"\x00" + read("tests/testdata/seqio_cache/interop_cached_upper/validation.tfrecord-00000-of-00002"))
# ---- gzip_stream
put("gzip_stream", "gzip_text", gz(b"line one\nline two\r\n" * 4))
put("gzip_stream", "zlib", zlib.compress(b"\x00\x01" * 300))
put("gzip_stream", "two_members", gz(b"a\n") + gz(b"b\n"))
put("gzip_stream", "plain", b"not compressed\nat all\n")
# ---- sentencepiece: seeded from tests/testdata/seqio_cache/vocab/ itself
# (fuzz/CMakeLists.txt, extra seed folders); one hand-made near-model.
put("sentencepiece", "empty_model_proto", b"")
# ---- zarr_array: .zarray, then "<key>\n<bytes>" chunk files.
def zarray(shape, chunks, dtype="<f4", compressor={"id": "gzip", "level": 1}, **extra):
    meta = {"chunks": chunks, "compressor": compressor, "dtype": dtype, "fill_value": None,
            "filters": None, "order": "C", "shape": shape, "zarr_format": 2}
    meta.update(extra)
    return json.dumps(meta).encode()

floats = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
put("zarr_array", "gzip_2x3", zarray([2, 3], [2, 3]) + SEP + b"0.0\n" + gz(floats))
put("zarr_array", "zlib_chunked", zarray([4, 3], [2, 3], compressor={"id": "zlib", "level": 1})
    + SEP + b"0.0\n" + zlib.compress(floats) + SEP + b"1.0\n" + zlib.compress(floats))
put("zarr_array", "raw_slash_missing_chunk",
    zarray([3, 2], [2, 2], dtype="<i8", compressor=None, fill_value=7, dimension_separator="/")
    + SEP + b"0/0\n" + struct.pack("<4q", 1, 2, 3, 4))
put("zarr_array", "bf16_scalar", zarray([], [], dtype="bfloat16", compressor=None) + SEP + b"0\n\x80\x3f")
ck = "tests/testdata/t5x_checkpoint/checkpoint_2/"
for d in sorted(glob.glob(os.path.join(ROOT, ck, "*")))[:3]:
    if os.path.isdir(d):
        parts = [read(os.path.join(d, ".zarray"))]
        for c in sorted(os.listdir(d)):
            if c != ".zarray":
                parts.append(c.encode() + b"\n" + read(os.path.join(d, c)))
        put("zarr_array", "t5x_" + os.path.basename(d)[-40:], SEP.join(parts))
# ---- checkpoint_index: the bytes of <dir>/checkpoint; target.a is a valid
# float32 [2, 3] zarr array beside it.
spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": "target.a"},
        "metadata": {"shape": [2, 3]}, "dtype": "float32"}
ndarray = msgpack.ExtType(1, msgpack.packb([[2], "int32", struct.pack("<2i", 5, 6)]))
index = {"version": 3, "optimizer": {"target": {"a": spec, "b": ndarray, "c": 1.5},
                                     "state": {"step": msgpack.ExtType(1, msgpack.packb(
                                         [[], "int32", struct.pack("<i", 42)])),
                                               "param_states": {"a": None}}}}
put("checkpoint_index", "spec_and_inline", msgpack.packb(index))
put("checkpoint_index", "t5x_checkpoint_2", read(ck + "checkpoint"))
# ---- predictions
put("predictions", "lines", b"The cat sat.\nyes\r\n3.5\n\n\xe4\xbd\xa0\xe5\xa5\xbd world\nno\n")
put("predictions", "gzip", gz(b"a b c\n1\n2\n"))
# ---- task_cache: option byte, then info, stats, shards.
cache = "tests/testdata/seqio_cache/interop_cached_upper/"
info = json.loads(read(cache + "info.validation.json"))
put("task_cache", "interop_validation", b"\x00" + SEP.join([
    json.dumps(info).encode(), read(cache + "stats.validation.json"),
    read(cache + "validation.tfrecord-00000-of-00002"),
    read(cache + "validation.tfrecord-00001-of-00002")]))
info_t5xx = dict(info, t5xx_cache_format=1, num_shards=1)
put("task_cache", "t5xx_one_shard_skip", b"\x01" + SEP.join([
    json.dumps(info_t5xx).encode(), b'{"examples": 2}', tfrecord(recs)]))
# ---- gin_config: main.gin, inc.gin, then --gin_bindings.
task_gin = b"""from __gin__ import dynamic_registration
import seqio
include 'inc.gin'
VOCAB = @seqio.SentencePieceVocabulary()
seqio.SentencePieceVocabulary.sentencepiece_model_file = 'spiece.model'
my_task/seqio.Task:
  source = @seqio.TextLineDataSource()
  output_features = {'targets': @seqio.Feature()}
seqio.TextLineDataSource.split_to_filepattern = {'train': %DATA}
seqio.Feature.vocabulary = %VOCAB
t5xx.seqio.register.tasks = [@my_task/seqio.Task()]
"""
put("gin_config", "task_with_include", task_gin + SEP + b"DATA = '/tmp/x.txt'\nN = [1, (2, 3.5), {'a': None}]\n"
    + SEP + b"seqio.Feature.add_eos = False")
# The stock configs (configs/) are seeds too, read from there
# (fuzz/CMakeLists.txt, extra seed folders).

# ---- orbax_checkpoint: state/manifest.ocdbt, state/d/0, state/d/1,
# state/_METADATA. A hand-written OCDBT encoder (TensorStore's format,
# docs/notes/orbax_ocdbt_format.md), independent of t5xx's: uncompressed
# nodes; chunk values raw or as zstd frames of one raw block (RFC 8878).
OCDBT_MANIFEST, OCDBT_NODE = 0x0CDB3A2A, 0x0CDB20DE


def envelope(magic, body):
    head = struct.pack(">I", magic) + struct.pack("<Q", 0) + b"\x00\x00"
    raw = head + body
    raw = raw[:4] + struct.pack("<Q", len(raw) + 4) + raw[12:]
    return raw + struct.pack("<I", crc32c(raw))


def file_table(paths):
    out = varint(len(paths)) + b"".join(varint(0) for _ in paths[1:])
    out += b"".join(varint(len(p)) for p in paths) + b"".join(varint(0) for _ in paths)
    return out + b"".join(p.encode() for p in paths)


def leaf(entries, paths):  # entries: sorted [(key, bytes) or (key, (file, offset, length))]
    b = b"\x00" + file_table(paths) + varint(len(entries))
    b += b"".join(varint(0) for _ in entries[1:])
    b += b"".join(varint(len(k)) for k, _ in entries) + b"".join(k.encode() for k, _ in entries)
    b += b"".join(varint(len(v) if isinstance(v, bytes) else v[2]) for _, v in entries)
    b += b"".join(varint(0 if isinstance(v, bytes) else 1) for _, v in entries)
    b += b"".join(varint(v[0]) for _, v in entries if not isinstance(v, bytes))
    b += b"".join(varint(v[1]) for _, v in entries if not isinstance(v, bytes))
    return envelope(OCDBT_NODE, b + b"".join(v for _, v in entries if isinstance(v, bytes)))


def interior(children, path):  # children: [(key, offset, length)] in `path`
    b = b"\x01" + file_table([path]) + varint(len(children))
    b += b"".join(varint(0) for _ in children[1:]) + b"".join(varint(len(k)) for k, _, _ in children)
    b += b"".join(varint(0) for _ in children) + b"".join(k.encode() for k, _, _ in children)
    b += b"".join(varint(0) for _ in children)
    b += b"".join(varint(o) for _, o, _ in children) + b"".join(varint(n) for _, _, n in children)
    return envelope(OCDBT_NODE, b + b"".join(varint(1) for _ in range(3 * len(children))))


def manifest(path, offset, length, height, keys):
    b = bytes(range(16)) + varint(0) + varint(1024) + varint(100000000) + b"\x04" + varint(0)
    b += file_table([path]) + varint(1) + varint(1) + bytes([height])
    b += b"".join(varint(v) for v in (0, offset, length, keys, length, 0)) + struct.pack("<Q", 0)
    return envelope(OCDBT_MANIFEST, b + varint(0))


def zstd_raw(data):  # one frame, single segment, content size in 1 byte, one raw block
    assert len(data) < 256
    return b"\x28\xb5\x2f\xfd\x20" + bytes([len(data)]) + struct.pack("<I", (len(data) << 3) | 1)[:3] + data


def orbax_metadata(names):
    tree = {str(tuple(n.split("."))): {"key_metadata": [{"key": k, "key_type": 2} for k in n.split(".")],
                                      "value_metadata": {"value_type": "jax.Array", "skip_deserialize": False}}
            for n in names}
    return json.dumps({"tree_metadata": tree, "use_zarr3": False}).encode()


def orbax_zarray(shape, chunks, dtype, compressor):
    return json.dumps({"chunks": chunks, "compressor": compressor, "dimension_separator": ".", "dtype": dtype,
                       "fill_value": None, "filters": None, "order": "C", "shape": shape,
                       "zarr_format": 2}, sort_keys=True, separators=(",", ":")).encode()


zstd1 = {"id": "zstd", "level": 1}
step = struct.pack("<i", 7)
w = struct.pack("<6f", *[0.5 * i for i in range(6)])
big = struct.pack("<300f", *[float(i) for i in range(300)])  # 1200 bytes: out of line in d/1
entries = sorted([
    ("state.step/.zarray", orbax_zarray([], [], "<i4", zstd1)), ("state.step/0", zstd_raw(step)),
    ("target.big/.zarray", orbax_zarray([300], [300], "<f4", None)), ("target.big/0", (0, 0, len(big))),
    ("target.w/.zarray", orbax_zarray([2, 3], [1, 3], "<f4", zstd1)),
    ("target.w/0.0", zstd_raw(w[:12])), ("target.w/1.0", zstd_raw(w[12:]))])
node = leaf(entries, ["d/1"])
meta = orbax_metadata(["state.step", "target.big", "target.w"])
put("orbax_checkpoint", "leaf", SEP.join([manifest("d/0", 0, len(node), 0, len(entries)), node, big, meta]))
# The same keys under a two-level tree: two leaves and an interior node in d/0.
left, right = leaf(entries[:3], ["d/1"]), leaf(entries[3:], ["d/1"])
top = interior([("", 0, len(left)), (entries[3][0], len(left), len(right))], "d/0")
put("orbax_checkpoint", "two_levels", SEP.join(
    [manifest("d/0", len(left) + len(right), len(top), 1, len(entries)), left + right + top, big, meta]))
# Orbax's zarr v3 layout (use_zarr3 = True): zarr.json, a shard of two inner
# chunks (the second missing: an index entry of all ones) and its index.
v3_meta = json.dumps({
    "chunk_grid": {"configuration": {"chunk_shape": [4]}, "name": "regular"},
    "chunk_key_encoding": {"name": "default"},
    "codecs": [{"configuration": {"chunk_shape": [2], "codecs": [
        {"configuration": {"endian": "little"}, "name": "bytes"},
        {"configuration": {"checksum": False, "level": 3}, "name": "zstd"}],
        "index_codecs": [{"configuration": {"endian": "little"}, "name": "bytes"}, {"name": "crc32c"}]},
        "name": "sharding_indexed"}],
    "data_type": "float32", "fill_value": 0.0, "node_type": "array", "shape": [4], "zarr_format": 3},
    sort_keys=True, separators=(",", ":")).encode()
inner0 = zstd_raw(struct.pack("<2f", 1.5, -2.0))
index = struct.pack("<QQ", 0, len(inner0)) + struct.pack("<QQ", 2**64 - 1, 2**64 - 1)
shard = inner0 + index + struct.pack("<I", crc32c(index))
v3_entries = sorted([("state.step/.zarray", orbax_zarray([], [], "<i4", zstd1)),
                     ("state.step/0", zstd_raw(step)), ("target.v/c/0", shard),
                     ("target.v/zarr.json", v3_meta)])
v3_node = leaf(v3_entries, ["d/1"])
put("orbax_checkpoint", "zarr3", SEP.join([manifest("d/0", 0, len(v3_node), 0, len(v3_entries)), v3_node, b"",
                                           orbax_metadata(["state.step", "target.v"])]))
