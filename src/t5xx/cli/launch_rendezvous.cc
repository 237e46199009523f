// The launchers' rendezvous of `t5xx launch` -- the implementation of
// launch_rendezvous.h.
#include "t5xx/cli/launch_rendezvous.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>
#include <thread>
#include <vector>

#include "t5xx/partitioning/rendezvous.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/route.h"

namespace t5xx::cli {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(50);

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
  const std::string first = Has(Key("abort")) ? Get(Key("abort")) : msg;
  Set(Key("abort_seen/" + std::to_string(at_.node_rank)), "1");
  if (server_) {
    // Serve the store until the other launchers that joined have read it.
    const auto until = Clock::now() + std::chrono::seconds(5);
    for (int k = 1; k < at_.nnodes && Clock::now() < until;) {
      const std::string claim = Key("claim/" + std::to_string(k));
      if (!Has(claim) || Has(Key("abort_seen/" + std::to_string(k)))) {
        ++k;
      } else {
        std::this_thread::sleep_for(kPoll);
      }
    }
  }
  throw Error("t5xx launch: " + first);
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
  Claim();
}

void LaunchRendezvous::Claim() {
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
  while (true) {
    if (auto m = Aborted()) {
      Set(Key("abort_seen/" + std::to_string(at_.node_rank)), "1");
      throw Error("t5xx launch: " + *m);
    }
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
  }
}

std::string LaunchRendezvous::FailRound(int round, const std::string& cause) {
  const std::string key = Key("round/" + std::to_string(round) + "/failed");
  try {
    if (store_->add(key + "_n", 1) == 1) Set(key, self_ + ": " + cause);
    for (int i = 0; i < 40 && !Has(key); ++i) std::this_thread::sleep_for(kPoll);
    if (Has(key)) return Get(key);
  } catch (const std::exception&) {
    // The store is gone (its host stopped, the network is cut): this
    // host's own cause, and the next round's join names the store.
  }
  return self_ + ": " + cause;
}

std::optional<std::string> LaunchRendezvous::RoundFailed(int round) {
  try {
    if (Has(Key("give_up"))) return "the job was given up by " + Get(Key("give_up"));
    const std::string key = Key("round/" + std::to_string(round) + "/failed");
    if (Has(key)) return Get(key);
  } catch (const std::exception& e) {
    return "the launch rendezvous at " + where_ + " is gone (" + FirstLine(e.what()) +
           "): the launch with --node_rank=0 stopped";
  }
  return std::nullopt;
}

void LaunchRendezvous::GiveUp(const std::string& why) {
  try {
    if (store_->add(Key("give_up_n"), 1) == 1) Set(Key("give_up"), self_ + ": " + why);
  } catch (const std::exception&) {
    // The store is gone: the others see that themselves.
  }
}

void LaunchRendezvous::Finish(int round) {
  (void)round;
  try {
    Set(Key("done/" + std::to_string(at_.node_rank)), "1");
    if (!server_) return;
    std::vector<std::string> keys;
    for (int k = 0; k < at_.nnodes; ++k) keys.push_back(Key("done/" + std::to_string(k)));
    const auto until = Clock::now() + join_timeout_;
    while (!store_->check(keys) && !Has(Key("give_up")) && Clock::now() < until) {
      std::this_thread::sleep_for(kPoll);
    }
  } catch (const std::exception&) {
    // Finishing is best effort: the job's work is done.
  }
}

}  // namespace t5xx::cli
