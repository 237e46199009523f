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
#include <optional>
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

// ---- The train state: parameters and optimizer slots (checkpoint paths) --
//
// A slot of a per-layer parameter (Adafactor's v_row, v_col, v, m; optax's
// mu, nu) stacks like its parameter, on the axis where the 'layers' axis
// lands once the dims the slot drops are deleted (t5x/adafactor.py: v_row =
// delete(shape, col_dims), v_col = delete(shape, row_dims); 'layers' is a
// BATCH dim, never dropped). E.g. the q kernel [16, L, 2, 8] (embed, layers,
// heads, kv) has v_row [16, L] and v_col [L, 2, 8]. A (1,) placeholder
// (an unused slot) is one (1,) array in both layouts.

// A train-state array of the checkpoint (path "target.<param>" or
// "state.<...>"), with whether it is stored inline in the msgpack index.
struct StateArrayBytes {
  LoadedArray array;
  bool store_inline = false;
};

// Where one per-layer array (a parameter or one of its slots) sits in the
// scanned layout: layer `layer` of `path`, whose shape is `shape`; this
// layer's part is `layer_shape` (the array's bytes, row-major, reshaped:
// 3-D attention kernels) at index `layer` of `axis`. axis = -1: a (1,)
// placeholder every layer shares (`shape` = (1,)).
struct ScannedPlace {
  std::string path;
  std::vector<int64_t> shape, layer_shape;
  int axis = 0;
  int64_t layer = 0;
};

// The scanned places of a per-layer train state. `params`: every parameter
// (t5xx name, no "target.") with its per-layer shape; the layer count of a
// stack is its number of layers_<i>.
class ScannedStatePlan {
 public:
  ScannedStatePlan(const std::map<std::string, std::vector<int64_t>>& params, ScanLayout layout);

  // nullopt for an array of no per-layer parameter (token_embedder's, the
  // final norms', state.step). `path` names a per-layer parameter
  // "<stack>.layers_<i>.<rest>" as "target.<p>", "state.param_states.<p>.<slot>"
  // (Adafactor) or "state.param_states.<k>.<mu|nu>.<p>" (optax). `param_dims`:
  // the parameter dims a slot keeps (optim::StateArray::param_dims); unset:
  // its shape says (the parameter's: all; (1,): a placeholder; v_row: the
  // embed dim, v_col: the others, as t5x's standard_logical_factor_rules
  // factor scalable_t5's kernels). Throws t5xx::Error naming the path when
  // its shape fits none of these, or when the slot keeps a part of the heads
  // and kv dims of a joined [embed, heads*kv] kernel.
  std::optional<ScannedPlace> PlaceOf(const std::string& path, const std::vector<int64_t>& shape,
                                      const std::optional<std::vector<int64_t>>& param_dims) const;

 private:
  std::map<std::string, std::vector<int64_t>> params_;
  std::map<std::string, int64_t> layers_;  // stack -> layer count
  ScanLayout layout_;
};

// A per-layer train state (every "target.*" parameter present) in the
// scanned layout: parameters and slots stacked, other arrays as they are.
// `slot_param_dims`: optional param_dims per slot path (PlaceOf). Throws
// what PlaceOf throws, and t5xx::Error naming the array for layers of one
// stacked array that disagree in shape or dtype or a missing layer.
std::map<std::string, StateArrayBytes> StackTrainState(
    const std::map<std::string, StateArrayBytes>& arrays, const ScanLayout& layout,
    const std::map<std::string, std::vector<int64_t>>& slot_param_dims = {});

// The inverse for a scanned train state: parameters through UnstackLayers,
// slots split per layer as PlaceOf places them (their parameter dims found
// from their shapes as PlaceOf does without param_dims). Throws t5xx::Error
// naming the slot when its shape fits none of its parameter's slot shapes.
std::map<std::string, StateArrayBytes> UnstackTrainState(
    const std::map<std::string, StateArrayBytes>& arrays, const ScanLayout& layout);

// The t5xx name of the scanned array a per-layer parameter belongs to
// ("encoder.layers_3.mlp.wo.kernel" -> "encoder.encoder.mlp.wo.kernel"), or
// nullopt for a parameter of no stack.
std::optional<std::string> ScannedNameOf(const std::string& per_layer_name);

struct ScanConversion {
  int64_t step = 0;
  int64_t arrays_in = 0, arrays_out = 0;  // target arrays read and written
  int64_t state_arrays = 0;               // optimizer state arrays converted
  std::string checkpoint_dir;             // the one written
};

// Converts a t5x checkpoint -- parameters (`target.*`) and optimizer state
// (StackTrainState / UnstackTrainState) -- between the per-layer and the
// scanned layout (`to_scanned`), writing `output_model_dir`/checkpoint_<step>
// with the same step; arrays keep whether they are inline. The slots are
// those t5x's Adafactor keeps for the scanned layout (the per-layer layout
// of t5xx's scan_layers = True training); a checkpoint of scan_layers =
// False training (whose 2-D MLP kernels below 128 are not factored) gives
// slots of another shape: restore the result with
// utils.RestoreCheckpointConfig.strict = False there. num_heads comes from the
// relative position tables ([heads, buckets] per layer, [heads, layers,
// buckets] stacked). Throws t5xx::Error naming the checkpoint when it has
// no per-layer tables (not a scalable_t5 checkpoint), is already in the
// asked layout, or what StackLayers / UnstackLayers / SaveCheckpoint throw.
ScanConversion ConvertScanLayout(const std::string& checkpoint_dir,
                                 const std::string& output_model_dir, bool to_scanned,
                                 int param_scan_axis);

}  // namespace t5xx::checkpoints
