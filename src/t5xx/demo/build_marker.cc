// The completion marker of a demo data build; see build_marker.h.
#include "t5xx/demo/build_marker.h"

#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"
#include "t5xx/util/json_text.h"

namespace t5xx::seqio {

std::optional<nlohmann::json> ReadBuildMarker(const std::string& path, const std::string& dir,
                                              int format_version,
                                              const nlohmann::json& options, bool overwrite,
                                              const std::string& what) {
  if (!FileExists(path)) return std::nullopt;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ReadFileToString(path));
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // unreadable marker: the build is incomplete
  }
  if (!j.is_object() || j.value("format_version", 0) != format_version ||
      !j.contains("options")) {
    return std::nullopt;
  }
  const nlohmann::json& old = j.at("options");
  if (old == options) return j;
  if (overwrite) return std::nullopt;
  std::string differ;
  for (const auto& [k, v] : options.items()) {
    if (!old.contains(k) || old.at(k) != v) {
      differ += (differ.empty() ? "" : ", ") + k + ": " +
                (old.contains(k) ? DumpJson(old.at(k)) : "unset") + " -> " + DumpJson(v);
    }
  }
  throw Error(dir + " already holds a complete " + what + " built with other options (" +
              differ + "); pass --overwrite=true to replace it, or choose another --data_dir");
}

}  // namespace t5xx::seqio
