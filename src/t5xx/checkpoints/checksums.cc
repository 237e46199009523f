// The checksums sidecar (t5xx_checksums.json): written, read, verified.
#include "t5xx/checkpoints/checksums.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/util/crc32c.h"
#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"

namespace t5xx::checkpoints {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}
}  // namespace

void WriteChecksums(const fs::path& dir, const ChunkChecksums& sums, const std::string& name) {
  json files = json::object();
  for (const auto& [name, crc] : sums) files[name] = Hex(crc);
  const json j = {{"format", "t5xx.checksums"},
                  {"version", kChecksumsVersion},
                  {"algorithm", "crc32c"},
                  {"files", files}};
  const std::string text = j.dump(1);
  WriteFile(dir / name, text.data(), text.size());
}

std::optional<ChunkChecksums> ReadChecksums(const fs::path& dir, const std::string& name) {
  const fs::path file = dir / name;
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  const std::vector<uint8_t> raw = ReadFile(file, "checkpoint checksums");
  json j;
  std::string parse_error;
  if (!ParseJson(std::string_view(reinterpret_cast<const char*>(raw.data()), raw.size()), &j,
                 &parse_error)) {
    throw Error("malformed checkpoint checksums " + file.string() + ": " + parse_error +
                " (delete the file to read the checkpoint unchecked)");
  }
  try {
    const std::optional<int64_t> read_version = JsonInteger(j.at("version"));
    if (!read_version) {
      throw Error("malformed checkpoint checksums " + file.string() + ": version " +
                  DumpJson(j.at("version")) +
                  " is not an integer (delete the file to read the checkpoint unchecked)");
    }
    const int64_t version = *read_version;
    if (version > kChecksumsVersion) {
      throw Error(file.string() + " was written by a newer t5xx (version " +
                  std::to_string(version) + " > " + std::to_string(kChecksumsVersion) +
                  "); upgrade t5xx to read this checkpoint");
    }
    if (j.at("algorithm").get<std::string>() != "crc32c") {
      throw Error(file.string() + ": unknown checksum algorithm " + j.at("algorithm").dump());
    }
    ChunkChecksums sums;
    for (const auto& [name, hex] : j.at("files").items()) {
      sums[name] = static_cast<uint32_t>(std::stoul(hex.get<std::string>(), nullptr, 16));
    }
    return sums;
  } catch (const json::exception& e) {
    throw Error("malformed checkpoint checksums " + file.string() + ": " + e.what() +
                " (delete the file to read the checkpoint unchecked)");
  } catch (const std::logic_error& e) {
    throw Error("malformed checkpoint checksums " + file.string() + ": " + e.what() +
                " (delete the file to read the checkpoint unchecked)");
  }
}

void VerifyChecksum(const ChunkChecksums* sums, const std::string& name, const void* data,
                    size_t size, const fs::path& file, const std::string& what) {
  if (!sums) return;
  const auto it = sums->find(name);
  if (it == sums->end()) return;
  const uint32_t crc = Crc32c(data, size);
  if (crc != it->second) {
    throw Error(what + " " + file.string() + " is corrupted (crc32c " + Hex(crc) + ", expected " +
                Hex(it->second) + " from " + kChecksumsFile + ", " + std::to_string(size) +
                " bytes); restore an earlier checkpoint (to resume from the one before it, move this "
                "checkpoint directory out of MODEL_DIR)");
  }
}

}  // namespace t5xx::checkpoints
