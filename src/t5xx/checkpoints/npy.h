// NumPy's .npy format (format version 1.0: the magic "\x93NUMPY", a
// little-endian uint16 header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (P, E), } padded with
// spaces to a multiple of 64 bytes and ended by '\n', then the C-order
// data), as numpy.save writes and numpy.load reads it -- and prompt-tuning's
// numpy checkpoints (prompt_tuning/train/utils.py Checkpointer.save_numpy):
// <MODEL_DIR>/numpy_checkpoints/checkpoint_<step>/<dotted parameter name>,
// one file per parameter its save_paths match (np.save to an open file: no
// ".npy" added). Framework-free: no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t5xx::checkpoints {

// A float array read from a .npy file: float32 as stored, float64 ('<f8')
// and float16 ('<f2') converted (np_load's restore_dtype=None keeps the
// file's dtype; t5xx's prompt is float32, as prompts.from_array makes it).
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  // C order
};

// Writes float32 `values` of `shape` to `path`, durably (file_io.h
// WriteFile: written, fsync'ed, closed). Throws t5xx::Error naming the path
// when the sizes disagree or the write fails.
void WriteNpy(const std::string& path, const std::vector<int64_t>& shape,
              const std::vector<float>& values);

// Reads `path`. Throws t5xx::Error naming the path and what is wrong: no such
// file, not a .npy file, a format version other than 1.x/2.x, a dtype other
// than little-endian f2/f4/f8, fortran_order True, or fewer bytes than the
// shape needs.
NpyArray ReadNpy(const std::string& path);

// One array of a numpy checkpoint: its dotted parameter name (the file
// name), shape and float32 values (C order).
struct NpyEntry {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// prompt-tuning's numpy checkpoint of `step`: each entry to
// <model_dir>/numpy_checkpoints/checkpoint_<step>/<name>, written into a
// temporary directory first, synced and renamed (an older directory of that
// step is moved aside to <dir>.backup-<seconds>, as prompt-tuning does).
// Returns the directory. Throws t5xx::Error naming the path that failed.
std::string SaveNumpyCheckpoint(const std::string& model_dir, int64_t step,
                                const std::vector<NpyEntry>& arrays);

}  // namespace t5xx::checkpoints
