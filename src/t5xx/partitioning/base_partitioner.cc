// See base_partitioner.h.
#include "t5xx/partitioning/base_partitioner.h"

#include <algorithm>

namespace t5xx::partitioning {

std::map<std::string, PartitionSpec> BasePartitioner::ParamPartitionSpecs(
    const models::ParamStore& params) const {
  std::map<std::string, PartitionSpec> specs;
  for (const auto& p : params.params()) specs[p.name] = LogicalToMeshAxes(p.axes, rules());
  return specs;
}

std::shared_ptr<const models::ParamPlacement> BasePartitioner::Placement(
    const std::vector<models::ParamSpec>& specs) {
  (void)specs;
  return std::make_shared<models::ParamPlacement>();
}

models::ParamStore InitPlacedParams(BasePartitioner& partitioner,
                                   const models::BaseTransformerModel& model, uint64_t seed,
                                   bool uninitialized) {
  const std::shared_ptr<const models::ParamPlacement> placement =
      partitioner.Placement(model.ParamSpecs());
  const models::UninitializedPlacement unset(placement.get());
  models::ParamStore local =
      model.InitParams(seed, uninitialized ? &unset : placement.get());
  partitioner.InstallHooks(local);
  return local;
}

namespace {

// The logical axes of a slot of `shape` from its parameter's: the dims kept
// in order, each slot dim matched to the next parameter dim of its size;
// empty when they do not match.
std::vector<std::string> SlotAxes(const std::vector<int64_t>& shape,
                                  const std::vector<int64_t>& param_shape,
                                  const std::vector<std::string>& param_axes) {
  std::vector<std::string> axes;
  size_t j = 0;
  for (int64_t n : shape) {
    while (j < param_shape.size() && param_shape[j] != n) ++j;
    if (j == param_shape.size()) return {};
    axes.push_back(param_axes[j++]);
  }
  return axes;
}

}  // namespace

int64_t VariableInfo::BytesPerProcess() const {
  int64_t n = itemsize;
  for (int64_t d : box.shape) n *= d;
  return n;
}

std::vector<VariableInfo> DescribeVariables(const models::ParamStore& params,
                                            const LogicalAxisRules& rules,
                                            const std::vector<SlotShape>& slots,
                                            const Mesh& mesh, const MeshCoordinates& coords) {
  std::vector<VariableInfo> rows;
  auto finish = [&](VariableInfo& row, const std::vector<int64_t>& local_shape) {
    row.shape = GlobalShapeOf(local_shape, row.mesh_axes, mesh);
    row.box = LocalShardBox(row.shape, row.mesh_axes, mesh, coords, row.name);
    row.primary = IsPrimaryReplica(row.mesh_axes, mesh, coords);
  };
  for (const auto& p : params.params()) {
    VariableInfo row{"target/" + p.name, {}, p.axes, LogicalToMeshAxes(p.axes, rules)};
    finish(row, p.value.sizes().vec());
    rows.push_back(std::move(row));
  }
  for (const auto& [path, shape, itemsize, param_dims] : slots) {
    const models::Param* owner = nullptr;
    for (const auto& p : params.params()) {
      if (path.find(p.name) != std::string::npos &&
          (!owner || p.name.size() > owner->name.size())) {
        owner = &p;
      }
    }
    VariableInfo row{"state/" + path, {}, {}, {}};
    row.itemsize = itemsize;
    if (owner && param_dims) {
      if (param_dims->size() == shape.size()) {
        for (int64_t d : *param_dims) row.logical_axes.push_back(owner->axes.at(static_cast<size_t>(d)));
      }
    } else if (owner) {
      row.logical_axes = SlotAxes(shape, owner->value.sizes().vec(), owner->axes);
    }
    row.mesh_axes = row.logical_axes.empty() ? PartitionSpec(shape.size())
                                             : LogicalToMeshAxes(row.logical_axes, rules);
    finish(row, shape);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<VariableInfo> BasePartitioner::DescribeVariables(
    const models::ParamStore& params, const std::vector<SlotShape>& slots) const {
  return partitioning::DescribeVariables(params, rules(), slots, mesh(), coordinates());
}

std::string FormatVariableTable(const std::vector<VariableInfo>& rows) {
  auto join = [](const auto& items, auto&& str) {
    std::string s = "(";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + str(items[i]);
    return s + (items.size() == 1 ? ",)" : ")");
  };
  std::vector<std::vector<std::string>> cells = {
      {"Variable", "Shape", "Logical axes", "Mesh axes", "Bytes per process"}};
  int64_t total = 0, total_global = 0;
  for (const VariableInfo& r : rows) {
    int64_t global = r.itemsize;
    for (int64_t d : r.shape) global *= d;
    total += r.BytesPerProcess();
    total_global += global;
    cells.push_back(
        {r.name, join(r.shape, [](int64_t n) { return std::to_string(n); }),
         r.logical_axes.empty() ? "None"
                                : join(r.logical_axes, [](const std::string& a) { return "'" + a + "'"; }),
         join(r.mesh_axes, [](const std::optional<std::string>& a) {
           return a ? "'" + *a + "'" : std::string("None");
         }),
         std::to_string(r.BytesPerProcess())});
  }
  cells.push_back({"Total", "", "", "", std::to_string(total) + " of " +
                                           std::to_string(total_global)});
  std::vector<size_t> width(5, 0);
  for (const auto& row : cells) {
    for (size_t i = 0; i < 5; ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (size_t i = 0; i < 5; ++i) {
      line += row[i];
      if (i < 4) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace t5xx::partitioning
