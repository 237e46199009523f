// The rendezvous of `t5xx launch`'s launchers (one per host), the role
// torchrun's elastic agents play among themselves: the launcher with
// --node_rank=0 serves a c10d TCPStore at --master_addr:--master_port that
// outlives every attempt of the job, and its ranks join it as torchrun's
// ranks join their agent's store (TORCHELASTIC_USE_AGENT_STORE, one key
// space per attempt: TORCHELASTIC_RESTART_COUNT). Through it:
//  - each launcher claims its --node_rank and records how it was launched;
//    a rank claimed twice, hosts launched with different --nnodes or
//    --nproc_per_node, --node_rank=0 given to a host that is not
//    --master_addr, a port held by another program, hosts that never join
//    -- each is named as what it is, on every launcher that can report it;
//  - every attempt is a round that all launchers join before starting their
//    ranks: a launcher whose ranks fail marks the round failed, the others
//    see it within a poll and stop theirs, and all meet again in the next
//    round, however quickly or slowly each noticed (issue 50);
//  - a launcher out of restarts, or stopped by a signal, gives the job up,
//    and the others stop too instead of waiting for it.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace t5xx::cli {

// Where this launcher's ranks stand in the run (t5xx launch's flags).
struct Placement {
  int nnodes = 1, node_rank = 0, nproc_per_node = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  int world() const { return nnodes * nproc_per_node; }
  int rank(int local) const { return node_rank * nproc_per_node + local; }
};

class LaunchRendezvous {
 public:
  // Serves (node 0 on the master's host) or reaches the store within
  // join_timeout and claims this node. `self` names this launcher in the
  // others' errors ("host h (10.0.0.2)"). Throws t5xx::Error for each
  // mistake above (after telling the others where it can).
  LaunchRendezvous(const Placement& at, std::chrono::milliseconds join_timeout,
                   std::string self);

  // Waits until every launcher has joined round `round` (at round 0, node 0
  // also checks that they were launched alike). Throws t5xx::Error with the
  // verdict, or naming the launchers missing after join_timeout.
  void JoinRound(int round);

  // Marks round `round` failed with `cause` (the first cause wins) and
  // returns the cause recorded.
  std::string FailRound(int round, const std::string& cause);
  // Another launcher's failure of round `round`, or the job given up (one
  // poll of the store). A store that cannot be reached is no news (said
  // once, then not asked again): the ranks name that failure themselves.
  std::optional<std::string> RoundFailed(int round);

  // This launcher gives the job up (no restarts left, a stop signal):
  // the others stop instead of restarting.
  void GiveUp(const std::string& why);

  // This launcher's ranks ended round `round` well. Node 0 then serves the
  // store until every launcher has said so (at most join_timeout), so that
  // none loses it while its ranks still finish.
  void Finish(int round);

  const Placement& placement() const { return at_; }

 private:
  std::string Key(const std::string& k) const { return "t5xx_launch/" + k; }
  bool Has(const std::string& key);
  std::string Get(const std::string& key);
  void Set(const std::string& key, const std::string& value);
  // The first abort message set, if any.
  std::optional<std::string> Aborted();
  // Tells everyone `msg` (the first one wins), waits briefly on node 0 for
  // the others to see it, and throws it.
  [[noreturn]] void Abort(const std::string& msg);
  // Counts this launcher among those that read the abort, waits on node 0
  // for the others to read it (at most 5 s), and throws it.
  [[noreturn]] void ReportAbort(const std::string& msg);
  void SawAbort();  // counts this launcher among those that read the abort
  bool saw_abort_ = false;
  void Claim();
  void CheckLaunchedAlike(bool all_claimed);
  // Runs store `requests` for at most a few seconds (on a thread of their
  // own); false, and the store counted lost, when they fail or take longer.
  bool Bounded(const std::function<void(c10d::Store&)>& requests);
  bool StoreLost();

  Placement at_;
  std::chrono::milliseconds join_timeout_;
  std::string self_;
  std::string where_;  // "addr:port"
  c10::intrusive_ptr<c10d::Store> store_;
  bool server_ = false;
  // RoundFailed's polls, each on a thread of its own.
  struct Poll {
    std::mutex mutex;
    bool running = false;
    bool lost = false;  // a poll could not reach the store: not asked again
    int round = -1;
    std::optional<std::string> result;  // of `round`
  };
  std::shared_ptr<Poll> poll_ = std::make_shared<Poll>();
};

}  // namespace t5xx::cli
