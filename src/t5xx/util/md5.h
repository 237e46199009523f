// MD5 message digests (RFC 1321), for seqio's seeds: seqio_cache_tasks
// derives each task's and each source shard's preprocessing seed from
// hashlib.md5 of the task name (seqio/scripts/cache_tasks_main.py,
// seqio/beam_utils.py PreprocessTask). Not for security. Framework-free.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace t5xx {

// A 16-byte MD5 digest, in the byte order of Python's hashlib digest().
using Md5Digest = std::array<uint8_t, 16>;

// The MD5 digest of `data` (any length, any bytes). Never throws.
// Md5("abc") = 900150983cd24fb0d6963f7d28e17f72 (RFC 1321, appendix A.5).
Md5Digest Md5(std::string_view data);

// Incremental MD5: Update any number of times, then Final once.
class Md5Hasher {
 public:
  Md5Hasher();
  void Update(const void* data, size_t size);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  // The digest of everything given to Update. The hasher must not be used
  // afterwards (it holds the padded state).
  Md5Digest Final();

 private:
  void Block(const uint8_t* block);  // one 64-byte block

  uint32_t state_[4];
  uint64_t length_ = 0;  // bytes given to Update
  uint8_t buffer_[64];
  size_t buffered_ = 0;
};

// Lower-case hexadecimal of a digest (32 characters), as hexdigest().
std::string Md5Hex(const Md5Digest& digest);

}  // namespace t5xx
