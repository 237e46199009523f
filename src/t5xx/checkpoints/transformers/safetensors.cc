// See safetensors.h.
#include "t5xx/checkpoints/transformers/safetensors.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"
#include "t5xx/util/little_endian.h"

namespace t5xx::checkpoints {
namespace {

// The safetensors library's own limit on the header (safetensors/src/tensor.rs).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

std::string Bad(const std::string& path, const std::string& what) {
  return path + ": not a valid safetensors file: " + what;
}

// The entry `name` of the header, checked against the format's rules.
SafetensorsEntry ParseSafetensorsEntry(const std::string& path, const std::string& name,
                                       const nlohmann::json& v) {
  const std::string where = "tensor '" + name + "'";
  T5XX_CHECK(v.is_object() && v.contains("dtype") && v.contains("shape") &&
                 v.contains("data_offsets"),
             Bad(path, where + " needs \"dtype\", \"shape\" and \"data_offsets\""));
  SafetensorsEntry e;
  T5XX_CHECK(v["dtype"].is_string(), Bad(path, where + ": \"dtype\" is not a string"));
  e.dtype = v["dtype"].get<std::string>();
  const size_t item = SafetensorsDTypeSize(e.dtype);
  T5XX_CHECK(item > 0, Bad(path, where + ": unknown dtype '" + e.dtype +
                                     "' (the format's: F64, F32, F16, BF16, I64, I32, I16, "
                                     "I8, U8, BOOL, ...)"));
  const nlohmann::json& shape = v["shape"];
  T5XX_CHECK(shape.is_array() && shape.size() <= 64,
             Bad(path, where + ": \"shape\" is not a list of at most 64 sizes"));
  unsigned __int128 bytes = item;
  for (const auto& d : shape) {
    T5XX_CHECK(d.is_number_unsigned() && d.get<uint64_t>() < (uint64_t{1} << 62),
               Bad(path, where + ": \"shape\" holds " + d.dump() + ", not a size"));
    e.shape.push_back(d.get<int64_t>());
    bytes *= d.get<uint64_t>();
    if (bytes > (static_cast<unsigned __int128>(1) << 62)) bytes = static_cast<unsigned __int128>(1) << 62;
  }
  const nlohmann::json& off = v["data_offsets"];
  T5XX_CHECK(off.is_array() && off.size() == 2 && off[0].is_number_unsigned() &&
                 off[1].is_number_unsigned(),
             Bad(path, where + ": \"data_offsets\" is not [begin, end]"));
  e.begin = off[0].get<uint64_t>();
  e.end = off[1].get<uint64_t>();
  T5XX_CHECK(e.begin <= e.end && e.end - e.begin == bytes,
             Bad(path, where + ": data_offsets [" + std::to_string(e.begin) + ", " +
                           std::to_string(e.end) + "] do not hold dtype " + e.dtype +
                           " x shape " + shape.dump()));
  return e;
}

}  // namespace

size_t SafetensorsDTypeSize(const std::string& dtype) {
  static const std::map<std::string, size_t> kSizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"F64", 8},  {"I64", 8}, {"U64", 8}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path) {
  std::error_code ec;
  T5XX_CHECK(std::filesystem::is_regular_file(path, ec),
             path + ": no such file (a safetensors file was expected)");
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  T5XX_CHECK(!ec, path + ": cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  T5XX_CHECK(in.good(), path + ": cannot open it");
  T5XX_CHECK(file_size >= 8, Bad(path, "shorter than its 8-byte header length"));
  uint8_t len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  const uint64_t n = LoadLittleEndian<uint64_t>(len_bytes);
  T5XX_CHECK(n <= kMaxHeaderBytes,
             Bad(path, "a header of " + std::to_string(n) + " bytes (the format allows at most " +
                           std::to_string(kMaxHeaderBytes) + ")"));
  T5XX_CHECK(n <= file_size - 8, Bad(path, "the header's length (" + std::to_string(n) +
                                               " bytes) runs past the end of the file"));
  std::string header(n, '\0');
  in.read(header.data(), static_cast<std::streamsize>(n));
  T5XX_CHECK(in.good(), path + ": cannot read the header");
  data_start_ = 8 + n;
  // Names given twice at the top level would silently keep one tensor.
  std::set<std::string> seen;
  std::string repeated;
  nlohmann::json::parser_callback_t note_keys = [&](int depth, nlohmann::json::parse_event_t ev,
                                                    nlohmann::json& parsed) {
    if (ev == nlohmann::json::parse_event_t::key && depth == 1 && parsed.is_string() &&
        !seen.insert(parsed.get<std::string>()).second && repeated.empty()) {
      repeated = parsed.get<std::string>();
    }
    return true;
  };
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(header, note_keys);
  } catch (const nlohmann::json::exception& e) {
    throw Error(Bad(path, std::string("the header is not JSON: ") + e.what()));
  }
  T5XX_CHECK(h.is_object(), Bad(path, "the header is not a JSON object"));
  T5XX_CHECK(repeated.empty(), Bad(path, "tensor '" + repeated + "' is named twice"));
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") {
      T5XX_CHECK(it->is_object(), Bad(path, "\"__metadata__\" is not an object"));
      for (auto m = it->begin(); m != it->end(); ++m) {
        T5XX_CHECK(m->is_string(),
                   Bad(path, "\"__metadata__\" value '" + m.key() + "' is not a string"));
        metadata_[m.key()] = m->get<std::string>();
      }
      continue;
    }
    T5XX_CHECK(!it.key().empty(), Bad(path, "a tensor has an empty name"));
    tensors_[it.key()] = ParseSafetensorsEntry(path, it.key(), *it);
  }
  // The data part must be indexed exactly: no gap, no overlap, no excess.
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto& [name, e] : tensors_) order.emplace_back(e.begin, name);
  std::sort(order.begin(), order.end());
  uint64_t at = 0;
  for (const auto& [begin, name] : order) {
    const SafetensorsEntry& e = tensors_.at(name);
    T5XX_CHECK(e.begin == at, Bad(path, "tensor '" + name + "' starts at byte " +
                                            std::to_string(e.begin) + " of the data, expected " +
                                            std::to_string(at) +
                                            (e.begin < at ? " (it overlaps the one before)"
                                                          : " (bytes before it are unindexed)")));
    at = e.end;
  }
  const uint64_t data_size = file_size - data_start_;
  T5XX_CHECK(at == data_size,
             Bad(path, at > data_size
                           ? "the tensors need " + std::to_string(at) + " bytes of data but the "
                                 "file holds " + std::to_string(data_size) + " (truncated?)"
                           : std::to_string(data_size - at) +
                                 " bytes at the end belong to no tensor"));
}

std::vector<uint8_t> SafetensorsReader::Read(const std::string& name) const {
  auto it = tensors_.find(name);
  T5XX_CHECK(it != tensors_.end(), path_ + ": holds no tensor '" + name + "'");
  const SafetensorsEntry& e = it->second;
  std::vector<uint8_t> out(e.end - e.begin);
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(data_start_ + e.begin));
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
  T5XX_CHECK(in.good() || out.empty(),
             path_ + ": cannot read tensor '" + name + "' (did the file change since it was opened?)");
  return out;
}

void WriteSafetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  std::vector<const SafetensorsTensor*> sorted;
  for (const auto& t : tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(),
            [](const SafetensorsTensor* a, const SafetensorsTensor* b) { return a->name < b->name; });
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t at = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const SafetensorsTensor& t = *sorted[i];
    T5XX_CHECK(!t.name.empty() && t.name != "__metadata__",
               path + ": a tensor needs a name other than '' and '__metadata__'");
    T5XX_CHECK(i == 0 || sorted[i - 1]->name != t.name, path + ": tensor '" + t.name +
                                                            "' is given twice");
    const size_t item = SafetensorsDTypeSize(t.dtype);
    T5XX_CHECK(item > 0, path + ": tensor '" + t.name + "' has unknown dtype '" + t.dtype + "'");
    uint64_t bytes = item;
    for (int64_t d : t.shape) bytes *= static_cast<uint64_t>(d);
    h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + bytes}}};
    at += bytes;
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  const std::filesystem::path final_path(path);
  const std::filesystem::path tmp = final_path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    T5XX_CHECK(out.good(), path + ": cannot create " + tmp.string());
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>((header.size() >> (8 * i)) & 0xff);
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    for (const SafetensorsTensor* t : sorted) {
      uint64_t bytes = SafetensorsDTypeSize(t->dtype);
      for (int64_t d : t->shape) bytes *= static_cast<uint64_t>(d);
      T5XX_CHECK(t->data != nullptr || bytes == 0, path + ": tensor '" + t->name + "' has no data");
      out.write(static_cast<const char*>(t->data), static_cast<std::streamsize>(bytes));
    }
    out.flush();
    T5XX_CHECK(out.good(), path + ": cannot write " + tmp.string() + " (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, final_path, ec);
  T5XX_CHECK(!ec, path + ": cannot rename " + tmp.string() + " to it: " + ec.message());
}

}  // namespace t5xx::checkpoints
