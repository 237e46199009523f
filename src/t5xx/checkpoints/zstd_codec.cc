// zstd frames through libzstd's streaming API.
#include "t5xx/checkpoints/zstd_codec.h"

#include <zstd.h>

#include <algorithm>
#include <memory>

#include "t5xx/util/error.h"

namespace t5xx::checkpoints {

std::vector<uint8_t> ZstdCompress(const void* data, size_t size, int level) {
  if (level < 1 || level > ZSTD_maxCLevel()) {
    throw Error("zstd level " + std::to_string(level) + " is outside 1.." +
                std::to_string(ZSTD_maxCLevel()));
  }
  std::vector<uint8_t> out(ZSTD_compressBound(size));
  const size_t n = ZSTD_compress(out.data(), out.size(), data, size, level);
  if (ZSTD_isError(n)) throw Error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

std::vector<uint8_t> ZstdDecompress(const void* data, size_t size, const std::string& what,
                                    size_t max_size) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!ctx) throw Error("zstd: out of memory decompressing " + what);
  // A window larger than the output may hold is refused by the frame header
  // check below rather than allocated (a hostile header may ask for 2 GiB).
  ZSTD_DCtx_setParameter(ctx.get(), ZSTD_d_windowLogMax, 27);
  // Sized for what the frame says it holds when it says so (and it fits the
  // limit), else grown as output comes; one byte more than allowed tells
  // "too long" from "exactly max_size".
  const unsigned long long declared = ZSTD_getFrameContentSize(data, size);
  size_t initial = std::min<size_t>(std::max<size_t>(size * 4, 4096), max_size + 1);
  if (declared != ZSTD_CONTENTSIZE_ERROR && declared != ZSTD_CONTENTSIZE_UNKNOWN &&
      declared <= max_size) {
    initial = static_cast<size_t>(declared) + 1;
  }
  std::vector<uint8_t> out(initial);
  ZSTD_inBuffer in{data, size, 0};
  size_t produced = 0;
  size_t ret = 1;
  while (true) {
    if (produced == out.size()) {
      if (out.size() > max_size) {
        throw Error("zstd data in " + what + " decompresses to more than " +
                    std::to_string(max_size) + " bytes; it is corrupted");
      }
      out.resize(std::min(out.size() * 2, max_size + 1));
    }
    ZSTD_outBuffer o{out.data(), out.size(), produced};
    ret = ZSTD_decompressStream(ctx.get(), &o, &in);
    produced = o.pos;
    if (ZSTD_isError(ret)) {
      throw Error("corrupt zstd data in " + what + " (" + ZSTD_getErrorName(ret) + ")");
    }
    if (produced > max_size) {
      throw Error("zstd data in " + what + " decompresses to more than " +
                  std::to_string(max_size) + " bytes; it is corrupted");
    }
    if (ret == 0 && in.pos == in.size) break;  // every frame finished, input used up
    if (in.pos == in.size && produced < out.size()) {
      throw Error("truncated zstd data in " + what);
    }
  }
  out.resize(produced);
  return out;
}

}  // namespace t5xx::checkpoints
