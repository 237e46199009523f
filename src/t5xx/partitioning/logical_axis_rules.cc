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
  PartitionSpec spec;
  std::vector<std::string> used;
  for (const auto& axis : logical_axes) {
    bool matched = false;
    std::optional<std::string> chosen;
    for (const auto& [logical, mesh] : rules) {
      if (logical != axis) continue;
      matched = true;
      if (mesh && std::find(used.begin(), used.end(), *mesh) != used.end()) {
        continue;  // mesh axis already taken: fall through to the next rule
      }
      chosen = mesh;
      break;
    }
    T5XX_CHECK(matched, "logical axis '" + axis +
                       "' has no rule in logical_axis_rules; add (\"" + axis +
                       "\", None) or a mesh axis to "
                       "partitioning.PjitPartitioner.logical_axis_rules");
    if (chosen) used.push_back(*chosen);
    spec.push_back(chosen);
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
