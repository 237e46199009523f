// The Communicator over libtorch's c10d with the Gloo backend (CPU): the
// processes of a run meet at a c10d TCPStore that rank 0 serves at
// MASTER_ADDR:MASTER_PORT (process_environment.h), then every collective is
// a Gloo collective. Joining waits at most `join_timeout`; a process that
// never joins makes every other one fail with the missing ranks named
// (t5x hangs there). Every process bumps a heartbeat counter in the store
// four times a second; when a collective fails (a peer died and its
// connections broke, or the collective timeout passed), the survivors
// watch the counters for 2 s and name the ranks that stopped. libtorch 1.13 / 2.x differences stay in the .cc.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "t5xx/partitioning/communicator.h"
#include "t5xx/partitioning/process_environment.h"

namespace t5xx::partitioning {

struct ConnectOptions {
  // Every process must have joined within this (from its own start); the
  // others then wait up to 10 s more for rank 0's report of who is missing.
  std::chrono::milliseconds join_timeout{std::chrono::minutes(5)};
  // A collective that does not complete within this fails.
  std::chrono::milliseconds collective_timeout{std::chrono::minutes(30)};
};

class GlooCommunicator final : public Communicator {
 public:
  // Joins the run `env` describes. Throws t5xx::Error naming the ranks that
  // did not join in time (rank 0, and every other rank through the store),
  // or, on a rank other than 0, that rank 0's rendezvous at
  // MASTER_ADDR:MASTER_PORT could not be reached.
  static std::unique_ptr<GlooCommunicator> Connect(const ProcessEnvironment& env,
                                                   const ConnectOptions& options = {});
  ~GlooCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Gloo's allreduce, allgather and broadcast; ReduceScatterSum is a ring
  // of Gloo sends and receives (Gloo in libtorch 1.13 has no
  // reduce-scatter): size()-1 steps, each passing one block of n/size()
  // elements to the next rank and adding the one received. Errors (a peer that died, a timeout) become
  // t5xx::Error naming the collective.
  void AllReduceSum(at::Tensor& t) const override;
  // Gloo's allreduce on its worker threads; the waiter turns errors into
  // t5xx::Error as AllReduceSum does.
  std::function<void()> StartAllReduceSum(at::Tensor& t) const override;
  at::Tensor AllGather(const at::Tensor& t) const override;
  at::Tensor ReduceScatterSum(const at::Tensor& t) const override;
  void Broadcast(at::Tensor& t, int root) const override;
  void Barrier() const override;
  // A Gloo process group of the members `ranks` over the same store (a
  // prefix per group), with this communicator's collective timeout.
  std::shared_ptr<const Communicator> Subgroup(const std::vector<int>& ranks) const override;
  // Shared with every subgroup made from this communicator.
  CommunicationStats stats() const override;

 private:
  struct Impl;
  GlooCommunicator(std::shared_ptr<Impl> impl, int rank, int size);
  // Runs a c10d call; its error becomes a t5xx::Error naming the
  // collective, this rank and the ranks that stopped (StoppedRanks).
  template <typename F>
  void Collective(const char* what, F&& f) const;
  // The run's ranks whose heartbeats stood still while watched (about 2 s),
  // as a sentence; "" when all are alive.
  std::string StoppedRanks() const;
  std::shared_ptr<Impl> impl_;
  int rank_;
  int size_;
};

}  // namespace t5xx::partitioning
