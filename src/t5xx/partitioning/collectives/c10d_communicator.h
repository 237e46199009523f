// The Communicator over libtorch's c10d: the processes of a run meet at a
// c10d TCPStore that rank 0 serves at MASTER_ADDR:MASTER_PORT
// (process_environment.h), then every collective is a collective of the
// chosen backend -- Gloo (CPU; also takes CUDA tensors through the host) or
// NCCL (GPU: one process per GPU, each on the device LOCAL_RANK picks;
// compiled only against a CUDA libtorch, whose USE_C10D_NCCL is set).
// Joining waits at most `join_timeout`; a process that never joins makes
// every other one fail with the missing ranks named (t5x hangs there). Every
// process bumps a heartbeat counter in the store four times a second; when a
// collective fails (a peer died and its connections broke, or the
// collective timeout passed), the survivors watch the counters for 2 s and
// name the ranks that stopped. libtorch 1.13 / 2.x differences stay in the
// .cc.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "t5xx/partitioning/collectives/communicator.h"
#include "t5xx/partitioning/launch/process_environment.h"

namespace t5xx::partitioning {

// c10d's backends t5xx uses.
enum class CommunicationBackend { kGloo, kNccl };

// Whether this build has NCCL (a CUDA libtorch with c10d's NCCL backend).
bool NcclAvailable();

struct ConnectOptions {
  // Gloo (the default) or NCCL. NCCL's collectives run on `device` (a CUDA
  // device, made current by Connect): CUDA tensors there are reduced in
  // place without blocking the host; CPU tensors handed to a collective are
  // copied to the device and back (blocking). Connect throws t5xx::Error
  // when NCCL is asked for in a build without it or without a CUDA device.
  CommunicationBackend backend = CommunicationBackend::kGloo;
  at::Device device = at::kCPU;
  // Every process must have joined within this (from its own start); the
  // others then wait up to 10 s more for rank 0's report of who is missing.
  std::chrono::milliseconds join_timeout{std::chrono::minutes(5)};
  // A collective that does not complete within this fails.
  std::chrono::milliseconds collective_timeout{std::chrono::minutes(30)};
};

class C10dCommunicator final : public Communicator {
 public:
  // Joins the run `env` describes. Throws t5xx::Error naming the ranks that
  // did not join in time (rank 0, and every other rank through the store),
  // or, on a rank other than 0, that rank 0's rendezvous at
  // MASTER_ADDR:MASTER_PORT could not be reached.
  static std::unique_ptr<C10dCommunicator> Connect(const ProcessEnvironment& env,
                                                   const ConnectOptions& options = {});
  ~C10dCommunicator() override;

  int rank() const override { return rank_; }
  // How the collectives travel, for the log: "Gloo on 10.0.0.2 (interface
  // eth0), this host's route to MASTER_ADDR ..." -- GLOO_SOCKET_IFNAME's
  // interfaces when set (as PyTorch honours it), else 127.0.0.1 for a
  // rendezvous on this host, else this host's address on its route to
  // MASTER_ADDR (not the address its host name resolves to, which is often
  // 127.0.0.1 and unreachable from other hosts); NCCL_SOCKET_IFNAME is set
  // to that interface when unset.
  std::string transport() const;
  // The backend Connect chose (ConnectOptions::backend), shared by subgroups.
  CommunicationBackend backend() const;
  int size() const override { return size_; }
  // The backend's allreduce, allgather and broadcast. ReduceScatterSum is
  // NCCL's reduce-scatter, or for Gloo (which in libtorch 1.13 has no
  // reduce-scatter) an all-to-all of the size() blocks of dim 0 -- each
  // process receives every process's copy of its own block, (size()-1)/size()
  // of the tensor sent, as a ring reduce-scatter sends -- summed locally in
  // rank order. Errors (a peer that died, a timeout) become t5xx::Error
  // naming the collective.
  void AllReduceSum(at::Tensor& t) const override;
  // The allreduce started (Gloo: on its worker threads; NCCL: queued on
  // its stream); the waiter turns errors into t5xx::Error as AllReduceSum
  // does (NCCL: it makes the current stream wait for the result).
  std::function<void()> StartAllReduceSum(at::Tensor& t) const override;
  at::Tensor AllGather(const at::Tensor& t) const override;
  // The allgather started as StartAllReduceSum starts its allreduce.
  std::function<at::Tensor()> StartAllGather(const at::Tensor& t) const override;
  at::Tensor ReduceScatterSum(const at::Tensor& t) const override;
  // The reduce-scatter started likewise (Gloo: its all-to-all).
  std::function<at::Tensor()> StartReduceScatterSum(const at::Tensor& t) const override;
  void Broadcast(at::Tensor& t, int root) const override;
  void Barrier() const override;
  // A process group of the same backend of the members `ranks` over the
  // same store (a prefix per group), with this communicator's options.
  std::shared_ptr<const Communicator> Subgroup(const std::vector<int>& ranks) const override;
  // Shared with every subgroup made from this communicator.
  CommunicationStats stats() const override;

 private:
  struct Impl;
  C10dCommunicator(std::shared_ptr<Impl> impl, int rank, int size);
  // Runs a c10d call; its error becomes a t5xx::Error naming the
  // collective, this rank and the ranks that stopped (StoppedRanks).
  template <typename F>
  void Collective(const char* what, F&& f) const;
  // The run's ranks whose heartbeats stood still while watched (about 2 s),
  // as a sentence; "" when all are alive.
  std::string StoppedRanks() const;
  // "host h (10.0.0.2)": where the run's rank `world_rank` joined from.
  const std::string& HostOf(int world_rank) const;
  std::shared_ptr<Impl> impl_;
  int rank_;
  int size_;
};

}  // namespace t5xx::partitioning
