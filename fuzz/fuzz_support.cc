#include "fuzz/fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace fs = std::filesystem;

namespace t5xx::fuzz {

std::vector<std::string> SplitParts(const uint8_t* data, size_t size, size_t max_parts) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() + 1 < max_parts) {
    const size_t at = all.find(kPartSeparator, start);
    if (at == std::string_view::npos) break;
    parts.emplace_back(all.substr(start, at - start));
    start = at + kPartSeparator.size();
  }
  parts.emplace_back(all.substr(start));
  return parts;
}

namespace {

struct Scratch {
  std::string dir;
  Scratch() {
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t && *t) base = t;
    std::error_code ec;
    if (fs::is_directory("/dev/shm", ec)) base = "/dev/shm";
    dir = base + "/t5xx-fuzz-" + std::to_string(::getpid());
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

Scratch& GetScratch() {
  static Scratch scratch;
  return scratch;
}

}  // namespace

const std::string& ScratchDir() { return GetScratch().dir; }

bool TryWriteScratchFile(const std::string& name, std::string_view bytes) {
  const fs::path path = fs::path(ScratchDir()) / name;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return false;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  return static_cast<bool>(out);
}

std::string WriteScratchFile(const std::string& name, std::string_view bytes) {
  if (!TryWriteScratchFile(name, bytes)) {
    std::fprintf(stderr, "fuzz harness: cannot write %s/%s\n", ScratchDir().c_str(),
                 name.c_str());
    std::abort();
  }
  return ScratchDir() + "/" + name;
}

void ClearScratchDir() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(ScratchDir(), ec)) {
    fs::remove_all(entry.path(), ec);
  }
}

void Fault(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::abort();
}

void ExpectNamedError(const std::string& message, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (message.find(name) == std::string::npos) {
      Fault("t5xx::Error does not name '" + name +
            "' (every refusal must name what it read):\n  " + message);
    }
  }
}

void ExpectNamedErrorAny(const std::string& message, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (message.find(name) != std::string::npos) return;
  }
  Fault("t5xx::Error names none of the inputs it read:\n  " + message);
}

}  // namespace t5xx::fuzz
