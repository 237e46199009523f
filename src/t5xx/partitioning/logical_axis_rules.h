// t5x's logical axis rules (t5x/partitioning.py standard_logical_axis_rules):
// an ordered list of (logical axis, mesh axis or none). Framework-free.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace t5xx::partitioning {

using LogicalAxisRules =
    std::vector<std::pair<std::string, std::optional<std::string>>>;

// A PartitionSpec: for each tensor dimension, the mesh axis it is sharded
// over, or nullopt for replicated.
using PartitionSpec = std::vector<std::optional<std::string>>;

// t5x's standard rules. activation_partitioning_dims / parameter_
// partitioning_dims in {1, 2}:
//   1/1: batch->data, vocab->model, embed->None, mlp->model, heads->model,
//        kv->None, joined_kv->model
//   2/1 adds embed->model for activations; 1/2 sets embed->data (ZeRO-3);
//   2/2 has embed->model then embed->data.
// Always replicated: relpos_buckets, abspos_buckets, length, layers, stack,
// mlp_activations. Throws t5xx::Error for other values.
LogicalAxisRules StandardLogicalAxisRules(int activation_partitioning_dims = 1,
                                          int parameter_partitioning_dims = 1);

// Maps logical axes to mesh axes as flax.linen.spmd.logical_to_mesh_axes
// (which t5x's partitioner calls): the rules are taken in order of
// precedence, each giving its mesh axis (or None) to its logical axis when
// that dimension is still unassigned and the mesh axis is not yet used by
// any dimension; what no rule assigned stays None. So under the 2/x rule
// sets a kernel ('embed', 'mlp') gets ('mlp', 'model') -- listed before
// ('embed', 'model') -- and 'embed' stays unsplit (or goes to 'data').
// Unlike flax, an axis with no rule at all is a t5xx::Error naming it (a
// misspelt rule would otherwise silently replicate), as is an axis that
// occurs twice (flax's ValueError).
PartitionSpec LogicalToMeshAxes(const std::vector<std::string>& logical_axes,
                                const LogicalAxisRules& rules);

std::string PartitionSpecToString(const PartitionSpec& spec);

}  // namespace t5xx::partitioning
