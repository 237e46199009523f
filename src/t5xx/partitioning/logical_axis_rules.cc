// t5x's logical axis rules (t5x/partitioning.py standard_logical_axis_rules)
// -- the implementation of logical_axis_rules.h.
#include "t5xx/partitioning/logical_axis_rules.h"

#include <algorithm>

#include "t5xx/util/error.h"

namespace t5xx::partitioning {

LogicalAxisRules StandardLogicalAxisRules(int act_dims, int param_dims) {
  T5XX_CHECK(act_dims == 1 || act_dims == 2,
        "partitioning.standard_logical_axis_rules.activation_partitioning_dims "
        "must be 1 or 2, got " + std::to_string(act_dims));
  T5XX_CHECK(param_dims == 1 || param_dims == 2,
        "partitioning.standard_logical_axis_rules.parameter_partitioning_dims "
        "must be 1 or 2, got " + std::to_string(param_dims));
  const std::optional<std::string> none;
  LogicalAxisRules rules;
  if (act_dims == 1 && param_dims == 1) {
    rules = {{"batch", "data"}, {"vocab", "model"}, {"embed", none},
             {"mlp", "model"}, {"heads", "model"}, {"kv", none},
             {"joined_kv", "model"}};
  } else if (act_dims == 2 && param_dims == 1) {
    rules = {{"batch", "data"}, {"vocab", "model"}, {"mlp", "model"},
             {"heads", "model"}, {"kv", none}, {"joined_kv", "model"},
             {"embed", "model"}};
  } else if (act_dims == 1 && param_dims == 2) {
    rules = {{"batch", "data"}, {"vocab", "model"}, {"mlp", "model"},
             {"heads", "model"}, {"kv", none}, {"joined_kv", "model"},
             {"embed", "data"}};
  } else {
    rules = {{"batch", "data"}, {"vocab", "model"}, {"mlp", "model"},
             {"heads", "model"}, {"kv", none}, {"joined_kv", "model"},
             {"embed", "model"}, {"embed", "data"}};
  }
  for (const char* axis : {"relpos_buckets", "abspos_buckets", "length",
                           "layers", "stack", "mlp_activations"}) {
    rules.emplace_back(axis, none);
  }
  return rules;
}

PartitionSpec LogicalToMeshAxes(const std::vector<std::string>& logical_axes,
                                const LogicalAxisRules& rules) {
  // flax.linen.spmd.logical_to_mesh_axes: the rules in order of precedence,
  // each giving its mesh axis (or None) to its logical axis when that
  // dimension has none yet and the mesh axis is not already taken.
  for (size_t d = 0; d < logical_axes.size(); ++d) {
    const std::string& axis = logical_axes[d];
    T5XX_CHECK(std::find(logical_axes.begin(), logical_axes.begin() + static_cast<std::ptrdiff_t>(d),
                         axis) == logical_axes.begin() + static_cast<std::ptrdiff_t>(d),
               "logical axis '" + axis + "' occurs more than once in one array's axes");
    bool matched = false;
    for (const auto& rule : rules) matched = matched || rule.first == axis;
    T5XX_CHECK(matched, "logical axis '" + axis +
                            "' has no rule in logical_axis_rules; add (\"" + axis +
                            "\", None) or a mesh axis to "
                            "partitioning.PjitPartitioner.logical_axis_rules");
  }
  PartitionSpec spec(logical_axes.size());
  std::vector<bool> assigned(logical_axes.size(), false);
  std::vector<std::string> used;
  for (const auto& [logical, mesh] : rules) {
    const auto at = std::find(logical_axes.begin(), logical_axes.end(), logical);
    if (at == logical_axes.end()) continue;
    const size_t d = static_cast<size_t>(at - logical_axes.begin());
    if (assigned[d] || (mesh && std::find(used.begin(), used.end(), *mesh) != used.end())) {
      continue;
    }
    assigned[d] = true;
    spec[d] = mesh;
    if (mesh) used.push_back(*mesh);
  }
  return spec;
}

std::string PartitionSpecToString(const PartitionSpec& spec) {
  std::string s = "PartitionSpec(";
  for (size_t i = 0; i < spec.size(); ++i) {
    if (i) s += ", ";
    s += spec[i] ? "'" + *spec[i] + "'" : "None";
  }
  return s + ")";
}

}  // namespace t5xx::partitioning
