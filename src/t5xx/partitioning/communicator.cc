// The Communicator's default collectives, built on AllReduceSum (see
// communicator.h).
#include "t5xx/partitioning/communicator.h"

#include "t5xx/util/error.h"

namespace t5xx::partitioning {

at::Tensor Communicator::AllGather(const at::Tensor& t) const {
  T5XX_CHECK(t.dim() >= 1, "AllGather needs a tensor with a dim 0");
  std::vector<int64_t> shape = t.sizes().vec();
  const int64_t rows = shape[0];
  shape[0] = rows * size();
  at::Tensor out = at::zeros(shape, t.options());
  out.narrow(0, rows * rank(), rows).copy_(t);
  AllReduceSum(out);
  return out;
}

at::Tensor Communicator::ReduceScatterSum(const at::Tensor& t) const {
  T5XX_CHECK(t.dim() >= 1 && t.size(0) % size() == 0,
             "ReduceScatterSum: dim 0 of size " + std::to_string(t.dim() ? t.size(0) : 0) +
                 " does not divide by the " + std::to_string(size()) + " processes");
  at::Tensor sum = t.clone();
  AllReduceSum(sum);
  const int64_t rows = t.size(0) / size();
  return sum.narrow(0, rows * rank(), rows).clone();
}

void Communicator::Broadcast(at::Tensor& t, int root) const {
  T5XX_CHECK(root >= 0 && root < size(), "Broadcast: root " + std::to_string(root) +
                                             " is not a rank of " + std::to_string(size()));
  at::Tensor mine = rank() == root ? t.clone() : at::zeros_like(t);
  AllReduceSum(mine);
  t = mine;
}

void Communicator::Barrier() const {
  at::Tensor one = at::ones({1});
  AllReduceSum(one);
}

}  // namespace t5xx::partitioning
