// The launchers' rendezvous of `t5xx launch` -- the implementation of
// launch_rendezvous.h.
#include "t5xx/cli/launch_rendezvous.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <csignal>
#include <cstdlib>
#include <future>
#include <iostream>
#include <thread>
#include <vector>

#include "t5xx/partitioning/launch/rendezvous.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/route.h"
#include "t5xx/util/system/stop_signals.h"

namespace t5xx::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(50);
// The longest a launcher waits for a store request after its ranks ended,
// and node 0 for the others to read how the job ended.
constexpr auto kBoundedWait = std::chrono::seconds(5);
constexpr auto kBeat = std::chrono::seconds(1);

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

// stderr sent to /dev/null while alive: libtorch logs a failed bind itself
// (glog lines) before t5xx's one error says what it means.
class QuietStderr {
 public:
  QuietStderr() : saved_(dup(2)) {
    const int null = open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && null >= 0) dup2(null, 2);
    if (null >= 0) close(null);
  }
  ~QuietStderr() {
    if (saved_ >= 0) {
      dup2(saved_, 2);
      close(saved_);
    }
  }

 private:
  int saved_;
};

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

c10::intrusive_ptr<c10d::Store> OpenStore(const Placement& at, bool server,
                                          std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(at.master_port);
  so.isServer = server;
  so.waitWorkers = false;
  so.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(at.master_addr, so);
}

std::string Bytes(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

}  // namespace

bool LaunchRendezvous::Has(const std::string& key) { return store_->check({key}); }
std::string LaunchRendezvous::Get(const std::string& key) { return Bytes(store_->get(key)); }
void LaunchRendezvous::Set(const std::string& key, const std::string& value) {
  store_->set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

void LaunchRendezvous::WaitForOthers(const std::string& seen_key, std::chrono::milliseconds limit) {
  if (!server_) return;
  const auto until = Clock::now() + limit;
  try {
    // Every other launcher that reached the store (launchers_n counts this
    // one too; a refused late one takes itself out).
    while (store_->add(seen_key, 0) < store_->add(Key("launchers_n"), 0) - 1 &&
           Clock::now() < until) {
      std::this_thread::sleep_for(kPoll);
    }
  } catch (const std::exception&) {
  }
}

void LaunchRendezvous::Abort(const std::string& msg) {
  if (store_->add(Key("abort_n"), 1) == 1) Set(Key("abort"), msg);
  for (int i = 0; i < 50 && !Has(Key("abort")); ++i) std::this_thread::sleep_for(kPoll);
  ReportAbort(Has(Key("abort")) ? Get(Key("abort")) : msg);
}

void LaunchRendezvous::ReportAbort(const std::string& msg) {
  if (!saw_abort_ && !server_) store_->add(Key("abort_seen_n"), 1);
  saw_abort_ = true;
  // Node 0 serves the store until every other launcher has read it, so that
  // each reports it rather than a lost connection.
  WaitForOthers(Key("abort_seen_n"), kBoundedWait);
  throw Error("t5xx launch: " + msg);
}

LaunchRendezvous::LaunchRendezvous(const Placement& at, std::chrono::milliseconds join_timeout,
                                   std::string self, std::function<int()> stop_signal)
    : at_(at), join_timeout_(join_timeout), self_(std::move(self)),
      stop_signal_(std::move(stop_signal)) {
  where_ = at.master_addr + ":" + std::to_string(at.master_port);
  try {
    Connect();
    Claim();
  } catch (const Error&) {
    throw;
  } catch (const LaunchStopped&) {
    throw;
  } catch (const std::exception& e) {
    if (const int sig = stop_signal_()) {
      throw LaunchStopped(sig, "stopped by " + std::string(StopSignalName(sig)) +
                                   " while joining the launch rendezvous at " + where_);
    }
    throw Error("t5xx launch: lost the launch rendezvous at " + where_ + " while joining it (" +
                FirstLine(e.what()) + "): the launch with --node_rank=0 stopped; see its log");
  }
}

LaunchRendezvous::~LaunchRendezvous() { beating_->store(false); }

void LaunchRendezvous::Connect() {
  const bool master_here = IsAddressOfThisHost(at_.master_addr);
  if (at_.node_rank == 0 && master_here) {
    try {
      QuietStderr quiet;
      store_ = OpenStore(at_, /*server=*/true, join_timeout_);
      server_ = true;
      return;
    } catch (const std::exception& e) {
      // The port is taken: by this job's rendezvous (a second host given
      // --node_rank=0, which the claim names), or by another program.
      const std::string why = FirstLine(e.what());
      bool ours = false;
      try {
        store_ = OpenStore(at_, /*server=*/false, std::chrono::seconds(5));
        partitioning::ProbeRendezvousStore(store_, std::chrono::seconds(5), where_,
                                           "the launch with --node_rank=0");
        ours = Has(Key("claim/0"));
      } catch (const std::exception&) {
      }
      T5XX_CHECK(ours, "t5xx launch: cannot serve the launch rendezvous at " + where_ + ": " + why +
                           " (the port is in use on this host: choose another --master_port, "
                           "the same on every host)");
      return;
    }
  }
  try {
    store_ = OpenStore(at_, /*server=*/false, join_timeout_);
  } catch (const std::exception& e) {
    if (const int sig = stop_signal_()) {
      throw LaunchStopped(sig, "stopped by " + std::string(StopSignalName(sig)) +
                                   " while reaching the launch rendezvous at " + where_);
    }
    const std::string hint =
        at_.node_rank == 0
            ? "; and this host is not --master_addr=" + at_.master_addr +
                  ", while --node_rank=0 belongs to the host at --master_addr: give this host "
                  "its own --node_rank"
            : "";
    throw Error("t5xx launch: cannot reach the launch rendezvous at " + where_ + " within " +
                partitioning::Seconds(join_timeout_) + ": " + FirstLine(e.what()) +
                " (is the launch with --node_rank=0 running there, and are --master_addr "
                "and --master_port right?)" + hint);
  }
  partitioning::ProbeRendezvousStore(store_, join_timeout_, where_, "the launch with --node_rank=0");
  if (at_.node_rank == 0 && !master_here) {
    // The master's launcher is up (it answered) but may not have claimed
    // node 0 yet: it will, and this claim is then the duplicate either way.
    for (int i = 0; i < 40 && !Has(Key("claim/0")); ++i) std::this_thread::sleep_for(kPoll);
  }
}

bool LaunchRendezvous::Alive(int k) {
  const std::string beat = Key("beat/" + std::to_string(k));
  const int64_t before = store_->add(beat, 0);
  std::this_thread::sleep_for(2 * kBeat + kBeat / 2);
  return store_->add(beat, 0) != before;
}

void LaunchRendezvous::StartHeartbeat() {
  beating_->store(true);
  std::thread([beating = beating_, store = store_,
               beat = Key("beat/" + std::to_string(at_.node_rank))] {
    while (beating->load()) {
      try {
        store->add(beat, 1);
      } catch (const std::exception&) {
        return;  // the store is gone: nobody to tell
      }
      std::this_thread::sleep_for(kBeat);
    }
  }).detach();
}

void LaunchRendezvous::Claim() {
  store_->add(Key("launchers_n"), 1);
  const std::string k = std::to_string(at_.node_rank);
  if (store_->add(Key("claim/" + k), 1) == 1) {
    Set(Key("node/" + k), Record(at_, self_));
    StartHeartbeat();
    return;
  }
  std::string first = "another host";
  for (int i = 0; i < 40 && !Has(Key("node/" + k)); ++i) std::this_thread::sleep_for(kPoll);
  if (Has(Key("node/" + k))) first = Parse(Get(Key("node/" + k))).self;
  const bool started = Has(Key("started"));
  if (!Alive(at_.node_rank)) {
    // Its launcher died: this one takes its place, in the job's next round
    // (the current one lost this host's processes).
    Set(Key("node/" + k), Record(at_, self_));
    StartHeartbeat();
    if (started) {
      const int current = std::atoi(Get(Key("round_current")).c_str());
      FailRound(current, "the launch with --node_rank=" + k + " on " + first +
                             " stopped; " + self_ + " takes its place");
      first_round_ = current + 1;
    }
    return;
  }
  const std::string mistake =
      "--node_rank=" + k + " was given to two hosts, " + first + " and " + self_ +
      ": give each host its own --node_rank in [0, --nnodes)" +
      (at_.node_rank == 0 ? " (--node_rank=0 is the host at --master_addr=" + at_.master_addr + ")"
                          : "");
  // Once the job runs, the late one alone is refused; before, everyone
  // hears of it.
  if (started) {
    store_->add(Key("launchers_n"), -1);
    throw Error("t5xx launch: " + mistake + "; the job of " + first + " goes on");
  }
  Abort(mistake);
}

void LaunchRendezvous::CheckLaunchedAlike() {
  // Every launcher compares its own record with node 0's; node 0 compares
  // every record it has, so both sides of a mismatch name it.
  const std::string zero = Key("node/0");
  if (!Has(zero)) return;
  const ParsedRecord master = Parse(Get(zero));
  std::string odd;
  const int upto = std::max(at_.nnodes, master.nnodes);
  for (int k = 1; k < upto; ++k) {
    if (at_.node_rank != 0 && k != at_.node_rank) continue;
    const std::string key = Key("node/" + std::to_string(k));
    if (!Has(key)) continue;
    const ParsedRecord r = Parse(Get(key));
    if (r.nnodes != master.nnodes || r.nproc != master.nproc) odd += "; " + Describe(r, k);
  }
  if (odd.empty()) return;
  Abort("the hosts were launched differently: " + Describe(master, 0) + odd +
        ": give every host the same --nnodes and --nproc_per_node");
}

std::optional<LaunchRendezvous::RemoteEnd> LaunchRendezvous::GivenUp() {
  if (!Has(Key("give_up"))) return std::nullopt;
  RemoteEnd end;
  end.given_up = true;
  end.cause = Get(Key("give_up"));
  if (Has(Key("give_up_signal"))) end.stop_signal = std::atoi(Get(Key("give_up_signal")).c_str());
  std::lock_guard<std::mutex> lock(poll_->mutex);
  if (!poll_->acked && !server_) store_->add(Key("give_up_seen_n"), 1);
  poll_->acked = true;
  return end;
}

bool LaunchRendezvous::JoinRound(int round) {
  const std::string r = "round/" + std::to_string(round) + "/";
  std::vector<std::string> keys;
  for (int k = 0; k < at_.nnodes; ++k) keys.push_back(Key(r + "joined/" + std::to_string(k)));
  const auto deadline = Clock::now() + join_timeout_;
  try {
    Set(Key(r + "joined/" + std::to_string(at_.node_rank)), "1");
    Set(Key("round_current"), std::to_string(round));
    while (true) {
      if (const int sig = stop_signal_()) {
        GiveUp("stopped by " + std::string(StopSignalName(sig)), sig);
        throw LaunchStopped(sig, "stopped by " + std::string(StopSignalName(sig)) +
                                     " while waiting for the other hosts' launchers");
      }
      if (Has(Key("abort"))) ReportAbort(Get(Key("abort")));
      if (const std::optional<RemoteEnd> end = GivenUp()) {
        if (end->stop_signal) throw LaunchStopped(end->stop_signal, "the job was stopped: " + end->cause);
        throw Error("t5xx launch: the job was given up by " + end->cause);
      }
      if (round == 0) CheckLaunchedAlike();
      // The round failed before it started (a launcher that died was
      // replaced): the next one.
      if (Has(Key(r + "failed"))) return false;
      if (store_->check(keys)) {
        if (round == 0) Set(Key("started"), "1");
        return true;
      }
      if (Clock::now() >= deadline) {
        std::string missing;
        int n = 0;
        for (int k = 0; k < at_.nnodes; ++k) {
          if (!Has(keys[static_cast<size_t>(k)])) missing += (n++ ? ", " : "") + std::to_string(k);
        }
        const std::string msg = std::string(n == 1 ? "the launch with --node_rank " : "the launches with --node_rank ") +
                                missing + " did not join " +
                                (round ? "restart " + std::to_string(round) : std::string("the job")) +
                                " at " + where_ + " within " + partitioning::Seconds(join_timeout_) +
                                " (were they started? see their logs)";
        if (server_) Abort(msg);
        throw Error("t5xx launch: " + msg);
      }
      std::this_thread::sleep_for(kPoll);
    }
  } catch (const Error&) {
    throw;
  } catch (const LaunchStopped&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("t5xx launch: lost the launch rendezvous at " + where_ + " while waiting for " +
                "the other hosts' launchers (" + FirstLine(e.what()) +
                "): the launch with --node_rank=0 stopped, or the network to it is cut; see "
                "its log");
  }
}

bool LaunchRendezvous::StoreLost() {
  std::lock_guard<std::mutex> lock(poll_->mutex);
  return poll_->lost;
}

bool LaunchRendezvous::Bounded(const std::function<void(c10d::Store&)>& requests) {
  if (StoreLost()) return false;
  // On a thread of their own (holding the store), waited for at most
  // kBoundedWait: an unreachable master's store must not hold this launcher
  // until its sockets time out.
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

std::string LaunchRendezvous::FailRound(int round, const std::string& cause) {
  const std::string key = Key("round/" + std::to_string(round) + "/failed");
  const std::string mine = self_ + ": " + cause;
  auto recorded = std::make_shared<std::string>(mine);
  // (If the store is gone -- its host stopped, the network is cut -- this
  // host's own cause; the next round's join names the store.)
  Bounded([key, mine, recorded](c10d::Store& store) {
    if (store.add(key + "_n", 1) == 1) store.set(key, std::vector<uint8_t>(mine.begin(), mine.end()));
    for (int i = 0; i < 40 && !store.check({key}); ++i) std::this_thread::sleep_for(kPoll);
    if (store.check({key})) *recorded = Bytes(store.get(key));
  });
  return *recorded;
}

std::optional<LaunchRendezvous::RemoteEnd> LaunchRendezvous::RoundFailed(int round) {
  std::lock_guard<std::mutex> lock(poll_->mutex);
  if (poll_->round == round && poll_->result) return poll_->result;
  if (poll_->running || poll_->lost) return std::nullopt;
  if (poll_->round != round) poll_->result.reset();
  poll_->running = true;
  poll_->round = round;
  std::thread([poll = poll_, store = store_, round, where = where_, server = server_,
               give_up = Key("give_up"), signal = Key("give_up_signal"),
               seen = Key("give_up_seen_n"),
               failed = Key("round/" + std::to_string(round) + "/failed")] {
    std::optional<RemoteEnd> result;
    bool lost = false, ack = false;
    try {
      if (store->check({give_up})) {
        RemoteEnd end;
        end.given_up = true;
        end.cause = Bytes(store->get(give_up));
        if (store->check({signal})) end.stop_signal = std::atoi(Bytes(store->get(signal)).c_str());
        result = end;
        ack = true;
      } else if (store->check({failed})) {
        result = RemoteEnd{Bytes(store->get(failed)), false, 0};
      }
      if (ack) {
        std::lock_guard<std::mutex> lock(poll->mutex);
        if (!poll->acked && !server) store->add(seen, 1);
        poll->acked = true;
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

void LaunchRendezvous::GiveUp(const std::string& why, int stop_signal) {
  const std::string n = Key("give_up_n"), key = Key("give_up"), sig_key = Key("give_up_signal");
  const std::string text = self_ + ": " + why, sig = std::to_string(stop_signal);
  // (A store gone: the others see that themselves.)
  Bounded([n, key, text, sig_key, sig, stop_signal](c10d::Store& store) {
    if (store.add(n, 1) != 1) return;
    if (stop_signal) store.set(sig_key, std::vector<uint8_t>(sig.begin(), sig.end()));
    store.set(key, std::vector<uint8_t>(text.begin(), text.end()));
  });
  // Node 0 serves the store until the others have read how the job ended.
  WaitForOthers(Key("give_up_seen_n"), kBoundedWait);
}

void LaunchRendezvous::Finish(int round) {
  (void)round;
  const std::string mine = Key("done/" + std::to_string(at_.node_rank));
  if (!Bounded([mine](c10d::Store& store) { store.set(mine, std::vector<uint8_t>{1}); }) || !server_) return;
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
