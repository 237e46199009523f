// The Communicator's default collectives, built on AllReduceSum (see
// communicator.h).
#include "t5xx/partitioning/collectives/communicator.h"

#include <algorithm>
#include <cstring>

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

at::Tensor Communicator::AllReduceMax(const at::Tensor& t) const {
  if (size() == 1) return t;
  return std::get<0>(AllGather(t.detach().unsqueeze(0)).max(0));
}

std::shared_ptr<const Communicator> Communicator::Subgroup(const std::vector<int>& ranks) const {
  if (ranks.size() == 1 && ranks[0] == rank()) return std::make_shared<LocalCommunicator>();
  bool whole = static_cast<int>(ranks.size()) == size();
  for (size_t i = 0; whole && i < ranks.size(); ++i) whole = ranks[i] == static_cast<int>(i);
  T5XX_CHECK(!whole, "Subgroup of every process: use the communicator itself");
  throw Error("this communicator cannot make process groups (a group of " +
              std::to_string(ranks.size()) + " of its " + std::to_string(size()) +
              " processes was asked for)");
}

std::shared_ptr<const Communicator> LocalCommunicator::Subgroup(const std::vector<int>& ranks) const {
  T5XX_CHECK(ranks.size() == 1 && ranks[0] == 0,
             "the one-process communicator has only rank 0");
  return std::make_shared<LocalCommunicator>();
}

std::vector<std::string> AllGatherStrings(const Communicator& comm, const std::string& bytes) {
  if (comm.size() == 1) return {bytes};
  const at::Tensor lens =
      comm.AllGather(at::tensor({static_cast<int64_t>(bytes.size())}, at::kLong)).contiguous();
  const int64_t longest = std::max<int64_t>(1, lens.max().item<int64_t>());
  at::Tensor padded = at::zeros({longest}, at::kByte);
  std::memcpy(padded.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  const at::Tensor all = comm.AllGather(padded).contiguous();
  std::vector<std::string> out;
  for (int r = 0; r < comm.size(); ++r) {
    const auto* at_r = all.data_ptr<uint8_t>() + r * longest;
    out.emplace_back(reinterpret_cast<const char*>(at_r),
                     static_cast<size_t>(lens[r].item<int64_t>()));
  }
  return out;
}

}  // namespace t5xx::partitioning
