// `t5xx convert_checkpoint`: a scalable_t5 (umT5) checkpoint's parameters
// between t5x's scanned layout and the per-layer layout
// (checkpoints/scanned_layers.h).
#include <iostream>

#include "t5xx/checkpoints/scanned_layers.h"
#include "t5xx/cli/commands.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {

int ConvertCheckpointCommand(const std::vector<std::string>& args) {
  const char* usage =
      "usage: t5xx convert_checkpoint --checkpoint_path=DIR/checkpoint_N --output_dir=MODEL_DIR\n"
      "         --scan_layers=true|false [--param_scan_axis=1]\n"
      "Writes MODEL_DIR/checkpoint_N with the parameters of a t5x scalable_t5 (umT5)\n"
      "checkpoint stacked along a 'layers' axis (--scan_layers=true, t5x's scanned layout)\n"
      "or one array per layer (false, what t5xx trains with scan_layers = False). The\n"
      "optimizer state is not carried over: restore with\n"
      "utils.RestoreCheckpointConfig.strict = False.\n";
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    }
  }
  auto flags = ParseFlags(args, {"checkpoint_path", "output_dir", "scan_layers", "param_scan_axis"},
                          "convert_checkpoint");
  std::string missing;
  for (const char* f : {"checkpoint_path", "output_dir", "scan_layers"}) {
    if (!flags.count(f)) missing += std::string(" --") + f;
  }
  T5XX_CHECK(missing.empty(), "t5xx convert_checkpoint: missing" + missing + "\n" + usage);
  const bool scan = ParseBoolFlag("convert_checkpoint", "scan_layers", flags["scan_layers"]);
  const int64_t axis = flags.count("param_scan_axis")
                           ? ParseIntFlag("convert_checkpoint", "param_scan_axis",
                                          flags["param_scan_axis"], 0)
                           : 1;
  const checkpoints::ScanConversion r = checkpoints::ConvertScanLayout(
      flags["checkpoint_path"], flags["output_dir"], scan, static_cast<int>(axis));
  std::cout << "[convert] " << flags["checkpoint_path"] << " (step " << r.step << "): "
            << r.arrays_in << " parameter arrays -> " << r.arrays_out << " "
            << (scan ? "scanned" : "per-layer") << " arrays in " << r.checkpoint_dir;
  if (r.state_arrays_dropped > 0) {
    std::cout << "; " << r.state_arrays_dropped
              << " optimizer state arrays not carried over (restore with "
                 "utils.RestoreCheckpointConfig.strict = False)";
  }
  std::cout << std::endl;
  return 0;
}

}  // namespace t5xx::cli
