// `t5xx convert_checkpoint`: a scalable_t5 (umT5) checkpoint's parameters
// and optimizer slots between t5x's scanned layout and the per-layer layout
// (checkpoints/t5x/scanned_layers.h).
#include <iostream>

#include "t5xx/checkpoints/t5x/scanned_layers.h"
#include "t5xx/cli/commands.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {

int ConvertCheckpointCommand(const std::vector<std::string>& args) {
  const char* usage =
      "usage: t5xx convert_checkpoint --checkpoint_path=DIR/checkpoint_N --output_dir=MODEL_DIR\n"
      "         --scan_layers=true|false [--param_scan_axis=1]\n"
      "Writes MODEL_DIR/checkpoint_N with the parameters and optimizer slots of a t5x\n"
      "scalable_t5 (umT5) checkpoint stacked along a 'layers' axis (--scan_layers=true,\n"
      "t5x's scanned layout) or one array per layer (false). Adafactor's slots keep the\n"
      "scanned layout's factoring; a checkpoint trained with scan_layers = False has other\n"
      "slot shapes for small MLP kernels: restore the result there with\n"
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
  if (r.state_arrays > 0) std::cout << "; " << r.state_arrays << " optimizer state arrays in";
  std::cout << std::endl;
  return 0;
}

}  // namespace t5xx::cli
