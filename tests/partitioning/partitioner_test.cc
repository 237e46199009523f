// The partitioner interface and its implementations: the table of variables
// with their logical and mesh axes (t5x's start-up log), the one-process
// PjitPartitioner, and the simulated shards tests use for code that must
// not assume a tensor is whole. Expected mesh axes follow t5x's
// standard_logical_axis_rules by hand: 'mlp' -> 'model', 'embed' -> None.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/partitioning/simulated_partitioner.h"
#include "test_util.h"

namespace t5xx::partitioning {
namespace {

models::ParamStore Params() {
  models::ParamStore p;
  p.Add("k", at::zeros({4, 6}), {"embed", "mlp"});
  p.Add("b", at::zeros({6}), {"embed"});
  p.Add("odd", at::zeros({3}), {"embed"});
  return p;
}

TEST(PartitionerTest, DescribesParametersAndSlots) {
  const models::ParamStore params = Params();
  const std::vector<VariableInfo> rows = DescribeVariables(
      params, StandardLogicalAxisRules(),
      {{"param_states.k.v_row", {4}}, {"param_states.k.v_col", {6}}, {"count", {}}});
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].name, "target/k");
  EXPECT_EQ(rows[0].mesh_axes, (PartitionSpec{std::nullopt, std::string("model")}));
  // v_row keeps the row dim (size 4, 'embed'); v_col the column dim ('mlp').
  EXPECT_EQ(rows[3].name, "state/param_states.k.v_row");
  EXPECT_EQ(rows[3].logical_axes, std::vector<std::string>{"embed"});
  EXPECT_EQ(rows[4].logical_axes, std::vector<std::string>{"mlp"});
  EXPECT_EQ(rows[4].mesh_axes, (PartitionSpec{std::string("model")}));
  EXPECT_TRUE(rows[5].logical_axes.empty());  // a count belongs to no parameter
  const std::string table = FormatVariableTable(rows);
  EXPECT_NE(table.find("Variable"), std::string::npos);
  EXPECT_NE(table.find("target/k"), std::string::npos);
  EXPECT_NE(table.find("(4, 6)  ('embed', 'mlp')  (None, 'model')"), std::string::npos) << table;
  EXPECT_NE(table.find("(6,)"), std::string::npos) << table;
}

TEST(PartitionerTest, PjitOnOneProcessIsTheWholeMesh) {
  PjitPartitioner p(1, StandardLogicalAxisRules());
  EXPECT_EQ(p.mesh().size(), 1);
  EXPECT_EQ(p.data_shard_info().index, 0);
  EXPECT_EQ(p.data_shard_info().num_shards, 1);
  EXPECT_EQ(p.communicator().size(), 1);
  at::Tensor t = at::ones({2});
  p.reducer()->AllReduceSum(t, ReduceContext{"k", {0}});
  EXPECT_TRUE(at::equal(t, at::ones({2})));
  EXPECT_EQ(p.ParamPartitionSpecs(Params()).at("b"), (PartitionSpec{std::nullopt}));
}

TEST(PartitionerTest, SimulatedShardsSplitEveryDivisibleTensor) {
  const auto dims = SimulatedShardsPartitioner::SplitEveryTensor(Params(),
                                                                 StandardLogicalAxisRules(), 2);
  EXPECT_EQ(dims.at("k"), 1);  // the dim mapped to 'model'
  EXPECT_EQ(dims.at("b"), 0);  // no mesh axis: the first divisible dim
  EXPECT_EQ(dims.count("odd"), 0u);
  SimulatedShardsPartitioner p(std::make_shared<SimulatedCollective>(2), 1, dims);
  const models::ParamStore mine = p.ShardParams(Params());
  EXPECT_EQ(mine.Get("k").sizes().vec(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(mine.Get("odd").sizes().vec(), (std::vector<int64_t>{3}));  // whole
  EXPECT_EQ(p.reducer()->GlobalShape("k", {4, 3}), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(p.mesh().model, 2);
  EXPECT_ERROR_CONTAINS(SimulatedShardsPartitioner(std::make_shared<SimulatedCollective>(2), 2, dims),
                        "rank 2 is outside [0, 2)");
}

TEST(PartitionerTest, SimulatedCollectiveSumsAcrossThreads) {
  auto c = std::make_shared<SimulatedCollective>(3);
  std::vector<double> got(3);
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      SimulatedShardsPartitioner p(c, r, {});
      at::Tensor t = at::full({1}, static_cast<double>(r + 1));
      p.communicator().AllReduceSum(t);
      got[static_cast<size_t>(r)] = t.item<double>();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(got, (std::vector<double>{6, 6, 6}));  // 1 + 2 + 3
}

}  // namespace
}  // namespace t5xx::partitioning
