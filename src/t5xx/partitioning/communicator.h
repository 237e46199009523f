// The communicator: the one place collectives between processes go through
// (c10d's Gloo on CPU or NCCL on GPU plug in behind it; libtorch version
// differences stay inside). LocalCommunicator is the one-process case.
#pragma once

#include <ATen/ATen.h>

namespace t5xx::partitioning {

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
};

// One process: rank 0 of 1; AllReduceSum is the identity.
class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void AllReduceSum(at::Tensor&) const override {}
};

}  // namespace t5xx::partitioning
