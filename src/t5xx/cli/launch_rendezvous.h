// The rendezvous of `t5xx launch`'s launchers (one per host), the role
// torchrun's elastic agents play among themselves: the launcher with
// --node_rank=0 serves a c10d TCPStore at --master_addr:--master_port that
// outlives every attempt of the job, and its ranks join it as torchrun's
// ranks join their agent's store (TORCHELASTIC_USE_AGENT_STORE, one key
// space per attempt: TORCHELASTIC_RESTART_COUNT). Through it:
//  - each launcher claims its --node_rank, records how it was launched and
//    keeps a heartbeat; before the job starts, a --node_rank claimed twice,
//    hosts launched with different --nnodes or --nproc_per_node,
//    --node_rank=0 given to a host that is not --master_addr, a port held
//    by another program and hosts that never join are each named as what
//    they are, on every launcher that can report it; once it runs, a
//    launcher that claims a --node_rank whose launcher is alive is refused
//    alone (the job goes on), and one whose launcher died takes its place
//    in the job's next round;
//  - every attempt is a round that all launchers join before starting their
//    ranks: a launcher whose ranks fail marks the round failed, the others
//    see it within a poll and stop theirs, and all meet again in the next
//    round, however quickly or slowly each noticed (issue 50);
//  - a launcher out of restarts, or stopped by a signal, gives the job up
//    (saying whether it was stopped), and the others end too -- with the
//    stop's status when it was a stop -- instead of waiting for it; node 0
//    serves the store until they have read it.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
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

// The job stopped on a stop signal, here or on another host: t5xx launch
// prints what() and exits with 128 + signal.
class LaunchStopped : public std::runtime_error {
 public:
  LaunchStopped(int signal, const std::string& what) : std::runtime_error(what), signal(signal) {}
  int signal;
};

class LaunchRendezvous {
 public:
  // Serves (node 0 on the master's host) or reaches the store within
  // join_timeout and claims this node. `self` names this launcher in the
  // others' errors ("host h (10.0.0.2)"); `stop_signal` says whether this
  // launcher was asked to stop (polled while it waits). Throws t5xx::Error
  // for each mistake above (after telling the others where it can), and
  // LaunchStopped on a stop signal while waiting.
  LaunchRendezvous(const Placement& at, std::chrono::milliseconds join_timeout,
                   std::string self, std::function<int()> stop_signal);
  ~LaunchRendezvous();
  LaunchRendezvous(const LaunchRendezvous&) = delete;
  LaunchRendezvous& operator=(const LaunchRendezvous&) = delete;

  // The round this launcher starts in: 0, or after the job's current one
  // when it took the place of a launcher that died.
  int first_round() const { return first_round_; }

  // Waits until every launcher has joined round `round` (at round 0, node 0
  // also checks that they were launched alike): true; false when the round
  // failed before all joined (a launcher that died was replaced: go on to
  // the next). Throws t5xx::Error with the verdict or naming the launchers
  // missing after join_timeout, and LaunchStopped when the job was stopped
  // (this launcher's stop signal, which it gives the others, or theirs).
  bool JoinRound(int round);

  // Marks round `round` failed with `cause` (the first cause wins) and
  // returns the cause recorded.
  std::string FailRound(int round, const std::string& cause);

  // How the round ended elsewhere: another launcher's failure of it, or
  // the job given up (stopped by a signal, or out of restarts).
  struct RemoteEnd {
    std::string cause;
    bool given_up = false;
    int stop_signal = 0;  // the job was stopped by this signal
  };
  // One poll, on a thread of its own: this never waits on the network (a
  // poll still running is no news). A store that cannot be reached is no
  // news (said once, then not asked again): the ranks name that failure
  // themselves.
  std::optional<RemoteEnd> RoundFailed(int round);

  // This launcher gives the job up (no restarts left: stop_signal 0; or
  // stopped by that signal): the others end too. Node 0 serves the store
  // until they have read it (at most a few seconds).
  void GiveUp(const std::string& why, int stop_signal = 0);

  // This launcher's ranks ended round `round` well. Node 0 then serves the
  // store until every launcher has said so (at most join_timeout), so that
  // none loses it while its ranks still finish.
  void Finish(int round);

 private:
  std::string Key(const std::string& k) const { return "t5xx_launch/" + k; }
  bool Has(const std::string& key);
  std::string Get(const std::string& key);
  void Set(const std::string& key, const std::string& value);
  void Connect();
  // Tells everyone `msg` (the first one wins) and reports it (ReportAbort).
  [[noreturn]] void Abort(const std::string& msg);
  // Counts this launcher among those that read the abort, waits on node 0
  // for the others to read it (at most 5 s), and throws it.
  [[noreturn]] void ReportAbort(const std::string& msg);
  void Claim();
  // Whether node k's launcher keeps its heartbeat (watched for ~2.5 s).
  bool Alive(int k);
  void StartHeartbeat();
  void CheckLaunchedAlike();
  // The job's end another launcher recorded, if any (acknowledged once).
  std::optional<RemoteEnd> GivenUp();
  // Runs store `requests` for at most a few seconds (on a thread of their
  // own); false, and the store counted lost, when they fail or take longer.
  bool Bounded(const std::function<void(c10d::Store&)>& requests);
  bool StoreLost();
  // Node 0: serves the store until `seen_key` counts every other launcher.
  void WaitForOthers(const std::string& seen_key, std::chrono::milliseconds limit);

  Placement at_;
  std::chrono::milliseconds join_timeout_;
  std::string self_;
  std::function<int()> stop_signal_;
  std::string where_;  // "addr:port"
  c10::intrusive_ptr<c10d::Store> store_;
  bool server_ = false;
  bool saw_abort_ = false;
  int first_round_ = 0;
  std::shared_ptr<std::atomic<bool>> beating_ = std::make_shared<std::atomic<bool>>(false);
  // RoundFailed's polls, each on a thread of its own.
  struct Poll {
    std::mutex mutex;
    bool running = false;
    bool lost = false;  // a poll could not reach the store: not asked again
    bool acked = false;  // this launcher acknowledged a give-up
    int round = -1;
    std::optional<RemoteEnd> result;  // of `round`
  };
  std::shared_ptr<Poll> poll_ = std::make_shared<Poll>();
};

}  // namespace t5xx::cli
