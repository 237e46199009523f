// Small string helpers the demo corpus builder's parts share (code points,
// trimming, suffixes, base names). Framework-free.
#pragma once

#include <cstdint>
#include <string>

namespace t5xx::seqio {

// Number of UTF-8 code points (bytes that are not continuation bytes).
int64_t CountCodePoints(const std::string& s);
// `s` without trailing / leading and trailing ASCII whitespace.
std::string RTrim(std::string s);
std::string Trim(const std::string& s);
bool EndsWith(const std::string& s, const std::string& suffix);
// The part of path `p` after its last '/'.
std::string Basename(const std::string& p);

}  // namespace t5xx::seqio
