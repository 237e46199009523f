// The communicator: the one place collectives between processes go through
// (c10d's Gloo on CPU or NCCL on GPU plug in behind it, c10d_communicator.h;
// libtorch version differences stay inside). LocalCommunicator is the
// one-process case.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace t5xx::partitioning {

// What a process sent through its collectives (its communicator and every
// subgroup made from it), counted as the standard ring algorithms send for
// a group of p processes: an all-reduce of n bytes 2(p-1)/p*n, an
// all-gather of n bytes per process (p-1)*n, a broadcast n (bytes of the
// tensor each call carries; Gloo's own algorithm choice may differ).
struct CommunicationStats {
  int64_t collectives = 0;
  double payload_bytes = 0;  // bytes of the tensors handed to collectives
  double sent_bytes = 0;     // ring-algorithm bytes sent by this process
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  // This process's rank in [0, size()).
  virtual int rank() const = 0;
  // The number of processes.
  virtual int size() const = 0;
  // Replaces `t` by the elementwise sum of every process's `t` (same shape
  // and dtype on all). Blocks until all have contributed.
  virtual void AllReduceSum(at::Tensor& t) const = 0;

  // The collectives below have default implementations over AllReduceSum
  // (correct for any communicator, one full-size reduction each); a
  // backend overrides those it has natively. Every process must call the
  // same collectives in the same order.

  // Every process's `t` (same shape on all) concatenated along dim 0 in
  // rank order: shape [size() * t.size(0), ...]. `t` must have a dim 0.
  virtual at::Tensor AllGather(const at::Tensor& t) const;
  // The elementwise sum over processes of `t`, of which this process gets
  // its slice along dim 0: rows [rank * n / size, (rank + 1) * n / size).
  // Throws t5xx::Error when t.size(0) does not divide by size().
  virtual at::Tensor ReduceScatterSum(const at::Tensor& t) const;
  // Replaces `t` by rank `root`'s `t` (same shape and dtype on all).
  virtual void Broadcast(at::Tensor& t, int root) const;
  // Returns once every process has called it.
  virtual void Barrier() const;
  // The elementwise maximum over processes of `t` (no gradient); default:
  // an AllGather and a local maximum.
  virtual at::Tensor AllReduceMax(const at::Tensor& t) const;

  // A communicator over the processes `ranks` (ranks of this one, in the
  // order that gives the new ranks), of which this process must be one; the
  // group's own rank is this process's position in `ranks`. Every member
  // calls it with the same list, members of different groups may call it at
  // once (a mesh axis's slices), and each process must create its groups in
  // the same order as the others (all 'data' slices, then all 'model' ones).
  // Throws t5xx::Error when this process is not in `ranks` or the backend
  // cannot make groups.
  virtual std::shared_ptr<const Communicator> Subgroup(const std::vector<int>& ranks) const;

  // Starts AllReduceSum of `t` in place and returns the function that waits
  // for it (t must stay alive and untouched until then); collectives on
  // this communicator started meanwhile run after it, in call order.
  // Default: synchronous.
  virtual std::function<void()> StartAllReduceSum(at::Tensor& t) const {
    AllReduceSum(t);
    return [] {};
  }

  // Starts AllGather of `t` and returns the function that waits for it and
  // gives its result (t must stay alive and untouched until then); the same
  // ordering as StartAllReduceSum. Default: synchronous.
  virtual std::function<at::Tensor()> StartAllGather(const at::Tensor& t) const {
    at::Tensor gathered = AllGather(t);
    return [gathered] { return gathered; };
  }

  // Starts ReduceScatterSum of `t` and returns the function that waits for
  // it and gives its result; the same ordering as StartAllReduceSum.
  // Default: synchronous.
  virtual std::function<at::Tensor()> StartReduceScatterSum(const at::Tensor& t) const {
    at::Tensor mine = ReduceScatterSum(t);
    return [mine] { return mine; };
  }

  // Totals since the start (zero for communicators that do not count).
  virtual CommunicationStats stats() const { return {}; }
};

// Every process's `bytes`, in rank order, on every process (two
// collectives: the lengths, then the strings padded to the longest). For
// small control data: dataset states, inference outputs.
std::vector<std::string> AllGatherStrings(const Communicator& comm, const std::string& bytes);

// One process: rank 0 of 1; every collective is the identity.
class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void AllReduceSum(at::Tensor&) const override {}
  at::Tensor AllGather(const at::Tensor& t) const override { return t; }
  at::Tensor ReduceScatterSum(const at::Tensor& t) const override { return t; }
  void Broadcast(at::Tensor&, int) const override {}
  void Barrier() const override {}
  at::Tensor AllReduceMax(const at::Tensor& t) const override { return t; }
  std::shared_ptr<const Communicator> Subgroup(const std::vector<int>& ranks) const override;
};

}  // namespace t5xx::partitioning
