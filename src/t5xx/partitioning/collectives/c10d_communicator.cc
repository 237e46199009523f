// The c10d communicator: rendezvous through a c10d TCPStore, collectives
// through c10d's ProcessGroupGloo or ProcessGroupNCCL (see
// c10d_communicator.h).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include "t5xx/partitioning/collectives/c10d_communicator.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <atomic>
#include <mutex>
#include <csignal>
#include <sstream>
#include <thread>
#include <vector>

#include <unistd.h>

#include <cstdlib>

#include "t5xx/device/device.h"
#include "t5xx/partitioning/launch/rendezvous.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/host_name.h"
#include "t5xx/util/system/route.h"

namespace t5xx::partitioning {
namespace {

using Clock = std::chrono::steady_clock;

// How often each process bumps its heartbeat counter in the store, and how
// long a failed collective watches the counters before naming the ranks
// whose counters stood still.
constexpr std::chrono::milliseconds kHeartbeatPeriod{250};
constexpr std::chrono::milliseconds kHeartbeatWatch{2000};

std::string AliveKey(int world_rank) { return "t5xx/alive/" + std::to_string(world_rank); }

}  // namespace

// The counters of a run's communicator and its subgroups.
struct StatsCounter {
  std::mutex mu;
  CommunicationStats stats;
  void Add(double payload, double sent) {
    std::lock_guard<std::mutex> lock(mu);
    ++stats.collectives;
    stats.payload_bytes += payload;
    stats.sent_bytes += sent;
  }
};

// Each process's heartbeat: a counter in the store it bumps every
// kHeartbeatPeriod from its own thread, so that when a collective fails the
// survivors can tell which processes stopped (t5x and c10d only report the
// broken connection).
struct Heartbeat {
  std::atomic<bool> stop{false};
  std::thread thread;
  ~Heartbeat() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

bool NcclAvailable() {
#ifdef USE_C10D_NCCL
  return true;
#else
  return false;
#endif
}

struct C10dCommunicator::Impl {
  std::shared_ptr<StatsCounter> counter = std::make_shared<StatsCounter>();
  std::shared_ptr<Heartbeat> heartbeat;  // the run's, shared with subgroups
  int world_size = 1;
  c10::intrusive_ptr<c10d::Store> store;
  CommunicationBackend backend = CommunicationBackend::kGloo;
  at::Device device = at::kCPU;  // NCCL's
  std::chrono::milliseconds timeout{0};
  // One of the two process groups, by `backend`.
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  c10::intrusive_ptr<c10d::ProcessGroupGloo::Options> options;
#ifdef USE_C10D_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif
  std::vector<int> world_ranks;  // this communicator's ranks as ranks of the run
  std::string transport;         // how its collectives travel (transport())
  std::vector<std::string> hosts;  // where each rank of the run joined from

  // Calls f with the process group (both have the same collective calls;
  // the base class differs between libtorch 1.13 and 2.x, so it is not
  // named).
  template <typename F>
  auto WithGroup(F&& f) {
#ifdef USE_C10D_NCCL
    if (backend == CommunicationBackend::kNccl) return f(*nccl);
#endif
    return f(*pg);
  }
  // The tensor a collective works on: NCCL's device holds it.
  at::Tensor Staged(const at::Tensor& t) const {
    at::Tensor c = t.is_contiguous() ? t : t.contiguous();
    if (backend == CommunicationBackend::kNccl && c.device() != device) c = c.to(device);
    // Gloo has no bfloat16/float16 reductions (libtorch 1.13: "Invalid
    // scalar type"; t5x's gins run bfloat16 activations): float32 on the
    // wire, which also sums the partial results without rounding each.
    if (NarrowFloatOnGloo(c)) c = c.to(at::kFloat);
    return c;
  }
  bool NarrowFloatOnGloo(const at::Tensor& t) const {
    return backend != CommunicationBackend::kNccl &&
           (t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf);
  }
  // A new process group of this backend over `store` (prefixed).
  void MakeGroup(const c10::intrusive_ptr<c10d::Store>& prefixed, int rank, int size) {
    if (backend == CommunicationBackend::kNccl) {
#ifdef USE_C10D_NCCL
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = timeout;
      nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, rank, size, o);
      return;
#endif
    }
    pg = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank, size, options);
  }
};

CommunicationBackend C10dCommunicator::backend() const { return impl_->backend; }

C10dCommunicator::C10dCommunicator(std::shared_ptr<Impl> impl, int rank, int size)
    : impl_(std::move(impl)), rank_(rank), size_(size) {}

C10dCommunicator::~C10dCommunicator() = default;

const std::string& C10dCommunicator::HostOf(int world_rank) const {
  static const std::string unknown = "host ?";
  const size_t r = static_cast<size_t>(world_rank);
  return r < impl_->hosts.size() ? impl_->hosts[r] : unknown;
}

std::string C10dCommunicator::StoppedRanks() const {
  const int n = impl_->world_size;
  auto read = [&]() {
    std::vector<int64_t> counts(static_cast<size_t>(n), -1);
    for (int r = 0; r < n; ++r) counts[static_cast<size_t>(r)] = impl_->store->add(AliveKey(r), 0);
    return counts;
  };
  try {
    const std::vector<int64_t> before = read();
    std::this_thread::sleep_for(kHeartbeatWatch);
    const std::vector<int64_t> after = read();
    std::string stopped, where;
    int count = 0;
    const int me = impl_->world_ranks[static_cast<size_t>(rank_)];
    for (int r = 0; r < n; ++r) {
      if (r != me && after[static_cast<size_t>(r)] == before[static_cast<size_t>(r)]) {
        stopped += (count++ ? ", " : "") + std::to_string(r);
        const std::string& host = HostOf(r);
        if (where.find(host) == std::string::npos) where += (where.empty() ? "" : ", ") + host;
      }
    }
    if (count == 0) return "";
    return "rank" + std::string(count == 1 ? " " : "s ") + stopped + " of the run stopped (on " +
           where + "; no heartbeat for " + std::to_string(kHeartbeatWatch.count() / 1000) +
           " s: the process died, or the network to its host is cut; see " +
           (count == 1 ? "its" : "their") + " log)";
  } catch (const std::exception&) {
    return "rank 0 of the run stopped, or the network to its " + HostOf(0) +
           " is cut (its rendezvous store no longer answers; see its log)";
  }
}

template <typename F>
void C10dCommunicator::Collective(const char* what, F&& f) const {
  try {
    f();
  } catch (const std::exception& e) {
    const std::string stopped = StoppedRanks();
    throw Error(std::string("the ") + what + " collective failed on rank " +
                std::to_string(impl_->world_ranks[static_cast<size_t>(rank_)]) + ": " + e.what() +
                (stopped.empty() ? " (another process may have stopped or died; see its log)"
                                 : ": " + stopped));
  }
}

namespace {

// Where this process's collectives go (GLOO_SOCKET_IFNAME, or the route to
// the master), as c10_communicator.h's Connect describes.
struct Binding {
  std::vector<std::string> interfaces;  // GLOO_SOCKET_IFNAME's, in order
  std::string address;                  // else this address
  std::string interface;                // address's interface ("" if unknown)
  std::string description;              // for the log
  std::string self;                     // for the others' errors
};

Binding ChooseBinding(const ProcessEnvironment& env) {
  Binding b;
  const std::string host = HostName();
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  if (ifname && *ifname) {
    std::stringstream list(ifname);
    for (std::string i; std::getline(list, i, ',');) {
      if (!i.empty()) b.interfaces.push_back(i);
    }
  }
  if (IsLoopbackHost(env.master_addr)) {
    b.address = "127.0.0.1";
  } else {
    const LocalRoute route = RouteTo(env.master_addr);
    b.address = route.address;
    b.interface = route.interface;
  }
  b.self = "host " + std::string(host) + " (" + b.address + ")";
  if (!b.interfaces.empty()) {
    b.description = "Gloo on interface " + std::string(ifname) + " (GLOO_SOCKET_IFNAME)";
  } else if (IsLoopbackHost(env.master_addr)) {
    b.description = "Gloo on 127.0.0.1 (the rendezvous is on this host)";
  } else {
    b.description = "Gloo on " + b.address +
                     (b.interface.empty() ? "" : " (interface " + b.interface + ")") +
                     ", this host's route to MASTER_ADDR " + env.master_addr +
                     "; set GLOO_SOCKET_IFNAME to choose another";
  }
  return b;
}

std::vector<std::shared_ptr<::gloo::transport::Device>> GlooDevices(const Binding& b) {
  std::vector<std::shared_ptr<::gloo::transport::Device>> devices;
  for (const std::string& i : b.interfaces) {
    try {
      devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(i));
    } catch (const std::exception& e) {
      throw Error("GLOO_SOCKET_IFNAME names the interface '" + i + "', which Gloo cannot use: " +
                  e.what() + " (see `ip addr` for this host's interfaces)");
    }
  }
  if (devices.empty()) devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(b.address));
  return devices;
}

}  // namespace

std::string C10dCommunicator::transport() const { return impl_->transport; }

std::unique_ptr<C10dCommunicator> C10dCommunicator::Connect(const ProcessEnvironment& env,
                                                            const ConnectOptions& options) {
  if (options.backend == CommunicationBackend::kNccl) {
    T5XX_CHECK(NcclAvailable(),
               "NCCL was asked for, but this t5xx is built against a libtorch without CUDA "
               "(and so without c10d's NCCL); rebuild against a CUDA libtorch or train on the "
               "CPU (--device=cpu), which uses Gloo");
    T5XX_CHECK(options.device.is_cuda(),
               "NCCL needs a CUDA device for this process, got " + options.device.str() +
                   "; use --device=cuda (one process per GPU, LOCAL_RANK picks it)");
  }
  // A peer that dies mid-send must be an error of the collective (EPIPE),
  // which names it, not SIGPIPE ending this process without a word.
  std::signal(SIGPIPE, SIG_IGN);
  // This process's binding, and how the others' errors name it.
  const Binding binding = ChooseBinding(env);
  auto impl = std::make_shared<Impl>();
  for (int r = 0; r < env.world_size; ++r) impl->world_ranks.push_back(r);
  impl->store = JoinRendezvous(env, options.join_timeout, binding.self);
  impl->transport = binding.description;
  impl->hosts = RankHosts(*impl->store, env.world_size);
  impl->backend = options.backend;
  impl->device = options.device;
  impl->timeout = options.collective_timeout;
  const bool nccl = options.backend == CommunicationBackend::kNccl;
  if (nccl) device::SetCurrentDevice(options.device);
  auto go = c10d::ProcessGroupGloo::Options::create(options.collective_timeout);
  if (nccl && !binding.interface.empty() && !std::getenv("NCCL_SOCKET_IFNAME")) {
    // NCCL reads its bootstrap interface from the environment.
    setenv("NCCL_SOCKET_IFNAME", binding.interface.c_str(), 1);
  }
  go->devices = GlooDevices(binding);
  impl->options = go;
  try {
    impl->MakeGroup(c10::make_intrusive<c10d::PrefixStore>(nccl ? "t5xx/nccl" : "t5xx/gloo",
                                                           impl->store),
                    env.rank, env.world_size);
  } catch (const std::exception& e) {
    throw Error("rank " + std::to_string(env.rank) + " cannot set up " +
                (nccl ? "NCCL" : "Gloo") + " with the other " +
                std::to_string(env.world_size - 1) + " processes: " + e.what());
  }
  impl->world_size = env.world_size;
  impl->heartbeat = std::make_shared<Heartbeat>();
  {
    c10::intrusive_ptr<c10d::Store> store = impl->store;
    Heartbeat* hb = impl->heartbeat.get();
    const std::string key = AliveKey(env.rank);
    hb->thread = std::thread([store, hb, key] {
      while (!hb->stop) {
        try {
          store->add(key, 1);
        } catch (const std::exception&) {
          return;  // the store (rank 0) is gone; the collectives will say so
        }
        std::this_thread::sleep_for(kHeartbeatPeriod);
      }
    });
  }
  return std::unique_ptr<C10dCommunicator>(
      new C10dCommunicator(std::move(impl), env.rank, env.world_size));
}

namespace {
// Runs the in-place collective `f` on a contiguous copy of `t` on the
// backend's device (Impl::Staged; `t` itself when it is already both),
// copied back into `t` after.
template <typename Impl, typename F>
void InPlace(Impl& impl, at::Tensor& t, F&& f) {
  at::Tensor c = impl.Staged(t);
  std::vector<at::Tensor> v{c};
  f(v);
  if (!c.is_same(t)) t.copy_(c);
}
}  // namespace

CommunicationStats C10dCommunicator::stats() const {
  std::lock_guard<std::mutex> lock(impl_->counter->mu);
  return impl_->counter->stats;
}

void C10dCommunicator::AllReduceSum(at::Tensor& t) const {
  const double n = static_cast<double>(t.numel() * t.element_size());
  impl_->counter->Add(n, 2.0 * (size_ - 1) / size_ * n);
  Collective("allreduce", [&] {
    InPlace(*impl_, t, [&](std::vector<at::Tensor>& v) {
      c10d::AllreduceOptions o;
      o.reduceOp = c10d::ReduceOp::SUM;
      impl_->WithGroup([&](auto& pg) { pg.allreduce(v, o)->wait(); });
    });
  });
}

std::function<void()> C10dCommunicator::StartAllReduceSum(at::Tensor& t) const {
  T5XX_CHECK(t.is_contiguous(), "StartAllReduceSum needs a contiguous tensor");
  if ((impl_->backend == CommunicationBackend::kNccl && t.device() != impl_->device) ||
      impl_->NarrowFloatOnGloo(t)) {
    AllReduceSum(t);  // staged (through the device, or as float32), blocking
    return [] {};
  }
  const double n = static_cast<double>(t.numel() * t.element_size());
  impl_->counter->Add(n, 2.0 * (size_ - 1) / size_ * n);
  // (The Work type is ProcessGroup::Work in libtorch 1.13, c10d::Work in 2.x.)
  auto start = [&] {
    std::vector<at::Tensor> v{t};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::SUM;
    return impl_->WithGroup([&](auto& pg) { return pg.allreduce(v, o); });
  };
  decltype(start()) work;
  Collective("allreduce", [&] { work = start(); });
  return [this, work] { Collective("allreduce", [&] { work->wait(); }); };
}

at::Tensor C10dCommunicator::AllGather(const at::Tensor& t) const {
  return StartAllGather(t)();
}

std::function<at::Tensor()> C10dCommunicator::StartAllGather(const at::Tensor& t) const {
  T5XX_CHECK(t.dim() >= 1, "AllGather needs a tensor with a dim 0");
  const double n = static_cast<double>(t.numel() * t.element_size());
  impl_->counter->Add(n, (size_ - 1) * n);
  const at::Tensor in = impl_->Staged(t);
  // Every rank's part lands in its rows of one buffer (no concatenation).
  std::vector<int64_t> shape = in.sizes().vec();
  shape[0] *= size_;
  const at::Tensor result = at::empty(shape, in.options());
  auto parts = std::make_shared<std::vector<std::vector<at::Tensor>>>(1);
  for (int r = 0; r < size_; ++r) (*parts)[0].push_back(result.narrow(0, r * in.size(0), in.size(0)));
  auto start = [&] {
    std::vector<at::Tensor> inputs{in};
    return impl_->WithGroup([&](auto& pg) { return pg.allgather(*parts, inputs); });
  };
  decltype(start()) work;
  Collective("allgather", [&] { work = start(); });
  const at::Device device = t.device();
  const at::ScalarType dtype = t.scalar_type();
  return [this, work, parts, in, result, device, dtype] {
    Collective("allgather", [&] { work->wait(); });
    return result.device() == device && result.scalar_type() == dtype ? result
                                                                        : result.to(device, dtype);
  };
}

at::Tensor C10dCommunicator::ReduceScatterSum(const at::Tensor& t) const {
  return StartReduceScatterSum(t)();
}

std::function<at::Tensor()> C10dCommunicator::StartReduceScatterSum(const at::Tensor& t) const {
  T5XX_CHECK(t.dim() >= 1 && t.size(0) % size_ == 0,
             "ReduceScatterSum: dim 0 of size " + std::to_string(t.dim() ? t.size(0) : 0) +
                 " does not divide by the " + std::to_string(size_) + " processes");
  if (size_ == 1) {
    at::Tensor copy = t.clone();
    return [copy] { return copy; };
  }
  const double n = static_cast<double>(t.numel() * t.element_size());
  impl_->counter->Add(n, (size_ - 1) * n / size_);
  const int64_t rows = t.size(0) / size_;
  const at::Tensor in = impl_->Staged(t);
  std::vector<int64_t> shape = in.sizes().vec();
  shape[0] = rows;
  const at::Device device = t.device();
#ifdef USE_C10D_NCCL
  if (impl_->backend == CommunicationBackend::kNccl) {
    at::Tensor out = at::empty(shape, in.options());
    auto start = [&] {
      c10d::ReduceScatterOptions o;
      o.reduceOp = c10d::ReduceOp::SUM;
      return impl_->nccl->_reduce_scatter_base(out, const_cast<at::Tensor&>(in), o);
    };
    decltype(start()) work;
    Collective("reduce-scatter", [&] { work = start(); });
    return [this, work, out, in, device] {
      Collective("reduce-scatter", [&] { work->wait(); });
      return out.device() == device ? out : out.to(device);
    };
  }
#endif
  // Block r of every process lands at rank r, stacked in rank order.
  at::Tensor received = at::empty_like(in);
  auto start = [&] {
    std::vector<int64_t> equal_split;
    c10d::AllToAllOptions o;
    return impl_->pg->alltoall_base(received, const_cast<at::Tensor&>(in), equal_split,
                                    equal_split, o);
  };
  decltype(start()) work;
  Collective("reduce-scatter", [&] { work = start(); });
  shape.insert(shape.begin(), size_);
  const at::ScalarType dtype = t.scalar_type();
  return [this, work, received, in, shape, dtype] {
    Collective("reduce-scatter", [&] { work->wait(); });
    return received.view(shape).sum(0).to(dtype);
  };
}

void C10dCommunicator::Broadcast(at::Tensor& t, int root) const {
  T5XX_CHECK(root >= 0 && root < size_, "Broadcast: root " + std::to_string(root) +
                                            " is not a rank of " + std::to_string(size_));
  const double n = static_cast<double>(t.numel() * t.element_size());
  impl_->counter->Add(n, n);
  Collective("broadcast", [&] {
    InPlace(*impl_, t, [&](std::vector<at::Tensor>& v) {
      c10d::BroadcastOptions o;
      o.rootRank = root;
      impl_->WithGroup([&](auto& pg) { pg.broadcast(v, o)->wait(); });
    });
  });
}

void C10dCommunicator::Barrier() const {
  Collective("barrier", [&] { impl_->WithGroup([&](auto& pg) { pg.barrier()->wait(); }); });
}

std::shared_ptr<const Communicator> C10dCommunicator::Subgroup(const std::vector<int>& ranks) const {
  int mine = -1;
  std::string key = "t5xx/group";
  auto impl = std::make_shared<Impl>();
  for (size_t i = 0; i < ranks.size(); ++i) {
    T5XX_CHECK(ranks[i] >= 0 && ranks[i] < size_,
               "Subgroup: rank " + std::to_string(ranks[i]) + " is not one of the " +
                   std::to_string(size_) + " processes");
    if (ranks[i] == rank_) mine = static_cast<int>(i);
    const int world = impl_->world_ranks[static_cast<size_t>(ranks[i])];
    impl->world_ranks.push_back(world);
    key += "/" + std::to_string(world);
  }
  T5XX_CHECK(mine >= 0, "Subgroup: rank " + std::to_string(rank_) + " is not in the group");
  if (ranks.size() == 1) return std::make_shared<LocalCommunicator>();
  impl->store = impl_->store;
  impl->options = impl_->options;
  impl->counter = impl_->counter;
  impl->heartbeat = impl_->heartbeat;
  impl->world_size = impl_->world_size;
  impl->hosts = impl_->hosts;
  impl->transport = impl_->transport;
  impl->backend = impl_->backend;
  impl->device = impl_->device;
  impl->timeout = impl_->timeout;
  try {
    impl->MakeGroup(c10::make_intrusive<c10d::PrefixStore>(key, impl->store), mine,
                    static_cast<int>(ranks.size()));
  } catch (const std::exception& e) {
    throw Error("rank " + std::to_string(rank_) + " cannot set up the process group " + key +
                ": " + e.what());
  }
  return std::shared_ptr<const Communicator>(
      new C10dCommunicator(std::move(impl), mine, static_cast<int>(ranks.size())));
}

}  // namespace t5xx::partitioning
