// See names.h.
#include "t5xx/util/names.h"

namespace t5xx {

std::string JoinName(const std::string& prefix, const std::string& name,
                     char separator) {
  if (prefix.empty()) return name;
  std::string out;
  out.reserve(prefix.size() + 1 + name.size());
  out += prefix;
  out += separator;
  out += name;
  return out;
}

std::vector<std::string> SplitName(const std::string& name, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = name.find(separator, start);
    parts.push_back(name.substr(start, at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return parts;
}

std::string QuotedList(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += "'" + n + "'";
  }
  return out;
}

std::string BracketedList(const std::vector<std::string>& names,
                          size_t max_items) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max_items; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > max_items)
    out += ", ... (" + std::to_string(names.size() - max_items) + " more)";
  return "[" + out + "]";
}

}  // namespace t5xx
