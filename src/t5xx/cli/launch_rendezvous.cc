// The launchers' rendezvous of `t5xx launch` -- the implementation of
// launch_rendezvous.h.
#include "t5xx/cli/launch_rendezvous.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <iostream>
#include <thread>
#include <vector>

#include "t5xx/partitioning/rendezvous.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/route.h"

namespace t5xx::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(50);
// The longest a launcher waits for a store request after its ranks ended.
constexpr auto kBoundedWait = std::chrono::seconds(5);

std::string FirstLine(const std::string& what) { return what.substr(0, what.find('\n')); }

// Whether `host` names an address of this machine: a socket binds to it.
bool IsAddressOfThisHost(const std::string& host) {
  if (IsLoopbackHost(host)) return true;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), "0", &hints, &found) != 0) return false;
  bool local = false;
  for (addrinfo* a = found; a && !local; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    local = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    close(fd);
  }
  freeaddrinfo(found);
  return local;
}

// A launcher's record: "<nnodes> <nproc_per_node> <self>".
std::string Record(const Placement& at, const std::string& self) {
  return std::to_string(at.nnodes) + " " + std::to_string(at.nproc_per_node) + " " + self;
}
struct ParsedRecord {
  int nnodes = 0, nproc = 0;
  std::string self = "?";
};
ParsedRecord Parse(const std::string& record) {
  ParsedRecord r;
  const size_t a = record.find(' '), b = a == std::string::npos ? a : record.find(' ', a + 1);
  r.nnodes = std::atoi(record.c_str());
  if (a != std::string::npos) r.nproc = std::atoi(record.c_str() + a + 1);
  if (b != std::string::npos) r.self = record.substr(b + 1);
  return r;
}
std::string Describe(const ParsedRecord& r, int node) {
  return r.self + " (--node_rank=" + std::to_string(node) + "): --nnodes=" +
         std::to_string(r.nnodes) + " --nproc_per_node=" + std::to_string(r.nproc);
}

c10::intrusive_ptr<c10d::Store> Connect(const Placement& at, bool server,
                                        std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(at.master_port);
  so.isServer = server;
  so.waitWorkers = false;
  so.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(at.master_addr, so);
}

}  // namespace

bool LaunchRendezvous::Has(const std::string& key) { return store_->check({key}); }

std::string LaunchRendezvous::Get(const std::string& key) {
  const std::vector<uint8_t> v = store_->get(key);
  return std::string(v.begin(), v.end());
}

void LaunchRendezvous::Set(const std::string& key, const std::string& value) {
  store_->set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

std::optional<std::string> LaunchRendezvous::Aborted() {
  if (!Has(Key("abort"))) return std::nullopt;
  return Get(Key("abort"));
}

void LaunchRendezvous::Abort(const std::string& msg) {
  if (store_->add(Key("abort_n"), 1) == 1) Set(Key("abort"), msg);
  for (int i = 0; i < 50 && !Has(Key("abort")); ++i) std::this_thread::sleep_for(kPoll);
  ReportAbort(Has(Key("abort")) ? Get(Key("abort")) : msg);
}

void LaunchRendezvous::ReportAbort(const std::string& first) {
  SawAbort();
  if (server_) {
    // Serve the store until every launcher that joined has read it (at
    // most 5 s), so that each reports it rather than a lost connection.
    const auto until = Clock::now() + std::chrono::seconds(5);
    while (store_->add(Key("abort_seen_n"), 0) < store_->add(Key("launchers_n"), 0) &&
           Clock::now() < until) {
      std::this_thread::sleep_for(kPoll);
    }
  }
  throw Error("t5xx launch: " + first);
}

void LaunchRendezvous::SawAbort() {
  if (saw_abort_) return;
  saw_abort_ = true;
  store_->add(Key("abort_seen_n"), 1);
}

LaunchRendezvous::LaunchRendezvous(const Placement& at, std::chrono::milliseconds join_timeout,
                                   std::string self)
    : at_(at), join_timeout_(join_timeout), self_(std::move(self)) {
  where_ = at.master_addr + ":" + std::to_string(at.master_port);
  const bool master_here = IsAddressOfThisHost(at.master_addr);
  if (at.node_rank == 0 && master_here) {
    try {
      store_ = Connect(at, /*server=*/true, join_timeout);
      server_ = true;
    } catch (const std::exception& e) {
      // The port is taken: by this job's rendezvous (a second host given
      // --node_rank=0, which the claim below names), or by another program.
      const std::string why = FirstLine(e.what());
      bool ours = false;
      try {
        store_ = Connect(at, /*server=*/false, std::chrono::seconds(5));
        partitioning::ProbeRendezvousStore(store_, std::chrono::seconds(5), where_,
                                           "the launch with --node_rank=0");
        ours = Has(Key("claim/0"));
      } catch (const std::exception&) {
      }
      T5XX_CHECK(ours, "t5xx launch: cannot serve the launch rendezvous at " + where_ + ": " + why +
                           " (the port is in use on this host: choose another --master_port, "
                           "the same on every host)");
    }
  } else {
    try {
      store_ = Connect(at, /*server=*/false, join_timeout);
    } catch (const std::exception& e) {
      const std::string hint =
          at.node_rank == 0
              ? "; and this host is not --master_addr=" + at.master_addr +
                    ", while --node_rank=0 belongs to the host at --master_addr: give this host "
                    "its own --node_rank"
              : "";
      throw Error("t5xx launch: cannot reach the launch rendezvous at " + where_ + " within " +
                  partitioning::Seconds(join_timeout) + ": " + FirstLine(e.what()) +
                  " (is the launch with --node_rank=0 running there, and are --master_addr "
                  "and --master_port right?)" + hint);
    }
    partitioning::ProbeRendezvousStore(store_, join_timeout, where_,
                                       "the launch with --node_rank=0");
  }
  if (at.node_rank == 0 && !master_here && !Has(Key("claim/0"))) {
    // The master's launcher is up (it answered) but has not claimed node 0
    // yet: it will, and the claim below is then the duplicate either way.
    for (int i = 0; i < 40 && !Has(Key("claim/0")); ++i) std::this_thread::sleep_for(kPoll);
  }
  try {
    Claim();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("t5xx launch: lost the launch rendezvous at " + where_ + " while joining it (" +
                FirstLine(e.what()) + "): the launch with --node_rank=0 stopped; see its log");
  }
}

void LaunchRendezvous::Claim() {
  store_->add(Key("launchers_n"), 1);  // every launcher that reached the store
  const std::string k = std::to_string(at_.node_rank);
  if (store_->add(Key("claim/" + k), 1) == 1) {
    Set(Key("node/" + k), Record(at_, self_));
    return;
  }
  std::string first = "another host";
  for (int i = 0; i < 40 && !Has(Key("node/" + k)); ++i) std::this_thread::sleep_for(kPoll);
  if (Has(Key("node/" + k))) first = Parse(Get(Key("node/" + k))).self;
  Abort("--node_rank=" + k + " was given to two hosts, " + first + " and " + self_ +
        ": give each host its own --node_rank in [0, --nnodes)" +
        (at_.node_rank == 0 ? " (--node_rank=0 is the host at --master_addr=" + at_.master_addr + ")"
                            : ""));
}

void LaunchRendezvous::CheckLaunchedAlike(bool all_claimed) {
  (void)all_claimed;
  // Every launcher compares its own record with node 0's; node 0 compares
  // every record it has, so both sides of a mismatch name it.
  const std::string zero = Key("node/0");
  if (!Has(zero)) return;
  const ParsedRecord master = Parse(Get(zero));
  std::string odd;
  auto differs = [&](const ParsedRecord& r) {
    return r.nnodes != master.nnodes || r.nproc != master.nproc;
  };
  const int upto = std::max(at_.nnodes, master.nnodes);
  for (int k = 1; k < upto; ++k) {
    if (at_.node_rank != 0 && k != at_.node_rank) continue;
    const std::string key = Key("node/" + std::to_string(k));
    if (!Has(key)) continue;
    const ParsedRecord r = Parse(Get(key));
    if (differs(r)) odd += "; " + Describe(r, k);
  }
  if (odd.empty()) return;
  Abort("the hosts were launched differently: " + Describe(master, 0) + odd +
        ": give every host the same --nnodes and --nproc_per_node");
}

void LaunchRendezvous::JoinRound(int round) {
  const std::string r = "round/" + std::to_string(round) + "/";
  Set(Key(r + "joined/" + std::to_string(at_.node_rank)), "1");
  std::vector<std::string> keys;
  for (int k = 0; k < at_.nnodes; ++k) keys.push_back(Key(r + "joined/" + std::to_string(k)));
  const auto deadline = Clock::now() + join_timeout_;
  while (true) try {
    if (auto m = Aborted()) ReportAbort(*m);
    if (Has(Key("give_up"))) throw Error("t5xx launch: the job was given up by " + Get(Key("give_up")));
    if (round == 0) CheckLaunchedAlike(false);
    if (store_->check(keys)) return;
    if (Clock::now() >= deadline) {
      std::string missing;
      for (int k = 0; k < at_.nnodes; ++k) {
        if (!Has(keys[static_cast<size_t>(k)])) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
      }
      const std::string msg = "the launch" + std::string(missing.find(',') == std::string::npos ? " with --node_rank " : "es with --node_rank ") +
                              missing + " did not join " + (round ? "restart " + std::to_string(round) : "the job") +
                              " at " + where_ + " within " + partitioning::Seconds(join_timeout_) +
                              " (were they started? see their logs)";
      if (server_) Abort(msg);
      throw Error("t5xx launch: " + msg);
    }
    std::this_thread::sleep_for(kPoll);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("t5xx launch: lost the launch rendezvous at " + where_ + " while waiting for " +
                "the other hosts' launchers (" + FirstLine(e.what()) +
                "): the launch with --node_rank=0 stopped, or the network to it is cut; see "
                "its log");
  }
}

bool LaunchRendezvous::Bounded(const std::function<void(c10d::Store&)>& requests) {
  if (StoreLost()) return false;
  // The requests on a thread of their own (holding the store), waited for
  // at most kBoundedWait: an unreachable master's store must not hold this
  // launcher until its sockets time out.
  auto done = std::make_shared<std::promise<bool>>();
  std::future<bool> finished = done->get_future();
  std::thread([store = store_, requests, done] {
    try {
      requests(*store);
      done->set_value(true);
    } catch (const std::exception&) {
      done->set_value(false);
    }
  }).detach();
  const bool ok = finished.wait_for(kBoundedWait) == std::future_status::ready && finished.get();
  if (!ok) {
    std::lock_guard<std::mutex> lock(poll_->mutex);
    poll_->lost = true;
  }
  return ok;
}

bool LaunchRendezvous::StoreLost() {
  std::lock_guard<std::mutex> lock(poll_->mutex);
  return poll_->lost;
}

std::string LaunchRendezvous::FailRound(int round, const std::string& cause) {
  const std::string key = Key("round/" + std::to_string(round) + "/failed");
  const std::string mine = self_ + ": " + cause;
  auto recorded = std::make_shared<std::string>(mine);
  // (If the store is gone -- its host stopped, the network is cut -- this
  // host's own cause; the next round's join names the store.)
  Bounded([key, mine, recorded](c10d::Store& store) {
    if (store.add(key + "_n", 1) == 1) store.set(key, std::vector<uint8_t>(mine.begin(), mine.end()));
    for (int i = 0; i < 40 && !store.check({key}); ++i) std::this_thread::sleep_for(kPoll);
    if (store.check({key})) {
      const std::vector<uint8_t> v = store.get(key);
      *recorded = std::string(v.begin(), v.end());
    }
  });
  return *recorded;
}

std::optional<std::string> LaunchRendezvous::RoundFailed(int round) {
  // Polled from the launcher's supervision loop, which must never wait on
  // the network: each poll runs on a thread of its own (holding the store),
  // and a poll still running is no news yet.
  std::lock_guard<std::mutex> lock(poll_->mutex);
  if (poll_->round == round && poll_->result) return poll_->result;
  if (poll_->running || poll_->lost) return std::nullopt;
  if (poll_->round != round) poll_->result.reset();
  poll_->running = true;
  poll_->round = round;
  std::thread([poll = poll_, store = store_, round, where = where_,
               give_up = Key("give_up"),
               failed = Key("round/" + std::to_string(round) + "/failed")] {
    std::optional<std::string> result;
    bool lost = false;
    try {
      if (store->check({give_up})) {
        const std::vector<uint8_t> v = store->get(give_up);
        result = "the job was given up by " + std::string(v.begin(), v.end());
      } else if (store->check({failed})) {
        const std::vector<uint8_t> v = store->get(failed);
        result = std::string(v.begin(), v.end());
      }
    } catch (const std::exception& e) {
      // The master's host stopped or its network is cut: no news of the
      // others. This host's ranks find that out themselves and name it
      // (their collectives' timeouts); stopping them now would hide it.
      lost = true;
      std::cerr << "t5xx launch: lost the launch rendezvous at " << where << " ("
                << FirstLine(e.what()) << "); the processes of this host go on until they "
                << "end or fail" << std::endl;
    }
    std::lock_guard<std::mutex> lock(poll->mutex);
    poll->running = false;
    poll->lost = poll->lost || lost;
    if (poll->round == round && result) poll->result = result;
  }).detach();
  return std::nullopt;
}

void LaunchRendezvous::GiveUp(const std::string& why) {
  const std::string n = Key("give_up_n"), key = Key("give_up"), text = self_ + ": " + why;
  Bounded([n, key, text](c10d::Store& store) {  // (a store gone: the others see that themselves)
    if (store.add(n, 1) == 1) store.set(key, std::vector<uint8_t>(text.begin(), text.end()));
  });
}

void LaunchRendezvous::Finish(int round) {
  (void)round;
  const std::string mine = Key("done/" + std::to_string(at_.node_rank));
  if (!Bounded([mine](c10d::Store& store) { store.set(mine, {1}); }) || !server_) return;
  // Node 0 serves the store until every launcher is done (best effort: the
  // job's work is done).
  try {
    std::vector<std::string> keys;
    for (int k = 0; k < at_.nnodes; ++k) keys.push_back(Key("done/" + std::to_string(k)));
    const auto until = Clock::now() + join_timeout_;
    while (!store_->check(keys) && !Has(Key("give_up")) && Clock::now() < until) {
      std::this_thread::sleep_for(kPoll);
    }
  } catch (const std::exception&) {
  }
}

}  // namespace t5xx::cli
