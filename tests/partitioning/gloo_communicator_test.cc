// The Gloo communicator across real processes: gloo_worker is started N
// times with torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) and checks every collective; a run where a rank never starts
// fails on every started rank with that rank named. Also the launcher
// environment parser (torchrun, Slurm, Open MPI).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "partitioning/multiprocess.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "test_util.h"

namespace t5xx::partitioning {
namespace {

using t5xx::testing::Launch;
using t5xx::testing::Outcome;

TEST(C10dCommunicatorTest, CollectivesAcrossTwoAndFourProcesses) {
  for (int world : {2, 4}) {
    std::vector<int> ranks;
    for (int r = 0; r < world; ++r) ranks.push_back(r);
    const Outcome run = Launch(T5XX_GLOO_WORKER, world, ranks, {"collectives"});
    for (int r = 0; r < world; ++r) {
      EXPECT_EQ(run.exit_codes[static_cast<size_t>(r)], 0)
          << "world " << world << " rank " << r << ": " << run.errors[static_cast<size_t>(r)];
    }
  }
}

// torchrun >= 2.x serves the store from its agent and sets
// TORCHELASTIC_USE_AGENT_STORE=True: every rank, rank 0 included, must join
// that store as a client (a second server on MASTER_PORT would fail to
// bind). Here the test process plays the agent.
TEST(C10dCommunicatorTest, RanksJoinTorchrunsAgentStore) {
  const int port = FreeLocalPort();
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(port);
  so.isServer = true;
  so.waitWorkers = false;
  auto agent = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
  const Outcome run = Launch(T5XX_GLOO_WORKER, 2, {0, 1}, {"collectives"},
                             {"TORCHELASTIC_USE_AGENT_STORE=True",
                              "TORCHELASTIC_RESTART_COUNT=1"},
                             port);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(run.exit_codes[static_cast<size_t>(r)], 0)
        << "rank " << r << ": " << run.errors[static_cast<size_t>(r)];
  }
  // The ranks' keys live under the attempt's prefix in the agent's store.
  EXPECT_TRUE(agent->check({"t5xx/attempt_1/t5xx/ready"}));
}

TEST(C10dCommunicatorTest, ARankThatNeverJoinsIsNamedByEveryOther) {
  // World of 3; rank 2 is never started. Join timeout 3 s.
  const Outcome run = Launch(T5XX_GLOO_WORKER, 3, {0, 1}, {"join", "3000"});
  ASSERT_EQ(run.exit_codes.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(run.exit_codes[i], 3) << run.errors[i];
    EXPECT_NE(run.errors[i].find("rank 2 of 3 did not join the run at 127.0.0.1:"),
              std::string::npos)
        << run.errors[i];
  }
}

TEST(C10dCommunicatorTest, ARankWithoutRankZeroNamesTheRendezvous) {
  const Outcome run = Launch(T5XX_GLOO_WORKER, 2, {1}, {"join", "2000"});
  EXPECT_EQ(run.exit_codes[0], 3);
  EXPECT_NE(run.errors[0].find("cannot reach rank 0's rendezvous at 127.0.0.1:"),
            std::string::npos)
      << run.errors[0];
}

TEST(ProcessEnvironmentTest, ReadsTorchrunSlurmAndOpenMpi) {
  auto from = [](std::map<std::string, std::string> m) {
    return DetectProcessEnvironment([m](const char* n) -> const char* {
      auto it = m.find(n);
      return it == m.end() ? nullptr : it->second.c_str();
    });
  };
  EXPECT_EQ(from({}), std::nullopt);
  auto t = from({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                 {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "1234"}});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->launcher, "torchrun");
  EXPECT_EQ(t->rank, 3);
  EXPECT_EQ(t->world_size, 8);
  EXPECT_EQ(t->local_rank, 1);
  EXPECT_EQ(t->local_world_size, 2);
  EXPECT_EQ(t->master_addr, "node0");
  EXPECT_EQ(t->master_port, 1234);
  EXPECT_FALSE(t->agent_store);
  // torchrun >= 2.x serves the store from its agent and says so.
  auto agent = from({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                     {"TORCHELASTIC_RESTART_COUNT", "2"}});
  ASSERT_TRUE(agent);
  EXPECT_TRUE(agent->agent_store);
  EXPECT_EQ(agent->restart_count, 2);
  auto s = from({{"SLURM_PROCID", "5"}, {"SLURM_STEP_NUM_TASKS", "6"}, {"SLURM_LOCALID", "2"},
                 {"SLURM_LAUNCH_NODE_IPADDR", "10.0.0.7"}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->launcher, "slurm");
  EXPECT_EQ(s->rank, 5);
  EXPECT_EQ(s->local_rank, 2);
  EXPECT_EQ(s->master_addr, "10.0.0.7");
  EXPECT_EQ(s->master_port, 29500);
  // An sbatch script's own process (SLURM_NTASKS of the job, no step) is a
  // single process, not rank 0 of many.
  EXPECT_EQ(from({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}), std::nullopt);
  auto o = from({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                 {"MASTER_ADDR", "h"}});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->launcher, "openmpi");
  EXPECT_ERROR_CONTAINS(from({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
                        "MASTER_ADDR is not set; pass mpirun -x MASTER_ADDR=");
  EXPECT_ERROR_CONTAINS(from({{"RANK", "4"}, {"WORLD_SIZE", "4"}}),
                        "RANK = 4 is not in [0, WORLD_SIZE = 4)");
  EXPECT_ERROR_CONTAINS(from({{"RANK", "x"}, {"WORLD_SIZE", "4"}}),
                        "environment variable RANK = 'x' is not a non-negative integer");
  EXPECT_ERROR_CONTAINS(from({{"RANK", "1"}}), "WORLD_SIZE is not set though RANK is");
}

}  // namespace
}  // namespace t5xx::partitioning
