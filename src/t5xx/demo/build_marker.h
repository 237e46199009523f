// The completion marker of a demo data build: a JSON file written last, whose
// "options" field records what the build was asked for, so a later build with
// the same options reuses the output and one with other options is refused
// unless told to overwrite. Shared by the C4 corpus (corpus_info.json) and the
// freedict translation data (freedict_info.json). Framework-free: no libtorch.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace t5xx::seqio {

// Reads the marker at `path` (in directory `dir`) of a build asked for with
// `options` and writing format `format_version`:
//  * std::nullopt when the marker is missing, unparsable, of another
//    "format_version" or without "options": the output is incomplete and is
//    rebuilt;
//  * the marker's JSON when its "options" equal `options`: the caller checks
//    that its files are intact and reuses them;
//  * std::nullopt when the options differ and `overwrite` is set: rebuilt.
// Throws t5xx::Error when the options differ and `overwrite` is not set:
// "<dir> already holds a complete <what> built with other options (<key>:
// <old> -> <new>, ...); pass --overwrite=true to replace it, or choose another
// --data_dir". Nothing is deleted.
std::optional<nlohmann::json> ReadBuildMarker(const std::string& path, const std::string& dir,
                                              int format_version,
                                              const nlohmann::json& options, bool overwrite,
                                              const std::string& what);

}  // namespace t5xx::seqio
