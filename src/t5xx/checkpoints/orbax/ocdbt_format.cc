// OCDBT's shared encodings: varints, the envelope, data file tables.
#include "t5xx/checkpoints/orbax/ocdbt_format.h"

#include <cstring>

#include "t5xx/checkpoints/zstd_codec.h"
#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/little_endian.h"

namespace t5xx::checkpoints::ocdbt {

void ByteReader::Fail(const std::string& why) const { throw Error(what_ + ": " + why); }

uint64_t ByteReader::Varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= size_) Fail("truncated (a varint runs past the end)");
    const uint8_t b = data_[pos_++];
    if (shift == 63 && (b & 0x7e)) Fail("malformed varint (more than 64 bits)");
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  Fail("malformed varint (more than 10 bytes)");
}

uint8_t ByteReader::U8() {
  if (pos_ >= size_) Fail("truncated");
  return data_[pos_++];
}

uint32_t ByteReader::U32le() {
  if (size_ - pos_ < 4) Fail("truncated");
  pos_ += 4;
  return LoadLittleEndian<uint32_t>(data_ + pos_ - 4);
}

uint64_t ByteReader::U64le() {
  if (size_ - pos_ < 8) Fail("truncated");
  pos_ += 8;
  return LoadLittleEndian<uint64_t>(data_ + pos_ - 8);
}

std::string ByteReader::Bytes(uint64_t n) {
  if (n > size_ - pos_) {
    Fail("truncated (" + std::to_string(n) + " bytes wanted, " + std::to_string(size_ - pos_) +
         " left)");
  }
  std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return s;
}

uint64_t ByteReader::Count(uint64_t min_bytes_each) {
  const uint64_t n = Varint();
  if (min_bytes_each > 0 && n > (size_ - pos_) / min_bytes_each) {
    Fail("truncated or corrupt (a count of " + std::to_string(n) +
         " entries, more than the " + std::to_string(size_ - pos_) + " bytes left can hold)");
  }
  return n;
}

void AppendVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

void AppendU32le(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void AppendU64le(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

namespace {

std::string MagicName(uint32_t magic) {
  switch (magic) {
    case kManifestMagic: return "manifest";
    case kBtreeNodeMagic: return "B+tree node";
    case kVersionNodeMagic: return "version tree node";
  }
  return "object";
}

std::string Hex32(uint32_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 7; i >= 0; --i) s += digits[(v >> (4 * i)) & 15];
  return s;
}

}  // namespace

std::vector<uint8_t> DecodeEnvelope(const std::vector<uint8_t>& raw, uint32_t magic,
                                    const std::string& what, uint64_t max_decoded_bytes) {
  const std::string kind = MagicName(magic);
  if (raw.size() < 4 + 8 + 2 + 4) {
    throw Error(what + ": truncated OCDBT " + kind + " (" + std::to_string(raw.size()) +
                " bytes)");
  }
  ByteReader header(raw.data(), raw.size() - 4, what);
  const uint32_t got = (uint32_t{raw[0]} << 24) | (uint32_t{raw[1]} << 16) |
                       (uint32_t{raw[2]} << 8) | raw[3];
  if (got != magic) {
    throw Error(what + ": not an OCDBT " + kind + " (magic " + Hex32(got) + ", expected " +
                Hex32(magic) + ")");
  }
  header.Bytes(4);
  const uint64_t length = header.U64le();
  if (length != raw.size()) {
    throw Error(what + ": OCDBT " + kind + " says it has " + std::to_string(length) +
                " bytes but " + std::to_string(raw.size()) + " were read; it is truncated");
  }
  const uint32_t crc_stored = LoadLittleEndian<uint32_t>(raw.data() + raw.size() - 4);
  const uint32_t crc = Crc32c(raw.data(), raw.size() - 4);
  if (crc != crc_stored) {
    throw Error(what + ": OCDBT " + kind + " fails its CRC-32C check (stored " +
                Hex32(crc_stored) + ", computed " + Hex32(crc) + "); the file is corrupted");
  }
  const uint64_t version = header.Varint();
  if (version != 0) {
    throw Error(what + ": OCDBT " + kind + " version " + std::to_string(version) +
                " is not supported (only 0, TensorStore's)");
  }
  const uint64_t compression = header.Varint();
  const size_t body_at = raw.size() - 4 - header.left();
  const uint8_t* body = raw.data() + body_at;
  const size_t body_size = header.left();
  if (compression == 0) {
    if (body_size > max_decoded_bytes) {
      throw Error(what + ": OCDBT " + kind + " of " + std::to_string(body_size) +
                  " bytes is larger than max_decoded_node_bytes " +
                  std::to_string(max_decoded_bytes));
    }
    return std::vector<uint8_t>(body, body + body_size);
  }
  if (compression != 1) {
    throw Error(what + ": OCDBT " + kind + " compression format " + std::to_string(compression) +
                " is not supported (only 0 = none and 1 = zstd)");
  }
  return ZstdDecompress(body, body_size, what + " (OCDBT " + kind + ")",
                        static_cast<size_t>(max_decoded_bytes));
}

std::vector<uint8_t> EncodeEnvelope(uint32_t magic, const std::vector<uint8_t>& body,
                                    int zstd_level) {
  std::vector<uint8_t> out;
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<uint8_t>(magic >> (8 * i)));
  AppendU64le(out, 0);  // length, filled in below
  AppendVarint(out, 0);  // version
  AppendVarint(out, zstd_level > 0 ? 1 : 0);
  if (zstd_level > 0) {
    const std::vector<uint8_t> frame = ZstdCompress(body.data(), body.size(), zstd_level);
    out.insert(out.end(), frame.begin(), frame.end());
  } else {
    out.insert(out.end(), body.begin(), body.end());
  }
  const uint64_t length = out.size() + 4;
  for (int i = 0; i < 8; ++i) out[4 + i] = static_cast<uint8_t>(length >> (8 * i));
  AppendU32le(out, Crc32c(out.data(), out.size()));
  return out;
}

namespace {

// A data file path must name a file inside the database directory.
void CheckDataFilePath(ByteReader& r, const std::string& path) {
  bool ok = !path.empty() && path[0] != '/' && path.back() != '/' &&
            path.find('\0') == std::string::npos && path.find('\\') == std::string::npos;
  for (size_t start = 0; ok && start <= path.size();) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string part = path.substr(start, end - start);
    ok = !part.empty() && part != "." && part != "..";
    start = end + 1;
  }
  if (!ok) {
    r.Fail("data file path '" + path +
           "' does not name a file inside the database (absolute, empty, '.' or '..' "
           "components are refused)");
  }
}

}  // namespace

std::vector<DataFile> ReadDataFileTable(ByteReader& r, const std::string& transitive) {
  const uint64_t n = r.Count(2);  // each file has at least a suffix and a base length
  std::vector<uint64_t> prefix(n, 0), suffix(n), base(n);
  for (uint64_t i = 1; i < n; ++i) prefix[i] = r.Varint();
  for (uint64_t i = 0; i < n; ++i) suffix[i] = r.Varint();
  for (uint64_t i = 0; i < n; ++i) base[i] = r.Varint();
  std::vector<DataFile> files(n);
  std::string previous;
  for (uint64_t i = 0; i < n; ++i) {
    if (prefix[i] > previous.size()) {
      r.Fail("data file " + std::to_string(i) + " shares a prefix of " +
             std::to_string(prefix[i]) + " bytes with a path of " +
             std::to_string(previous.size()));
    }
    std::string path = previous.substr(0, prefix[i]) + r.Bytes(suffix[i]);
    if (base[i] > path.size()) {
      r.Fail("data file " + std::to_string(i) + " has a base path of " +
             std::to_string(base[i]) + " bytes in a path of " + std::to_string(path.size()));
    }
    files[i].path = transitive + path;
    files[i].child_transitive = transitive + path.substr(0, base[i]);
    CheckDataFilePath(r, files[i].path);
    previous = std::move(path);
  }
  return files;
}

void AppendDataFileTable(std::vector<uint8_t>& out, const std::vector<std::string>& paths) {
  AppendVarint(out, paths.size());
  for (size_t i = 1; i < paths.size(); ++i) AppendVarint(out, 0);
  for (const std::string& p : paths) AppendVarint(out, p.size());
  for (size_t i = 0; i < paths.size(); ++i) AppendVarint(out, 0);
  for (const std::string& p : paths) out.insert(out.end(), p.begin(), p.end());
}

}  // namespace t5xx::checkpoints::ocdbt
