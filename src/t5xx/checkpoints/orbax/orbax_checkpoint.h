// t5x checkpoints written through Orbax (t5x's `train.use_orbax = True`,
// its default since 2023): checkpoint_<step>/state/ holds an OCDBT
// database (ocdbt_reader.h) in which each array `N` (the '.'-joined path of
// the train state, "target.encoder.layers_0.attention.query.kernel",
// "state.param_states.…", "state.step") is a zarr v2 array: key "N/.zarray"
// with its metadata and keys "N/0.0", … with its chunks (zstd, gzip or
// raw); state/_METADATA (JSON) lists the tree. Read here into the listing
// CheckpointReader serves, so restore, finetuning, infer, eval and export
// read Orbax checkpoints as they read t5x's legacy ones, slices included.
// Source: orbax-checkpoint 0.6.4 (PyTreeCheckpointHandler with use_ocdbt,
// type_handlers.py) as t5x cc342d4 configures it (checkpoints.py
// OrbaxCheckpointManagerInterface); docs/notes/orbax_ocdbt_format.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <vector>

#include "t5xx/checkpoints/array.h"
#include "t5xx/checkpoints/t5x/msgpack_index.h"
#include "t5xx/checkpoints/orbax/ocdbt_reader.h"
#include "t5xx/checkpoints/zarr_array.h"
#include "t5xx/checkpoints/orbax/zarr_v3.h"

namespace t5xx::checkpoints {

// The directory under checkpoint_<step> Orbax keeps the train state in
// (t5x's item name 'state').
inline constexpr char kOrbaxStateItem[] = "state";

// Whether `checkpoint_dir` is an Orbax checkpoint: it has
// state/manifest.ocdbt (what orbax's is_ocdbt_checkpoint tests) and no
// legacy msgpack `checkpoint` index.
bool IsOrbaxCheckpoint(const std::filesystem::path& checkpoint_dir);

struct OrbaxListing {
  std::shared_ptr<const OcdbtReader> store;  // state/'s database
  // Entries' zarr metadata set, zarr_rel = N (CheckpointReader moves it
  // out into its own listing).
  IndexListing listing;
  // The arrays stored as zarr v3 (Orbax's use_zarr3 = True): their layout
  // (their listing entry's metadata is its `meta`).
  std::map<std::string, ZarrV3Layout> zarr3;
};

// Lists an Orbax checkpoint: every array with its .zarray checked (as
// ReadZarrMetadata checks), and state.step. Throws t5xx::Error naming the
// file or key: OCDBT faults (ocdbt_reader.h), an array _METADATA lists that
// the database lacks, keys that belong to no array, unsupported dtypes or
// codecs (zarr v2 .zarray, and zarr v3 zarr.json as Orbax's use_zarr3 =
// True writes it: zarr_v3.h).
// `sums`: t5xx's checksums sidecar, which state.step's chunk is checked
// against.
OrbaxListing ListOrbaxCheckpoint(const std::filesystem::path& checkpoint_dir,
                                 const ChunkChecksums* sums = nullptr);

// Reads `box` (nullopt: all) of array `name` listed in `orbax`, checking
// each chunk value `sums` lists (t5xx's sidecar of a checkpoint t5xx wrote)
// as ReadZarrRegion checks chunk files.
LoadedArray ReadOrbaxArray(const OrbaxListing& orbax, const std::string& name,
                           const ZarrMetadata& meta, const std::optional<Box>& box,
                           uint64_t* bytes_read = nullptr,
                           const ChunkChecksums* sums = nullptr);

// Writing (SaveCheckpoint with SaveOptions::format = kOrbax; t5x's
// `train.use_orbax = True`). The layout Orbax writes for t5x: each process
// `i` stores its arrays' zarr v2 metadata and chunks as values of its own
// OCDBT database state/ocdbt.process_<i>/ (chunk shapes and boxes as in the
// legacy layout: several processes write disjoint chunks of one array);
// the committing process then writes the root database state/ (a leaf
// node referring to every process's values), state/_METADATA and
// _CHECKPOINT_METADATA.

// Process `process_index`'s part: the arrays it writes (ArrayRef::write;
// arrays stored inline in the legacy layout are zarr arrays here, written
// by process 0), and on process 0 state.step = `step` (int32, int64 when it
// does not fit). `chunks[i]` is arrays[i]'s chunk shape. Returns the CRC-32C
// of every chunk value it stored, keyed "<array>/<chunk key>" (what t5xx's
// checksums sidecar holds, as for the legacy layout's chunk files: Orbax
// itself keeps no checksum of values). Throws t5xx::Error naming the file
// on I/O failure.
ChunkChecksums WriteOrbaxPart(const std::filesystem::path& checkpoint_dir,
                    const std::vector<ArrayRef>& arrays,
                    const std::vector<std::vector<int64_t>>& chunks, const ZarrCodec& codec,
                    int64_t step, int process_index, int num_threads);

// The committing process, once every process's part is written: merges
// state/ocdbt.process_0..count-1 into state/, writes state/_METADATA (every
// array of `arrays` and state.step, as np.ndarray leaves: Orbax restores
// them without a mesh, and t5x's restore, which passes its mesh, as
// jax.Arrays) and _CHECKPOINT_METADATA (`init_time_ns`, now).
void CommitOrbaxState(const std::filesystem::path& checkpoint_dir,
                      const std::vector<ArrayRef>& arrays, int process_count,
                      int64_t init_time_ns);

// state/_METADATA's text for leaves `names` ('.'-joined paths).
std::string OrbaxTreeMetadataJson(const std::vector<std::string>& names);

}  // namespace t5xx::checkpoints
