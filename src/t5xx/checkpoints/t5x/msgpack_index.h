// The msgpack `checkpoint` index of a t5x checkpoint: {'version': 3,
// 'optimizer': {...}} with every array either inline (flax ndarray ext) or a
// TensorStore zarr spec pointing at its directory (t5x/checkpoints.py,
// Checkpointer.save / _get_state_dict_for_save; flax/serialization.py).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/checkpoints/array.h"
#include "t5xx/checkpoints/zarr_array.h"

namespace t5xx::checkpoints {

// Version written to the msgpack index; checkpoints with a larger version are
// refused on load (same meaning as t5x's checkpoints.VERSION).
inline constexpr int kCheckpointVersion = 3;

// The deepest msgpack nesting an index may have (t5x's are under 15 levels:
// optimizer/target/encoder/layers_0/attention/query/kernel and a spec); a
// deeper one is refused as corrupt before it is walked.
inline constexpr int kMaxIndexDepth = 64;

// Builds the 'optimizer' tree of an index from dotted array paths, checking
// the paths as they come, then encodes it.
class IndexBuilder {
 public:
  // The tree starts with the reserved leaf optimizer.state.step.
  IndexBuilder();
  // Adds `array` under its dotted path; `array` is kept by pointer and must
  // outlive Encode. `chunks` is its zarr chunk shape (unused when inline).
  // Throws t5xx::Error for an empty path component, a path given twice, or a
  // path nested under (or a prefix of) another array's path.
  void Add(const ArrayRef& array, std::vector<int64_t> chunks);
  // The msgpack bytes of the index: inline arrays as flax ndarray ext (type
  // 1), zarr arrays as TensorStore specs (compressor {'id': 'gzip', 'level':
  // gzip_level}, or nil when nullopt), `step` as an inline int32 scalar (int64
  // if it does not fit).
  std::string Encode(int64_t step, std::optional<int> gzip_level) const;

 private:
  struct Leaf {
    const ArrayRef* array = nullptr;  // a user array, or
    std::vector<int64_t> chunks;      // (zarr only)
    bool is_step = false;             // optimizer.state.step
  };
  struct Node {
    std::map<std::string, Node> children;
    std::optional<Leaf> leaf;
  };
  void Insert(const std::string& path, Leaf leaf);
  Node root_;
};

// What an index holds: its version, every array by dotted path under
// 'optimizer' except "state.step" (zarr arrays read from their directories),
// and the step when the index has one.
struct IndexContents {
  int version = 0;
  std::map<std::string, LoadedArray> arrays;
  std::optional<int64_t> step;
};

// One array of an index: where it is stored and what it holds.
struct IndexEntry {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  // Stored in the index itself (flax ndarray ext or a msgpack number).
  std::optional<LoadedArray> inline_array;
  // Otherwise a zarr directory: as the spec names it (relative to the
  // checkpoint directory, no trailing '/'), resolved, and its metadata.
  std::string zarr_rel;
  std::filesystem::path zarr_dir;
  std::optional<ZarrMetadata> zarr;
};

// An index read without its zarr data: version, step, and every array by
// dotted path under 'optimizer' except "state.step" (with each zarr
// array's .zarray read and checked).
struct IndexListing {
  int version = 0;
  std::map<std::string, IndexEntry> entries;
  std::optional<int64_t> step;
};

// The value of a scalar array (int32, int64, or a whole float32) as a step
// number; throws t5xx::Error naming `what` for anything else.
int64_t ScalarToInt(const LoadedArray& a, const std::string& what);

// Reads `dir`/checkpoint and the .zarray of every zarr array it points at;
// throws what ReadIndex throws, except chunk errors.
IndexListing ListIndex(const std::filesystem::path& dir, const std::string& checkpoint_dir);

// Reads `box` (nullopt: all) of one listed array, checking chunks against
// `sums` (when given) and adding the stored bytes read to *bytes_read.
LoadedArray ReadEntry(const IndexEntry& entry, const std::string& at,
                      const std::optional<Box>& box, const ChunkChecksums* sums,
                      uint64_t* bytes_read);

// Reads `dir`/checkpoint and the zarr arrays it points at (relative to `dir`).
// `checkpoint_dir` is the directory as the caller spelled it (for errors).
// Throws t5xx::Error for a missing or malformed index, version >
// kCheckpointVersion ("written by a newer t5x/t5xx"), Orbax checkpoints,
// unsupported msgpack ext types, dtypes, TensorStore or kvstore drivers, and
// any error of ReadZarrArray.
IndexContents ReadIndex(const std::filesystem::path& dir,
                        const std::string& checkpoint_dir);

}  // namespace t5xx::checkpoints
