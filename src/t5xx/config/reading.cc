// See reading.h.
#include "t5xx/config/reading.h"

#include <climits>

#include "t5xx/util/error.h"

namespace t5xx::gin {

std::string Where(const Value& v) {
  std::string loc = v.location().ToString();
  return loc.empty() ? v.description() : loc + " (" + v.description() + ")";
}

std::string WhereShort(const Value& v) {
  std::string loc = v.location().ToString();
  if (loc.empty()) loc = v.description();
  return loc.empty() ? "gin" : loc;
}

std::string ExpectReference(const Value& v, const std::string& expected, bool evaluated,
                            const std::string& outer) {
  const std::string call = "@" + expected + (evaluated ? "()" : "");
  T5XX_CHECK(v.kind() == Value::Kind::kReference,
             Where(v) + ": expected " + call + ", got " + v.ToGinString());
  T5XX_CHECK(v.reference_name() == expected,
             Where(v) + ": t5xx supports only " + call + " here, got @" + v.reference_name());
  T5XX_CHECK(v.reference_evaluated() == evaluated,
             Where(v) + ": expected " + call + " (" + (evaluated ? "evaluated" : "not called") +
                 "), got " + v.ToGinString());
  return CallScope(outer, v);
}

const std::string& ExpectOneOf(const Value& v, const std::vector<std::string>& kinds,
                               const std::string& what) {
  std::string list;
  for (const auto& k : kinds) list += (list.empty() ? "@" : ", @") + k + "()";
  T5XX_CHECK(v.kind() == Value::Kind::kReference,
             WhereShort(v) + ": expected " + what + " (" + list + "), got " + v.ToGinString());
  for (const auto& k : kinds) {
    if (v.reference_name() == k) return v.reference_name();
  }
  throw Error(WhereShort(v) + ": @" + v.reference_name() + " is not " + what + "; t5xx knows " +
              list);
}

std::optional<int64_t> OptionalInt(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.AsInt();
}

int64_t AtLeast(const Value& v, int64_t minimum) {
  const int64_t n = v.AsInt();
  T5XX_CHECK(n >= minimum, Where(v) + " must be >= " + std::to_string(minimum) + ", got " +
                               std::to_string(n));
  return n;
}

std::optional<int64_t> NoneOrAtLeast(const Value& v, int64_t minimum) {
  if (v.is_none()) return std::nullopt;
  return AtLeast(v, minimum);
}

int32_t Int32(const Value& v, int64_t minimum) {
  const int64_t n = v.AsInt();
  T5XX_CHECK(n >= minimum && n <= INT32_MAX,
             WhereShort(v) + ": " + v.description() + " must be in [" + std::to_string(minimum) +
                 ", 2147483647], got " + std::to_string(n));
  return static_cast<int32_t>(n);
}

void Refuse(bool bad, const Value& v, const std::string& what_to_do) {
  T5XX_CHECK(!bad, Where(v) + " = " + v.ToGinString() + " is not supported yet; " + what_to_do);
}

std::map<std::string, std::string> StringMap(const Value& v) {
  std::map<std::string, std::string> out;
  for (const auto& [k, p] : v.AsDict()) out[k.AsString()] = p.AsString();
  return out;
}

std::vector<std::string> StringList(const Value& v) {
  std::vector<std::string> out;
  if (v.is_none()) return out;
  for (const auto& x : v.AsList()) out.push_back(x.AsString());
  return out;
}

void RequireAllBindingsRead(const Config& config, const std::string& command,
                            std::ostream& notes) {
  std::vector<std::string> unused = config.UnusedBindings();
  std::string list;
  for (const auto& u : unused) list += (list.empty() ? "" : "; ") + u;
  T5XX_CHECK(unused.empty(), "these gin bindings are never read by `t5xx " + command +
                                 "` (t5x would ignore them silently): " + list +
                                 "; remove them or fix their names");
  // Bindings of configurables this run never calls (a stock model file's
  // Adafactor settings when OPTIMIZER is AdamW): gin ignores them; say so.
  std::string ignored;
  for (const auto& u : config.IgnoredConfigurables()) ignored += (ignored.empty() ? "" : "; ") + u;
  if (!ignored.empty()) {
    notes << "t5xx: note: bindings of configurables `t5xx " << command
          << "` does not use are ignored, as gin does: " << ignored << std::endl;
  }
  // Macros no configurable read (gin is silent about them too).
  for (const auto& m : config.UnreadMacros()) notes << "t5xx: note: " << m << std::endl;
}

}  // namespace t5xx::gin
