// See record_frame.h.
#include "t5xx/util/files/record_frame.h"

#include "t5xx/util/crc32c.h"
#include "t5xx/util/files/protobuf_wire.h"

namespace t5xx {

void AppendTFRecordFrame(std::string* out, std::string_view data) {
  const size_t start = out->size();
  PutFixedLE(out, data.size(), 8);
  PutFixedLE(out, MaskedCrc32c(out->data() + start, 8), 4);
  out->append(data.data(), data.size());
  PutFixedLE(out, MaskedCrc32c(data.data(), data.size()), 4);
}

std::string TFRecordFrame(std::string_view data) {
  std::string frame;
  frame.reserve(data.size() + kTFRecordHeaderSize + kTFRecordFooterSize);
  AppendTFRecordFrame(&frame, data);
  return frame;
}

}  // namespace t5xx
