// See communication_plan.h.
#include "t5xx/partitioning/communication_plan.h"

#include "t5xx/partitioning/sharding.h"

namespace t5xx::partitioning {

double TensorParallelActivationElements(const models::T5Config& c, int64_t batch,
                                        int64_t enc_len, int64_t dec_len) {
  const double e = static_cast<double>(c.emb_dim) * static_cast<double>(batch);
  const double enc = e * static_cast<double>(enc_len), dec = e * static_cast<double>(dec_len);
  // Encoder layers: attention and MLP, g + f each. Decoder layers: self-
  // attention and MLP g + f, cross-attention g + f + the encoder output's f.
  return static_cast<double>(c.num_encoder_layers) * 2 * 2 * enc +
         static_cast<double>(c.num_decoder_layers) * (3 * 2 * dec + enc) +
         enc + dec  // the embedding lookups
         + dec;     // the logits' input
}

double TensorParallelActivationElements(const models::DecoderOnlyConfig& c, int64_t batch,
                                        int64_t length) {
  const double x = static_cast<double>(c.emb_dim) * static_cast<double>(batch) *
                   static_cast<double>(length);
  return static_cast<double>(c.num_layers) * 2 * 2 * x + x + x;
}

double ParameterBytesPerModelShard(const std::vector<VariableInfo>& variables) {
  double bytes = 0;
  for (const VariableInfo& v : variables) {
    if (v.name.rfind("target/", 0) != 0) continue;
    double n = static_cast<double>(v.itemsize);
    for (size_t i = 0; i < v.shape.size(); ++i) {
      const bool on_model = i < v.mesh_axes.size() && v.mesh_axes[i] && *v.mesh_axes[i] == "model";
      n *= static_cast<double>(on_model ? v.box.shape[i] : v.shape[i]);
    }
    bytes += n;
  }
  return bytes;
}

double ParameterBytesPerModelShard(const std::vector<models::ParamSpec>& specs,
                                   const LogicalAxisRules& rules, int64_t model_axis) {
  double bytes = 0;
  for (const models::ParamSpec& p : specs) {
    const ShardBox box =
        LocalShardBox(p.shape, LogicalToMeshAxes(p.axes, rules), {1, model_axis}, {}, p.name);
    double n = 4;
    for (int64_t d : box.shape) n *= static_cast<double>(d);
    bytes += n;
  }
  return bytes;
}

CommunicationPlan MinimumCommunicationPerStep(const Mesh& mesh, double param_bytes_per_model_shard,
                                              double activation_elements) {
  const double d = static_cast<double>(mesh.data), m = static_cast<double>(mesh.model);
  CommunicationPlan plan;
  plan.gradient_bytes = 2.0 * (d - 1) / d * param_bytes_per_model_shard;
  plan.activation_bytes = 2.0 * (m - 1) / m * 4.0 * activation_elements / d;
  return plan;
}

}  // namespace t5xx::partitioning
