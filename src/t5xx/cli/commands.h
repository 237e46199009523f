// Subcommands of the t5xx binary. Each takes the arguments after the command
// name and returns the process exit status; user errors are thrown as
// t5xx::Error.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace t5xx::cli {

// Parses "--name=value" / "--name value" for the flags in `known` (without
// leading dashes) from args; throws t5xx::Error naming any other argument.
std::map<std::string, std::string> ParseFlags(const std::vector<std::string>& args,
                                              const std::vector<std::string>& known,
                                              const std::string& command);

// A boolean flag's value: "true" or "false"; else t5xx::Error
// "<command>: --<flag> must be true or false, got '<value>'".
bool ParseBoolFlag(const std::string& command, const std::string& flag, const std::string& value);
// An integer flag's value (base 10, >= minimum); t5xx::Error naming the
// command and flag otherwise (empty, not a number, out of range).
int64_t ParseIntFlag(const std::string& command, const std::string& flag, const std::string& value,
                     int64_t minimum);

int TrainCommand(const std::vector<std::string>& args);
int InferCommand(const std::vector<std::string>& args);
int EvalCommand(const std::vector<std::string>& args);
int ConfigCommand(const std::vector<std::string>& args);
int ModelInfoCommand(const std::vector<std::string>& args);
int DataCommand(const std::vector<std::string>& args);
int BuildCorpusCommand(const std::vector<std::string>& args);
int LaunchCommand(const std::vector<std::string>& args);
int CacheTasksCommand(const std::vector<std::string>& args);
int ExportCommand(const std::vector<std::string>& args);
int ImportCommand(const std::vector<std::string>& args);
int ConvertCheckpointCommand(const std::vector<std::string>& args);

}  // namespace t5xx::cli
