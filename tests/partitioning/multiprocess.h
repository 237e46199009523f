// Running N real processes of a test worker, as torchrun would start them
// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), for the multi-process
// partitioning tests.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "t5xx/util/system/free_port.h"
#include "test_util.h"

namespace t5xx::testing {

struct Outcome {
  std::vector<int> exit_codes;
  std::vector<std::string> errors;   // stderr of each started rank
  std::vector<std::string> outputs;  // stdout of each started rank
};

// Starts `worker` for `ranks` of a world of `world` processes, with
// torchrun's variables, on a free port (or `port`), plus `extra_env`
// ("NAME=value"); waits for them all; returns each one's exit code and
// stderr.
inline Outcome Launch(const std::string& worker, int world, const std::vector<int>& ranks,
                      const std::vector<std::string>& args,
                      const std::vector<std::string>& extra_env = {}, int port = 0) {
  if (port == 0) port = FreeLocalPort();
  const testing::TempDir dir;
  std::vector<pid_t> pids;
  for (int r : ranks) {
    std::vector<std::string> env = {"RANK=" + std::to_string(r),
                                    "WORLD_SIZE=" + std::to_string(world),
                                    "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(port),
                                    "OMP_NUM_THREADS=1"};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_s = {worker};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    const std::string err = dir.path + "/err" + std::to_string(r);
    const std::string out = dir.path + "/out" + std::to_string(r);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&fa);
    pids.push_back(pid);
  }
  Outcome run;
  for (size_t i = 0; i < pids.size(); ++i) {
    int status = 0;
    ::waitpid(pids[i], &status, 0);
    run.exit_codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    std::ifstream f(dir.path + "/err" + std::to_string(ranks[i]));
    run.errors.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    std::ifstream o(dir.path + "/out" + std::to_string(ranks[i]));
    run.outputs.emplace_back(std::istreambuf_iterator<char>(o), std::istreambuf_iterator<char>());
  }
  return run;
}

}  // namespace t5xx::testing
