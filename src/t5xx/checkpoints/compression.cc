// zarr chunk compression with zlib: gzip out, gzip or zlib in.
#include "t5xx/checkpoints/compression.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {

namespace {

// zlib: streams of any size, any gzip member layout.
std::vector<uint8_t> ZlibGzipCompress(const void* data, size_t size, int level) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw Error("zlib deflateInit2 failed (gzip level " +
                std::to_string(level) + "; valid levels are 0-9)");
  }
  std::vector<uint8_t> out(deflateBound(&zs, static_cast<uLong>(
                               std::min<size_t>(size, 1u << 30))) + 64);
  const uint8_t* in = static_cast<const uint8_t*>(data);
  size_t remaining = size;
  size_t produced = 0;
  int ret = Z_OK;
  do {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(remaining, 1u << 30));
    zs.next_in = const_cast<Bytef*>(in);
    zs.avail_in = chunk;
    in += chunk;
    remaining -= chunk;
    const int flush = remaining == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      if (produced == out.size()) out.resize(out.size() * 2);
      zs.next_out = out.data() + produced;
      zs.avail_out = static_cast<uInt>(
          std::min<size_t>(out.size() - produced, 1u << 30));
      const uInt before = zs.avail_out;
      ret = deflate(&zs, flush);
      produced += before - zs.avail_out;
      if (ret == Z_STREAM_ERROR) {
        deflateEnd(&zs);
        throw Error("zlib deflate failed");
      }
    } while (zs.avail_in > 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
  } while (remaining > 0);
  deflateEnd(&zs);
  out.resize(produced);
  return out;
}

std::vector<uint8_t> ZlibInflate(const void* data, size_t size,
                                 const std::string& what, size_t expected_size) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {  // +32: gzip or zlib header
    throw Error("zlib inflateInit2 failed");
  }
  // At most one byte more than may come out, to tell "too much" from "all".
  const size_t max_size = expected_size ? expected_size : kMaxInflatedBytes;
  std::vector<uint8_t> out(expected_size ? expected_size + 1
                                         : std::min(std::max<size_t>(size * 4, 1024),
                                                    max_size + 1));
  size_t produced = 0;
  const uint8_t* in = static_cast<const uint8_t*>(data);
  size_t remaining = size;
  int ret = Z_OK;
  while (ret != Z_STREAM_END) {
    if (zs.avail_in == 0) {
      if (remaining == 0) break;
      const uInt chunk =
          static_cast<uInt>(std::min<size_t>(remaining, 1u << 30));
      zs.next_in = const_cast<Bytef*>(in);
      zs.avail_in = chunk;
      in += chunk;
      remaining -= chunk;
    }
    if (produced == out.size()) {
      if (produced > max_size) {
        inflateEnd(&zs);
        throw Error("compressed data in " + what + " inflates to more than " +
                    std::to_string(max_size) + " bytes" +
                    (expected_size ? " (the size it should have); it is corrupt or not "
                                     "what it should be"
                                   : " (the limit)"));
      }
      out.resize(std::min(out.size() * 2, max_size + 1));
    }
    zs.next_out = out.data() + produced;
    zs.avail_out =
        static_cast<uInt>(std::min<size_t>(out.size() - produced, 1u << 30));
    const uInt before = zs.avail_out;
    ret = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
      inflateEnd(&zs);
      throw Error("corrupt compressed data in " + what + " (zlib error " +
                  std::to_string(ret) + ")");
    }
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && remaining == 0) break;
  }
  inflateEnd(&zs);
  if (ret != Z_STREAM_END) {
    throw Error("truncated compressed data in " + what);
  }
  out.resize(produced);
  return out;
}

}  // namespace

// libdeflate (Debian's libdeflate, a whole-buffer DEFLATE about twice as
// fast as zlib here) for the usual case; zlib for what it does not cover:
// buffers over 2 GiB, an unknown output size, several gzip members, and the
// messages of corrupt streams.
std::vector<uint8_t> GzipCompress(const void* data, size_t size, int level) {
  if (level < 0 || level > 9 || size > (size_t{1} << 31)) {
    return ZlibGzipCompress(data, size, level);  // (throws for a bad level)
  }
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  if (!c) throw Error("libdeflate: cannot allocate a level-" + std::to_string(level) + " compressor");
  std::vector<uint8_t> out(libdeflate_gzip_compress_bound(c, size));
  const size_t n = libdeflate_gzip_compress(c, data, size, out.data(), out.size());
  libdeflate_free_compressor(c);
  if (n == 0) return ZlibGzipCompress(data, size, level);
  out.resize(n);
  return out;
}

std::vector<uint8_t> Inflate(const void* data, size_t size, const std::string& what,
                             size_t expected_size) {
  const uint8_t* in = static_cast<const uint8_t*>(data);
  if (expected_size > 0 && expected_size <= (size_t{1} << 31) && size >= 2) {
    std::vector<uint8_t> out(expected_size);
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    if (d) {
      size_t in_used = 0, out_size = 0;
      libdeflate_result r;
      if (in[0] == 0x1f && in[1] == 0x8b) {
        r = libdeflate_gzip_decompress_ex(d, data, size, out.data(), out.size(), &in_used,
                                          &out_size);
      } else {
        r = libdeflate_zlib_decompress_ex(d, data, size, out.data(), out.size(), &in_used,
                                          &out_size);
      }
      libdeflate_free_decompressor(d);
      if (r == LIBDEFLATE_SUCCESS && in_used == size && out_size == expected_size) return out;
    }
  }
  return ZlibInflate(data, size, what, expected_size);
}

}  // namespace t5xx::checkpoints
