// One process of gloo_communicator_test: joins the run its environment
// describes (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, as torchrun sets
// them) and checks each collective's result against values worked out by
// hand from the ranks.
//   gloo_worker collectives        exit 0 when every result is right
//   gloo_worker join JOIN_MS       only joins; prints the error and exits 3
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "t5xx/partitioning/collectives/c10d_communicator.h"
#include "t5xx/util/error.h"

using t5xx::partitioning::ConnectOptions;
using t5xx::partitioning::C10dCommunicator;

namespace {

bool Expect(bool ok, const std::string& what, int rank) {
  if (!ok) std::cerr << "rank " << rank << ": wrong " << what << std::endl;
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "collectives";
  try {
    const auto env = t5xx::partitioning::DetectProcessEnvironment();
    if (!env) {
      std::cerr << "no launcher environment" << std::endl;
      return 2;
    }
    ConnectOptions o;
    if (argc > 2) o.join_timeout = std::chrono::milliseconds(std::atol(argv[2]));
    auto comm = C10dCommunicator::Connect(*env, o);
    if (mode == "join") return 0;
    const int r = comm->rank(), n = comm->size();
    bool ok = Expect(r == env->rank && n == env->world_size, "rank/size", r);
    // AllReduceSum of (rank + 1) everywhere: n(n+1)/2.
    at::Tensor a = at::full({3, 2}, static_cast<float>(r + 1));
    comm->AllReduceSum(a);
    ok &= Expect(at::equal(a, at::full({3, 2}, n * (n + 1) / 2.0f)), "allreduce", r);
    // AllGather of rows [10r, 10r + 1]: 0, 1, 10, 11, 20, 21, ...
    at::Tensor g = comm->AllGather(at::tensor({10.0f * r, 10.0f * r + 1}));
    std::vector<float> want;
    for (int k = 0; k < n; ++k) {
      want.push_back(10.0f * k);
      want.push_back(10.0f * k + 1);
    }
    ok &= Expect(at::equal(g, at::tensor(want)), "allgather", r);
    // ReduceScatterSum of i + r over 2n rows: rank r gets rows 2r, 2r+1 of
    // the sum n*i + n(n-1)/2.
    at::Tensor rs = comm->ReduceScatterSum(at::arange(2 * n, at::kFloat) + r);
    const float base = n * (n - 1) / 2.0f;
    ok &= Expect(at::equal(rs, at::tensor({n * 2.0f * r + base, n * (2.0f * r + 1) + base})),
                 "reduce-scatter", r);
    // Broadcast from the last rank.
    at::Tensor b = at::full({4}, static_cast<float>(r));
    comm->Broadcast(b, n - 1);
    ok &= Expect(at::equal(b, at::full({4}, static_cast<float>(n - 1))), "broadcast", r);
    // bfloat16 (t5x's activation dtype; Gloo has no bfloat16 reductions):
    // summed as float32 on the wire, handed back as bfloat16.
    at::Tensor h = at::full({3}, 0.5f + r, at::kBFloat16);
    comm->AllReduceSum(h);
    const float sum = n * 0.5f + n * (n - 1) / 2.0f;
    ok &= Expect(h.scalar_type() == at::kBFloat16 &&
                     at::equal(h, at::full({3}, sum, at::kBFloat16)),
                 "allreduce bfloat16", r);
    at::Tensor h2 = at::full({2}, 1.0f + r, at::kBFloat16);
    comm->StartAllReduceSum(h2)();
    ok &= Expect(at::equal(h2, at::full({2}, n + n * (n - 1) / 2.0f, at::kBFloat16)),
                 "start-allreduce bfloat16", r);
    at::Tensor hg = comm->AllGather(at::full({1}, static_cast<float>(r), at::kBFloat16));
    ok &= Expect(hg.scalar_type() == at::kBFloat16 &&
                     at::equal(hg, at::arange(n, at::kFloat).to(at::kBFloat16)),
                 "allgather bfloat16", r);
    at::Tensor hrs = comm->ReduceScatterSum(at::full({n}, 1.0f, at::kBFloat16));
    ok &= Expect(hrs.scalar_type() == at::kBFloat16 &&
                     at::equal(hrs, at::full({1}, static_cast<float>(n), at::kBFloat16)),
                 "reduce-scatter bfloat16", r);
    comm->Barrier();
    return ok ? 0 : 1;
  } catch (const t5xx::Error& e) {
    std::cerr << e.what() << std::endl;
    return 3;
  }
}
