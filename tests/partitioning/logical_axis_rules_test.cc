#include "t5xx/partitioning/logical_axis_rules.h"

#include <gtest/gtest.h>

#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/util/error.h"

namespace t5xx::partitioning {
namespace {

// Expected specs follow t5x's documented 1/1 and 1/2 rule sets
// (shared/reference/t5x.md §5).
TEST(LogicalAxisRulesTest, StandardRulesMapT5Params) {
  auto rules = StandardLogicalAxisRules(1, 1);
  EXPECT_EQ(PartitionSpecToString(LogicalToMeshAxes({"embed", "joined_kv"}, rules)),
            "PartitionSpec(None, 'model')");
  EXPECT_EQ(PartitionSpecToString(LogicalToMeshAxes({"vocab", "embed"}, rules)),
            "PartitionSpec('model', None)");
  EXPECT_EQ(PartitionSpecToString(LogicalToMeshAxes({"heads", "relpos_buckets"}, rules)),
            "PartitionSpec('model', None)");
  auto zero3 = StandardLogicalAxisRules(1, 2);
  EXPECT_EQ(PartitionSpecToString(LogicalToMeshAxes({"embed", "mlp"}, zero3)),
            "PartitionSpec('data', 'model')");
}

TEST(LogicalAxisRulesTest, UsedMeshAxisFallsThrough) {
  // 2/2: embed -> model first, but 'model' is taken by vocab -> embed -> data.
  auto rules = StandardLogicalAxisRules(2, 2);
  EXPECT_EQ(PartitionSpecToString(LogicalToMeshAxes({"vocab", "embed"}, rules)),
            "PartitionSpec('model', 'data')");
}

TEST(LogicalAxisRulesTest, UnknownAxisIsAnError) {
  EXPECT_THROW(LogicalToMeshAxes({"embedd"}, StandardLogicalAxisRules()), Error);
}

TEST(PartitionerTest, SingleDeviceMesh) {
  PjitPartitioner p(1, StandardLogicalAxisRules());
  EXPECT_EQ(p.mesh().data, 1);
  EXPECT_EQ(p.mesh().model, 1);
  EXPECT_THROW(PjitPartitioner(2, StandardLogicalAxisRules()), Error);
}

}  // namespace
}  // namespace t5xx::partitioning
