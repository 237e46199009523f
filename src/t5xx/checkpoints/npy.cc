// See npy.h.
#include "t5xx/checkpoints/npy.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "t5xx/checkpoints/file_io.h"
#include "t5xx/util/error.h"

namespace t5xx::checkpoints {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    const float f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  uint32_t bits = exp == 31 ? sign | 0x7f800000u | (mant << 13)
                            : sign | ((exp + 112) << 23) | (mant << 13);
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

}  // namespace

void WriteNpy(const std::string& path, const std::vector<int64_t>& shape,
              const std::vector<float>& values) {
  int64_t n = 1;
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    n *= shape[i];
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  }
  if (shape.size() == 1) dims += ",";  // Python's 1-tuple: "(5,)"
  T5XX_CHECK(n == static_cast<int64_t>(values.size()),
             "writing " + path + ": " + std::to_string(values.size()) +
                 " values for a shape of " + std::to_string(n));
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = 6 + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  WriteFile(path, out.data(), out.size());
}

NpyArray ReadNpy(const std::string& path) {
  T5XX_CHECK(!std::filesystem::is_directory(path),
             path + " is a directory, not a .npy file; give the file (e.g. "
                    "numpy_checkpoints/checkpoint_<step>/encoder.prompt.prompt.prompt)");
  std::ifstream f(path, std::ios::binary);
  T5XX_CHECK(f.good(), "cannot read the .npy file " + path + " (no such file?)");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  auto bad = [&](const std::string& why) { return Error(path + " is not a .npy array t5xx reads: " + why); };
  if (bytes.size() < 10 || bytes.compare(0, 6, std::string(kMagic, 6)) != 0) {
    throw bad("it does not start with numpy's magic \\x93NUMPY");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw bad("its header is cut short");
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    throw bad("format version " + std::to_string(major) + " is not 1, 2 or 3");
  }
  if (bytes.size() < offset + header_len) throw bad("its header is cut short");
  const std::string header = bytes.substr(offset, header_len);
  std::smatch m;
  if (std::regex_search(header, m, std::regex("'descr':\\s*\\["))) {
    throw bad("its dtype is structured (a list of fields); t5xx reads float arrays");
  }
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([<|=>]?)([A-Za-z])(\\d*)'"))) {
    throw bad("its header has no 'descr'");
  }
  const std::string order = m[1], kind = m[2];
  const int size = m.str(3).empty() ? 0 : std::stoi(m[3]);
  if (order == ">" || kind != "f" || (size != 2 && size != 4 && size != 8)) {
    throw bad("dtype '" + m.str(1) + m.str(2) + m.str(3) +
              "' is not a little-endian float16, float32 or float64");
  }
  if (header.find("'fortran_order': True") != std::string::npos) {
    throw bad("it is in Fortran order; save it with numpy.save of a C-order array");
  }
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) {
    throw bad("its header has no 'shape'");
  }
  NpyArray a;
  int64_t n = 1;
  std::stringstream dims(m.str(1));
  for (std::string d; std::getline(dims, d, ',');) {
    if (d.find_first_not_of(" ") == std::string::npos) continue;
    a.shape.push_back(std::stoll(d));
    n *= a.shape.back();
  }
  const size_t data = offset + header_len;
  if (bytes.size() < data + static_cast<size_t>(n) * size) {
    throw bad("it holds " + std::to_string(bytes.size() - data) + " data bytes; its shape needs " +
              std::to_string(n * size));
  }
  a.values.resize(static_cast<size_t>(n));
  const char* p = bytes.data() + data;
  for (int64_t i = 0; i < n; ++i) {
    if (size == 4) {
      std::memcpy(&a.values[i], p + 4 * i, 4);
    } else if (size == 8) {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      a.values[i] = static_cast<float>(d);
    } else {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      a.values[i] = HalfToFloat(h);
    }
  }
  return a;
}

std::string SaveNumpyCheckpoint(const std::string& model_dir, int64_t step,
                                const std::vector<NpyEntry>& arrays) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(model_dir) / "numpy_checkpoints";
  const fs::path dir = parent / ("checkpoint_" + std::to_string(step));
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const fs::path tmp = dir.string() + ".tmp-" + std::to_string(now);
  MakeDir(tmp);
  for (const NpyEntry& e : arrays) WriteNpy((tmp / e.name).string(), e.shape, e.values);
  SyncDir(tmp);
  std::error_code ec;
  if (fs::exists(dir)) {
    const fs::path backup = dir.string() + ".backup-" + std::to_string(now);
    fs::rename(dir, backup, ec);
    T5XX_CHECK(!ec, "cannot move " + dir.string() + " aside: " + ec.message());
  }
  fs::rename(tmp, dir, ec);
  T5XX_CHECK(!ec, "cannot rename " + tmp.string() + " to " + dir.string() + ": " + ec.message());
  SyncDir(parent);
  return dir.string();
}

}  // namespace t5xx::checkpoints
