// The least a train step must communicate on a ('data', 'model') layout:
// bytes each process sends per step with ring collectives, for the start-up
// log and the partitioning benchmark (bench/partitioning_bench.cc), to hold
// the measured CommunicationStats against.
//
//   gradients:   2(D-1)/D x P_m   (D = data axis size; P_m = bytes of the
//                parameters one model shard holds: one all-reduce of the
//                gradients, or ZeRO-3's all-gather + reduce-scatter, which
//                send the same)
//   activations: 2(M-1)/M x 4 x A / D   (M = model axis size; A = elements
//                of the activations Megatron-style tensor parallelism
//                all-reduces per step for the global batch, float32)
//
// A counts, per train step: for each attention or MLP sublayer one forward
// all-reduce of its output (g) and one backward all-reduce of its input
// gradient (f), plus, for cross-attention, the backward all-reduce of the
// encoder output it reads; one per embedding lookup (the vocabulary-split
// table's rows summed) and one for the logits' input (backward). Megatron-LM
// (Shoeybi et al., 2019, sec. 3) counts the same 4 all-reduces per
// transformer layer.
#pragma once

#include <cstdint>
#include <vector>

#include "t5xx/models/networks/decoder_only_network.h"
#include "t5xx/models/networks/t5_config.h"
#include "t5xx/partitioning/base_partitioner.h"
#include "t5xx/partitioning/mesh.h"

namespace t5xx::partitioning {

// A for the T5 encoder-decoder: `batch` sequence pairs of (enc_len, dec_len).
double TensorParallelActivationElements(const models::T5Config& config, int64_t batch,
                                        int64_t enc_len, int64_t dec_len);
// A for the decoder-only network: `batch` sequences of `length`.
double TensorParallelActivationElements(const models::DecoderOnlyConfig& config, int64_t batch,
                                        int64_t length);

// P_m from a process's variable table: the bytes of the parameters
// ("target/" rows) with their 'model'-sharded dims at this process's piece
// and every other dim whole.
double ParameterBytesPerModelShard(const std::vector<VariableInfo>& variables);
// The same from the parameters' specs (models/param_store.h; float32, as
// the parameters are) under `rules` on a 'model' axis of `model_axis`,
// without a partitioner or any parameter allocated. Throws t5xx::Error
// (sharding.h) when a 'model'-split dimension does not divide.
double ParameterBytesPerModelShard(const std::vector<models::ParamSpec>& specs,
                                   const LogicalAxisRules& rules, int64_t model_axis);

struct CommunicationPlan {
  double gradient_bytes = 0;
  double activation_bytes = 0;
  double total() const { return gradient_bytes + activation_bytes; }
};

// The minimum (see the top) for `mesh`.
CommunicationPlan MinimumCommunicationPerStep(const Mesh& mesh, double param_bytes_per_model_shard,
                                              double activation_elements);

}  // namespace t5xx::partitioning
