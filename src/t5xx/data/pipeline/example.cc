// Accessors for t5xx::seqio::Example (see example.h).
#include "t5xx/data/pipeline/example.h"

#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

const char* TypeName(const FeatureValue& v) {
  return std::holds_alternative<std::string>(v) ? "string" : "int32 tokens";
}

std::string KeysOf(const Example& ex) {
  std::string out;
  for (const auto& kv : ex) {
    if (!out.empty()) out += ", ";
    out += kv.first;
  }
  return "[" + out + "]";
}

}  // namespace

const std::string& GetString(const Example& ex, const std::string& key) {
  auto it = ex.find(key);
  if (it == ex.end())
    throw Error("example has no feature '" + key + "' (features: " +
                KeysOf(ex) + ")");
  if (!std::holds_alternative<std::string>(it->second))
    throw Error("feature '" + key + "' is " + TypeName(it->second) +
                ", expected a string");
  return std::get<std::string>(it->second);
}

const Tokens& GetTokens(const Example& ex, const std::string& key) {
  auto it = ex.find(key);
  if (it == ex.end())
    throw Error("example has no feature '" + key + "' (features: " +
                KeysOf(ex) + ")");
  if (!std::holds_alternative<Tokens>(it->second))
    throw Error("feature '" + key + "' is " + TypeName(it->second) +
                ", expected int32 tokens (was it tokenized?)");
  return std::get<Tokens>(it->second);
}

Tokens& GetMutableTokens(Example& ex, const std::string& key) {
  return const_cast<Tokens&>(GetTokens(ex, key));
}

}  // namespace t5xx::seqio
