// t5x's scanned checkpoint layout (t5x/examples/scalable_t5, umT5: the
// layers of a stack run under flax's scan and their parameters are stacked)
// beside the per-layer layout t5xx's network uses, both ways. Framework-
// free: arrays are raw little-endian bytes.
//
//   per layer (t5xx)                          scanned (t5x, param_scan_axis a)
//   encoder.layers_<i>.<name>                 encoder.encoder.<name>, layer i at axis a
//   decoder.layers_<i>.<name>                 decoder.decoder.<name>
//   attention query/key/value kernels         3-D [embed, heads, kv] per layer
//     [embed, heads*kv]
//   attention out kernels [heads*kv, embed]   3-D [heads, kv, embed] per layer
//
// Other arrays (token_embedder, the final norms, logits_dense) are the same
// in both. Source: t5x/examples/scalable_t5/network.py (scan_with_axes with
// axis_name 'layers', params at param_scan_axis) and layers.py (DenseGeneral
// keeps the heads and kv axes); the notes in docs/notes/scalable_t5_layout.md,
// checked against t5x's own arrays by tests/checkpoints/scanned_layers_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "t5xx/checkpoints/array.h"

namespace t5xx::checkpoints {

struct ScanLayout {
  int64_t num_heads = 0;  // splits heads*kv in the attention kernels
  int param_scan_axis = 1;
};

// Per-layer arrays (names without "target.") stacked into the scanned
// layout. Every layer of a stack must have the same names, shapes and
// dtype. Throws t5xx::Error naming the array for a stack whose layers are
// not 0..L-1, a missing or differently shaped layer, an axis outside the
// stacked rank, or an attention kernel whose heads*kv is not a multiple of
// num_heads.
std::map<std::string, LoadedArray> StackLayers(const std::map<std::string, LoadedArray>& arrays,
                                               const ScanLayout& layout);

// The inverse: scanned arrays unstacked to per-layer arrays (2-D attention
// kernels). Throws t5xx::Error naming the array when its rank is too small
// for param_scan_axis or an attention kernel is not 4-D when stacked.
std::map<std::string, LoadedArray> UnstackLayers(const std::map<std::string, LoadedArray>& arrays,
                                                 const ScanLayout& layout);

struct ScanConversion {
  int64_t step = 0;
  int64_t arrays_in = 0, arrays_out = 0;  // target arrays read and written
  int64_t state_arrays_dropped = 0;       // optimizer state not carried over
  std::string checkpoint_dir;             // the one written
};

// Converts the parameters (`target.*`) of a t5x checkpoint between the
// per-layer and the scanned layout (`to_scanned`), writing
// `output_model_dir`/checkpoint_<step> with the same step. The optimizer
// state is not carried over (its slots' shapes depend on how Adafactor
// factors each layout): restore the result with
// utils.RestoreCheckpointConfig.strict = False. num_heads comes from the
// relative position tables ([heads, buckets] per layer, [heads, layers,
// buckets] stacked). Throws t5xx::Error naming the checkpoint when it has
// no per-layer tables (not a scalable_t5 checkpoint), is already in the
// asked layout, or what StackLayers / UnstackLayers / SaveCheckpoint throw.
ScanConversion ConvertScanLayout(const std::string& checkpoint_dir,
                                 const std::string& output_model_dir, bool to_scanned,
                                 int param_scan_axis);

}  // namespace t5xx::checkpoints
