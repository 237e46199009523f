// The flags by which `t5xx data` and `t5xx cache_tasks` learn their tasks:
// t5x's gin flags (--gin_file, --gin.NAME=VALUE, --gin_bindings) for tasks
// and mixtures defined in gin (t5xx.seqio.register; docs/gin.md), --data_dir
// for the demo tasks and --skip_bad_records for their sources.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "t5xx/run/train_setup.h"

namespace t5xx::cli {

// When any argument starts with "--gin", parses the gin flags out of *args
// into a config with every configurable registered and returns it; else
// returns an empty LoadedTrainConfig (no config) and leaves *args as is.
// Throws t5xx::Error naming a bad gin flag.
run::LoadedTrainConfig TakeGinTaskFlags(std::vector<std::string>* args);

// Registers the demo tasks (under flags["data_dir"], default
// seqio::DefaultDataDir()) and the gin-defined tasks and mixtures of
// gin.config (finalized for t5xx.seqio.register only; a binding nothing
// read is reported on stderr, naming `command`). flags["skip_bad_records"]
// ("true"/"false") makes file sources skip bad records. Returns why the demo
// tasks are not registered, or nullopt. Throws t5xx::Error for a bad flag
// value or a bad gin task.
std::optional<std::string> RegisterFlagTasks(run::LoadedTrainConfig& gin,
                                             std::map<std::string, std::string>& flags,
                                             const std::string& command);

}  // namespace t5xx::cli
