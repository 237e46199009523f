// See train_flags.h.
#include "t5xx/cli/train_flags.h"

#include <cmath>
#include <cstdlib>
#include <iostream>

#include "t5xx/cli/cache_dir_flags.h"
#include "t5xx/cli/commands.h"
#include "t5xx/config/flags.h"
#include "t5xx/demo/corpus_builder.h"
#include "t5xx/kernels/bf16_matmul.h"
#include "t5xx/run/device_setup.h"
#include "t5xx/util/error.h"

namespace t5xx::cli {

run::LoadedTrainConfig LoadTrainConfigFromFlags(const std::vector<std::string>& args,
                                                const std::string& command) {
  bool has_gin_file = false;
  for (const auto& a : args) has_gin_file = has_gin_file || a.rfind("--gin_file", 0) == 0;
  const std::string example =
      command == "infer"
          ? " --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/infer.gin "
            "--gin.CHECKPOINT_PATH=\"'/tmp/run/checkpoint_300'\" ..."
      : command == "eval"
          ? " --gin_file=models/t5_1_1/tiny.gin --gin_file=runs/eval.gin "
            "--gin.CHECKPOINT_PATH=\"'/tmp/run/checkpoint_300'\" ..."
          : " --gin_file=examples/t5_1_1_tiny_demo.gin --gin.MODEL_DIR=/tmp/run";
  T5XX_CHECK(has_gin_file,
             "t5xx " + command + ": no --gin_file given; e.g. t5xx " + command + example);
  run::LoadedTrainConfig loaded = run::NewTrainConfig();
  std::vector<std::string> rest = gin::ParseGinFlags(args, *loaded.config);
  TakeCacheDirFlags(rest, command);  // seqio's global cache directories
  std::vector<std::string> known = {"data_dir", "skip_bad_records", "device", "allow_tf32",
                                    "peak_flops_per_s"};
  // `t5xx config` checks an infer or eval command line as it stands.
  const bool inference = command == "infer" || command == "eval" || command == "config";
  if (inference) known.push_back("int8_weights");
  std::map<std::string, std::string> flags = ParseFlags(rest, known, command);
  run::RunOptions options;
  options.data_dir = flags.count("data_dir") ? flags["data_dir"] : seqio::DefaultDataDir();
  if (auto it = flags.find("skip_bad_records"); it != flags.end()) {
    T5XX_CHECK(it->second == "true" || it->second == "false",
               "t5xx " + command + ": --skip_bad_records must be true or false, got '" +
                   it->second + "'");
    options.skip_bad_records = it->second == "true";
  }
  if (auto it = flags.find("allow_tf32"); it != flags.end()) {
    T5XX_CHECK(it->second == "true" || it->second == "false",
               "t5xx " + command + ": --allow_tf32 must be true or false, got '" + it->second +
                   "'");
    options.allow_tf32 = it->second == "true";
  }
  if (auto it = flags.find("int8_weights"); it != flags.end()) {
    T5XX_CHECK(it->second == "true" || it->second == "false",
               "t5xx " + command + ": --int8_weights must be true or false, got '" + it->second +
                   "'");
    options.int8_weights = it->second == "true";
  }
  if (auto it = flags.find("peak_flops_per_s"); it != flags.end()) {
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    T5XX_CHECK(!it->second.empty() && end && *end == '\0' && std::isfinite(v) && v > 0,
               "t5xx " + command + ": --peak_flops_per_s must be a positive number of FLOP/s "
               "(e.g. 1.8e11 for 180 GFLOP/s), got '" + it->second + "'");
    options.peak_flops_per_s = v;
  }
  if (auto it = flags.find("device"); it != flags.end()) options.device = it->second;
  // A bad T5XX_BF16_MATMUL is refused here, in every run, not only at the
  // first bfloat16 matmul.
  models::Bf16MatmulModeFromEnvironment();
  run::RunDevice(options);  // a bad --device is reported before the gin files are read
  run::LoadTrainConfig(loaded, std::move(options), command, std::cerr);
  return loaded;
}

}  // namespace t5xx::cli
