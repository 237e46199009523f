// See rendezvous.h.
#include "t5xx/partitioning/launch/rendezvous.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <future>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "t5xx/util/error.h"
#include "t5xx/util/system/stop_signals.h"

namespace t5xx::partitioning {

std::string Seconds(std::chrono::milliseconds ms) {
  std::ostringstream out;
  out << static_cast<double>(ms.count()) / 1000.0 << " s";
  return out.str();
}

namespace {

using Clock = std::chrono::steady_clock;

// The first line of a libtorch error (it appends a C++ backtrace).
std::string FirstLine(const std::string& what) { return what.substr(0, what.find('\n')); }

std::string JoinedKey(int rank) { return "t5xx/joined/" + std::to_string(rank); }

// A stop signal while joining: nothing to save yet, so the process ends at
// once (exit 128 + signal), as its launcher expects of a stopped job.
void StopIfAsked() {
  if (const int sig = StopSignalReceived()) {
    throw StopRequested(sig, "while joining the other processes of the run");
  }
}

// How long past their own deadline the other ranks wait for rank 0's
// verdict (which names the missing ranks), so that they report it too.
constexpr std::chrono::seconds kVerdictGrace{10};

// Rank 0's verdict (or a duplicate claimer's), read by every rank.
constexpr const char* kAbortKey = "t5xx/abort";

void Abort(c10d::Store& store, const std::string& msg) {
  store.set(kAbortKey, std::vector<uint8_t>(msg.begin(), msg.end()));
}

// Rank 0's verdict: told to every rank, the store served until the ranks
// that joined have read it (at most 5 s) so that they report it too; then
// thrown.
[[noreturn]] void AbortAndWait(c10d::Store& store, const ProcessEnvironment& env,
                               const std::string& msg) {
  Abort(store, msg);
  std::vector<std::string> seen;
  for (int r = 1; r < env.world_size; ++r) {
    if (store.check({JoinedKey(r)})) seen.push_back("t5xx/abort_seen/" + std::to_string(r));
  }
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (!seen.empty() && !store.check(seen) && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw Error(msg);
}

// A rank's join record: "<world size> <local world size> <self>".
std::string Record(const ProcessEnvironment& env, const std::string& self) {
  return std::to_string(env.world_size) + " " + std::to_string(env.local_world_size) + " " + self;
}
int RecordWorldSize(const std::string& record) { return std::atoi(record.c_str()); }
int RecordLocalWorldSize(const std::string& record) {
  const size_t sp = record.find(' ');
  return sp == std::string::npos ? 0 : std::atoi(record.c_str() + sp + 1);
}
std::string RecordSelf(const std::string& record) {
  const size_t sp = record.find(' ');
  const size_t sp2 = sp == std::string::npos ? sp : record.find(' ', sp + 1);
  return sp2 == std::string::npos ? "?" : record.substr(sp2 + 1);
}
std::string ReadRecord(c10d::Store& store, int rank) {
  const std::vector<uint8_t> v = store.get(JoinedKey(rank));
  return std::string(v.begin(), v.end());
}

// Claims this rank; a second claimer names both and tells everyone.
void ClaimRank(c10d::Store& store, const ProcessEnvironment& env, const std::string& self) {
  const std::string claim = "t5xx/claim/" + std::to_string(env.rank);
  if (store.add(claim, 1) == 1) {
    const std::string r = Record(env, self);
    store.set(JoinedKey(env.rank), std::vector<uint8_t>(r.begin(), r.end()));
    return;
  }
  std::string first = "another process";
  for (int i = 0; i < 50 && !store.check({JoinedKey(env.rank)}); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string record;
  if (store.check({JoinedKey(env.rank)})) {
    record = ReadRecord(store, env.rank);
    first = RecordSelf(record);
  }
  // Processes launched for other layouts collide without sharing a node
  // rank: say which (issue 50).
  const bool other_layout = !record.empty() && (RecordWorldSize(record) != env.world_size ||
                                                RecordLocalWorldSize(record) != env.local_world_size);
  const std::string msg =
      "rank " + std::to_string(env.rank) + " was claimed by two processes, on " + first +
      " and on " + self +
      (other_layout
           ? ", launched differently: " + std::to_string(RecordWorldSize(record)) +
                 " processes in all, " + std::to_string(RecordLocalWorldSize(record)) +
                 " per host there; " + std::to_string(env.world_size) + " in all, " +
                 std::to_string(env.local_world_size) + " per host here (WORLD_SIZE, "
                 "LOCAL_WORLD_SIZE): give every host the same --nnodes and --nproc_per_node"
           : ": two hosts were given the same --node_rank (or RANK); give each host its own "
             "--node_rank in [0, --nnodes)");
  Abort(store, msg);
  throw Error(msg);
}

// Rank 0, once every rank has joined: each was launched for this run's
// number of processes.
void CheckLaunchedAlike(c10d::Store& store, const ProcessEnvironment& env) {
  std::string odd;
  for (int r = 1; r < env.world_size; ++r) {
    const std::string record = ReadRecord(store, r);
    if (RecordWorldSize(record) != env.world_size) {
      odd += (odd.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + " on " +
             RecordSelf(record) + " for " + std::to_string(RecordWorldSize(record));
    }
  }
  if (odd.empty()) return;
  const std::string msg = "the processes were launched for different numbers of processes: "
                          "rank 0 on " + RecordSelf(ReadRecord(store, 0)) + " for " +
                          std::to_string(env.world_size) + ", " + odd +
                          " (WORLD_SIZE): give every host the same --nnodes and "
                          "--nproc_per_node";
  AbortAndWait(store, env, msg);
}

}  // namespace

void ProbeRendezvousStore(const c10::intrusive_ptr<c10d::Store>& store,
                          std::chrono::milliseconds join_timeout, const std::string& where,
                          const std::string& server) {
  auto answer = std::make_shared<std::promise<std::string>>();
  std::future<std::string> answered = answer->get_future();
  std::thread([store, answer] {
    try {
      store->check({"t5xx/probe"});
      answer->set_value("");
    } catch (const std::exception& e) {
      answer->set_value(FirstLine(e.what()));
    }
  }).detach();
  T5XX_CHECK(answered.wait_for(join_timeout) == std::future_status::ready,
             "reached " + where + " but no rendezvous answered there within " +
                 Seconds(join_timeout) + ": another program listens on that port, or " + server +
                 " is stuck (are --master_addr and --master_port of t5xx launch or torchrun, "
                 "or MASTER_ADDR and MASTER_PORT, right?)");
  const std::string error = answered.get();
  T5XX_CHECK(error.empty(), "reached " + where + " but the rendezvous there failed: " +
                                error + " (is it a t5xx or torchrun rendezvous?)");
}

namespace {

// The rendezvous store at MASTER_ADDR:MASTER_PORT (rank 0 serves it, unless
// torchrun's agent does), with one key space per restart.
c10::intrusive_ptr<c10d::Store> OpenRendezvousStore(const ProcessEnvironment& env,
                                                    std::chrono::milliseconds join_timeout,
                                                    const std::string& where) {
  c10::intrusive_ptr<c10d::Store> store;
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(env.master_port);
  so.isServer = env.rank == 0 && !env.agent_store;
  so.waitWorkers = false;  // t5xx checks who joined itself, to name the missing
  so.timeout = join_timeout;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
  } catch (const std::exception& e) {
    // (t5xx's main names the rank and its host before the message.)
    const std::string what = FirstLine(e.what());
    throw Error(env.rank == 0
                    ? "cannot serve the rendezvous at " + where + ": " + what +
                          " (is the port in use? choose another --master_port of t5xx launch "
                          "or torchrun, or MASTER_PORT)"
                    : "cannot reach rank 0's rendezvous at " + where + " within " +
                          Seconds(join_timeout) + ": " + what +
                          " (is rank 0 running, and are --master_addr and --master_port of t5xx "
                          "launch or torchrun, or MASTER_ADDR and MASTER_PORT, right?)");
  }
  if (!so.isServer) ProbeRendezvousStore(store, join_timeout, where);
  if (env.agent_store) {
    // torchrun's agent store outlives restarts: one key space per attempt.
    store = c10::make_intrusive<c10d::PrefixStore>(
        "t5xx/attempt_" + std::to_string(env.restart_count), store);
  }
  return store;
}

// Rank 0: waits until every rank has joined; past the deadline, tells the
// ranks that joined which did not (and waits briefly for them to read it),
// then throws that.
void WaitForEveryRank(c10d::Store& store, const ProcessEnvironment& env,
                      std::chrono::milliseconds join_timeout, const std::string& where,
                      Clock::time_point deadline) {
  std::vector<std::string> keys;
  for (int r = 0; r < env.world_size; ++r) keys.push_back(JoinedKey(r));
  while (!store.check(keys)) {
    StopIfAsked();
    if (store.check({kAbortKey})) {  // a rank claimed twice
      const std::vector<uint8_t> m = store.get(kAbortKey);
      throw Error(std::string(m.begin(), m.end()));
    }
    if (Clock::now() >= deadline) {
      std::string missing;
      int n = 0;
      for (int r = 0; r < env.world_size; ++r) {
        if (!store.check({JoinedKey(r)})) {
          missing += (n++ ? ", " : "") + std::to_string(r);
        }
      }
      const std::string msg = "rank" + std::string(n == 1 ? " " : "s ") + missing + " of " +
                              std::to_string(env.world_size) + " did not join the run at " +
                              where + " within " + Seconds(join_timeout) +
                              " (were they launched? see their logs)";
      AbortAndWait(store, env, msg);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CheckLaunchedAlike(store, env);
  store.set("t5xx/ready", std::vector<uint8_t>{1});
}

// Other ranks: wait for rank 0's "ready" (or its verdict on who is missing).
void WaitForRankZero(c10d::Store& store, const ProcessEnvironment& env,
                     std::chrono::milliseconds join_timeout, const std::string& where,
                     Clock::time_point deadline) {
  while (true) {
    StopIfAsked();
    try {
      if (store.check({kAbortKey})) {
        const std::vector<uint8_t> m = store.get(kAbortKey);
        store.set("t5xx/abort_seen/" + std::to_string(env.rank), std::vector<uint8_t>{1});
        throw Error(std::string(m.begin(), m.end()) + " (reported by rank 0)");
      }
      if (store.check({"t5xx/ready"})) break;
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error("rank " + std::to_string(env.rank) + " lost the rendezvous at " + where +
                  " while waiting for the other processes: " + e.what() +
                  " (rank 0 stopped; see its log)");
    }
    if (Clock::now() >= deadline + kVerdictGrace) {
      throw Error("rank " + std::to_string(env.rank) + " waited " +
                  Seconds(join_timeout) + " at " + where +
                  " for the other processes to join (rank 0 did not report them all)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::vector<std::string> RankHosts(c10d::Store& store, int world_size) {
  std::vector<std::string> hosts;
  for (int r = 0; r < world_size; ++r) hosts.push_back(RecordSelf(ReadRecord(store, r)));
  return hosts;
}

c10::intrusive_ptr<c10d::Store> JoinRendezvous(const ProcessEnvironment& env,
                                               std::chrono::milliseconds join_timeout,
                                               const std::string& self) {
  const auto deadline = Clock::now() + join_timeout;
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  c10::intrusive_ptr<c10d::Store> store = OpenRendezvousStore(env, join_timeout, where);
  ClaimRank(*store, env, self);
  if (env.rank == 0) {
    WaitForEveryRank(*store, env, join_timeout, where, deadline);
  } else {
    WaitForRankZero(*store, env, join_timeout, where, deadline);
  }
  return store;
}

}  // namespace t5xx::partitioning
