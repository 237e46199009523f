// See cpu_info.h.
#include "t5xx/kernels/cpu/cpu_info.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace t5xx::device {

namespace {

const std::vector<std::string>& MatmulFlagOrder() {
  static const std::vector<std::string> kOrder = {
      "avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "asimd", "sve", "bf16"};
  return kOrder;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

const std::set<std::string>& MatmulFlagSet() {
  static const std::set<std::string> kSet(MatmulFlagOrder().begin(), MatmulFlagOrder().end());
  return kSet;
}

bool CpuInfo::HasNativeBf16() const { return Has("avx512_bf16") || Has("amx_bf16") || Has("bf16"); }

std::string CpuInfo::MatmulFlagsString() const {
  std::string out;
  for (const std::string& f : MatmulFlagOrder()) {
    if (!Has(f)) continue;
    if (!out.empty()) out += ' ';
    out += f;
  }
  return out;
}

CpuInfo ParseCpuInfo(const std::string& cpuinfo_text) {
  CpuInfo info;
  bool have_model = false, have_flags = false;
  std::istringstream in(cpuinfo_text);
  std::string line;
  while (std::getline(in, line) && !(have_model && have_flags)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, colon));
    const std::string value = Trim(line.substr(colon + 1));
    if (key == "model name" && !have_model) {
      info.model_name = value;
      have_model = true;
    } else if ((key == "flags" || key == "Features") && !have_flags) {
      std::istringstream words(value);
      std::string w;
      while (words >> w) info.flags.insert(w);
      have_flags = true;
    }
  }
  return info;
}

const CpuInfo& HostCpuInfo() {
  static const CpuInfo info = [] {
    std::ifstream f("/proc/cpuinfo");
    if (!f) return CpuInfo{};
    std::ostringstream text;
    text << f.rdbuf();
    return ParseCpuInfo(text.str());
  }();
  return info;
}

}  // namespace t5xx::device
