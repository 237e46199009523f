// Name helpers scanned_layers.cc and scanned_state.cc share: which arrays
// are a stack's layers, which are attention kernels.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace t5xx::checkpoints::scan_internal {

struct LayerName {
  std::string stack;  // "encoder" or "decoder"
  int64_t index = 0;
  std::string rest;  // the name inside the layer, e.g. "attention.query.kernel"
};

// "encoder.layers_3.mlp.wo.kernel" -> {encoder, 3, mlp.wo.kernel}.
inline std::optional<LayerName> ParseLayerName(const std::string& name) {
  for (const char* stack : {"encoder", "decoder"}) {
    const std::string prefix = std::string(stack) + ".layers_";
    if (name.rfind(prefix, 0) != 0) continue;
    const size_t dot = name.find('.', prefix.size());
    const std::string digits = name.substr(prefix.size(), dot - prefix.size());
    if (dot == std::string::npos || digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    return LayerName{stack, std::stoll(digits), name.substr(dot + 1)};
  }
  return std::nullopt;
}

inline bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
inline bool IsQkvKernel(const std::string& rest) {
  return rest.find("attention.") != std::string::npos &&
         (EndsWith(rest, ".query.kernel") || EndsWith(rest, ".key.kernel") ||
          EndsWith(rest, ".value.kernel"));
}
inline bool IsOutKernel(const std::string& rest) {
  return rest.find("attention.") != std::string::npos && EndsWith(rest, ".out.kernel");
}

inline int64_t Product(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= s[i];
  return n;
}

}  // namespace t5xx::checkpoints::scan_internal
