// The train state of the sharded checkpoint tests: four parameters of
// known global values (a (data, model)-sharded kernel, a (model, data)
// embedding, a replicated table, a 'data'-sharded scale) and their
// Adafactor slots -- v_row/v_col inline and sharded like their parameter's
// axes, the scale's v a sharded zarr array -- built as the process
// at `coords` of `mesh` holds them, each piece cut from the global array.
// Shared by sharded_checkpoint_test and its worker processes.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5xx/models/param_store.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/base_partitioner.h"
#include "t5xx/trainer/checkpoint_restore.h"

namespace t5xx::testing {

inline constexpr int64_t kShardedStep = 7;

struct ShardedState {
  models::ParamStore params;
  std::unique_ptr<optim::Adafactor> optimizer;
  std::vector<partitioning::VariableInfo> layout;
};

// The global value of a variable: distinct per key and element.
inline at::Tensor GlobalValue(const std::string& key, const std::vector<int64_t>& shape) {
  double base = 0;
  for (char c : key) base = base * 0.5 + static_cast<unsigned char>(c);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return (at::arange(n, at::kFloat) * 0.25f + static_cast<float>(base)).reshape(shape);
}

// The part `box` of a tensor.
inline at::Tensor Slice(at::Tensor t, const partitioning::ShardBox& box) {
  for (size_t d = 0; d < box.shape.size(); ++d) {
    t = t.narrow(static_cast<int64_t>(d), box.origin[d], box.shape[d]);
  }
  return t.contiguous();
}

inline partitioning::LogicalAxisRules ShardedRules() {
  return partitioning::StandardLogicalAxisRules(1, 2);  // embed -> data, mlp/vocab -> model
}

// The state as the process at `coords` holds it; `fill` false: zeros (a
// fresh state to restore into).
inline ShardedState BuildShardedState(const partitioning::Mesh& mesh,
                                      const partitioning::MeshCoordinates& coords, bool fill) {
  struct Spec {
    std::string name;
    std::vector<int64_t> shape;
    std::vector<std::string> axes;
  };
  const std::vector<Spec> specs = {
      {"encoder.layers_0.mlp.wi.kernel", {8, 24}, {"embed", "mlp"}},
      {"token_embedder.embedding", {24, 8}, {"vocab", "embed"}},
      {"encoder.relpos_bias.rel_embedding", {6, 4}, {"relpos_buckets", "abspos_buckets"}},
      {"encoder.layers_0.pre_mlp_layer_norm.scale", {8}, {"embed"}},  // v: zarr, sharded
  };
  ShardedState s;
  for (const Spec& p : specs) {
    const partitioning::PartitionSpec spec = partitioning::LogicalToMeshAxes(p.axes, ShardedRules());
    const partitioning::ShardBox box = partitioning::LocalShardBox(p.shape, spec, mesh, coords);
    at::Tensor v = Slice(GlobalValue("target/" + p.name, p.shape), box);
    s.params.Add(p.name, fill ? v : at::zeros_like(v), p.axes);
  }
  optim::AdafactorConfig c;
  c.min_dim_size_to_factor = 2;
  s.optimizer = std::make_unique<optim::Adafactor>(c);
  s.optimizer->Init(s.params);
  s.layout = partitioning::DescribeVariables(s.params, ShardedRules(),
                                             trainer::SlotShapes(*s.optimizer), mesh, coords);
  if (fill) {
    std::map<std::string, at::Tensor> state;
    for (const optim::StateArray& a : s.optimizer->StateArrays()) {
      for (const partitioning::VariableInfo& v : s.layout) {
        if (v.name == "state/" + a.path) state[a.path] = Slice(GlobalValue(v.name, v.shape), v.box);
      }
    }
    s.optimizer->RestoreState(state, kShardedStep);
  }
  return s;
}

// Empty when every parameter and slot of `s` equals its box of the global
// values, else what differs.
inline std::string CheckShardedState(const ShardedState& s) {
  std::string bad;
  auto check = [&](const std::string& key, const at::Tensor& live) {
    for (const partitioning::VariableInfo& v : s.layout) {
      if (v.name != key) continue;
      const at::Tensor want = Slice(GlobalValue(v.name, v.shape), v.box);
      if (!live.sizes().equals(want.sizes()) || !at::equal(live.to(at::kFloat), want)) {
        bad += key + " differs from its box of the global value; ";
      }
      return;
    }
    bad += key + " is not in the layout; ";
  };
  for (const auto& p : s.params.params()) check("target/" + p.name, p.value);
  for (const optim::StateArray& a : s.optimizer->StateArrays()) check("state/" + a.path, a.value);
  if (s.optimizer->step() != kShardedStep) bad += "step " + std::to_string(s.optimizer->step());
  return bad;
}

}  // namespace t5xx::testing
