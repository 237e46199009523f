#include "t5xx/partitioning/logical_axis_rules.h"

#include <gtest/gtest.h>

#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/util/error.h"

namespace t5xx::partitioning {
namespace {

// flax.linen.spmd.logical_to_mesh_axes on t5x's four standard rule sets and
// the logical axes of T5's parameters and activations: made by
// make_logical_axis_goldens.py (beside this file) with flax 0.12.8.
struct FlaxCase {
  int act, param;
  const char* axes;  // comma-separated logical axes
  const char* spec;
};

TEST(LogicalAxisRulesTest, MapsAsFlaxDoesUnderEveryStandardRuleSet) {
  const FlaxCase cases[] = {
      {1, 1, "vocab,embed", "PartitionSpec('model', None)"},
      {1, 1, "embed,vocab", "PartitionSpec(None, 'model')"},
      {1, 1, "embed,joined_kv", "PartitionSpec(None, 'model')"},
      {1, 1, "joined_kv,embed", "PartitionSpec('model', None)"},
      {1, 1, "embed,mlp", "PartitionSpec(None, 'model')"},
      {1, 1, "mlp,embed", "PartitionSpec('model', None)"},
      {1, 1, "embed", "PartitionSpec(None)"},
      {1, 1, "heads,relpos_buckets", "PartitionSpec('model', None)"},
      {1, 1, "batch,length,embed", "PartitionSpec('data', None, None)"},
      {1, 1, "batch,length,mlp", "PartitionSpec('data', None, 'model')"},
      {1, 1, "batch,length,heads,kv", "PartitionSpec('data', None, 'model', None)"},
      {1, 1, "batch,length,vocab", "PartitionSpec('data', None, 'model')"},
      {2, 1, "vocab,embed", "PartitionSpec('model', None)"},
      {2, 1, "embed,vocab", "PartitionSpec(None, 'model')"},
      {2, 1, "embed,joined_kv", "PartitionSpec(None, 'model')"},
      {2, 1, "joined_kv,embed", "PartitionSpec('model', None)"},
      {2, 1, "embed,mlp", "PartitionSpec(None, 'model')"},
      {2, 1, "mlp,embed", "PartitionSpec('model', None)"},
      {2, 1, "embed", "PartitionSpec('model')"},
      {2, 1, "heads,relpos_buckets", "PartitionSpec('model', None)"},
      {2, 1, "batch,length,embed", "PartitionSpec('data', None, 'model')"},
      {2, 1, "batch,length,mlp", "PartitionSpec('data', None, 'model')"},
      {2, 1, "batch,length,heads,kv", "PartitionSpec('data', None, 'model', None)"},
      {2, 1, "batch,length,vocab", "PartitionSpec('data', None, 'model')"},
      {1, 2, "vocab,embed", "PartitionSpec('model', 'data')"},
      {1, 2, "embed,vocab", "PartitionSpec('data', 'model')"},
      {1, 2, "embed,joined_kv", "PartitionSpec('data', 'model')"},
      {1, 2, "joined_kv,embed", "PartitionSpec('model', 'data')"},
      {1, 2, "embed,mlp", "PartitionSpec('data', 'model')"},
      {1, 2, "mlp,embed", "PartitionSpec('model', 'data')"},
      {1, 2, "embed", "PartitionSpec('data')"},
      {1, 2, "heads,relpos_buckets", "PartitionSpec('model', None)"},
      {1, 2, "batch,length,embed", "PartitionSpec('data', None, None)"},
      {1, 2, "batch,length,mlp", "PartitionSpec('data', None, 'model')"},
      {1, 2, "batch,length,heads,kv", "PartitionSpec('data', None, 'model', None)"},
      {1, 2, "batch,length,vocab", "PartitionSpec('data', None, 'model')"},
      {2, 2, "vocab,embed", "PartitionSpec('model', 'data')"},
      {2, 2, "embed,vocab", "PartitionSpec('data', 'model')"},
      {2, 2, "embed,joined_kv", "PartitionSpec('data', 'model')"},
      {2, 2, "joined_kv,embed", "PartitionSpec('model', 'data')"},
      {2, 2, "embed,mlp", "PartitionSpec('data', 'model')"},
      {2, 2, "mlp,embed", "PartitionSpec('model', 'data')"},
      {2, 2, "embed", "PartitionSpec('model')"},
      {2, 2, "heads,relpos_buckets", "PartitionSpec('model', None)"},
      {2, 2, "batch,length,embed", "PartitionSpec('data', None, 'model')"},
      {2, 2, "batch,length,mlp", "PartitionSpec('data', None, 'model')"},
      {2, 2, "batch,length,heads,kv", "PartitionSpec('data', None, 'model', None)"},
      {2, 2, "batch,length,vocab", "PartitionSpec('data', None, 'model')"},
  };
  for (const FlaxCase& c : cases) {
    std::vector<std::string> axes;
    std::string all = c.axes;
    for (size_t at = 0, next; at <= all.size(); at = next + 1) {
      next = all.find(',', at);
      if (next == std::string::npos) next = all.size();
      axes.push_back(all.substr(at, next - at));
    }
    EXPECT_EQ(PartitionSpecToString(LogicalToMeshAxes(axes, StandardLogicalAxisRules(c.act, c.param))),
              c.spec)
        << c.act << "/" << c.param << " " << c.axes;
  }
}

TEST(LogicalAxisRulesTest, UnknownAndRepeatedAxesAreErrors) {
  EXPECT_THROW(LogicalToMeshAxes({"embedd"}, StandardLogicalAxisRules()), Error);
  EXPECT_THROW(LogicalToMeshAxes({"embed", "embed"}, StandardLogicalAxisRules()), Error);
}

TEST(PartitionerTest, SingleDeviceMesh) {
  PjitPartitioner p(1, StandardLogicalAxisRules());
  EXPECT_EQ(p.mesh().data, 1);
  EXPECT_EQ(p.mesh().model, 1);
  EXPECT_THROW(PjitPartitioner(2, StandardLogicalAxisRules()), Error);
}

}  // namespace
}  // namespace t5xx::partitioning
