// See replicas.h.
#include "t5xx/run/inference/replicas.h"

#include <algorithm>
#include <cstring>

#include "t5xx/run/device_setup.h"
#include "t5xx/run/inference/inference.h"
#include "t5xx/util/error.h"

namespace t5xx::run {

InferenceReplicas ReplicasOf(const partitioning::BasePartitioner& partitioner) {
  const auto* pjit = dynamic_cast<const partitioning::PjitPartitioner*>(&partitioner);
  if (!pjit || pjit->mesh().data == 1) return {};
  const partitioning::PjitPartitioner& p = *pjit;
  for (const auto& [name, spec] : p.specs()) {
    for (const auto& axis : spec) {
      if (axis && *axis == "data") return {};  // ZeRO-3: lockstep
    }
  }
  const partitioning::Communicator& group = p.data_group();
  const int index = static_cast<int>(p.data_shard_info().index);
  T5XX_CHECK(group.rank() == index && group.size() == p.mesh().data,
             "the data group does not rank the processes by data replica");
  return {&group, index, static_cast<int>(p.mesh().data)};
}

std::unique_ptr<partitioning::PjitPartitioner> MakeInferencePartitioner(
    int64_t num_partitions, const partitioning::LogicalAxisRules& rules, const at::Device& device,
    std::ostream& log) {
  // (ValidateInferRun / ValidateEvalRun checked that num_partitions divides
  // the process count; PjitPartitioner refuses it too.)
  std::shared_ptr<const partitioning::Communicator> comm = JoinProcesses(device, log);
  partitioning::LogicalAxisRules kept = rules;
  for (auto& rule : kept) {
    if (rule.second && *rule.second == "data" && rule.first != "batch") rule.second.reset();
  }
  auto p = std::make_unique<partitioning::PjitPartitioner>(num_partitions, kept, comm);
  if (comm->size() > 1) {
    log << "[setup] mesh: data " << p->mesh().data << " x model " << p->mesh().model
        << " (this process: data replica " << p->data_shard_info().index
        << "): each data replica decodes one batch in every " << p->mesh().data
        << ", the parameters whole over 'data'" << std::endl;
  }
  return p;
}

void CheckInferenceLayout(partitioning::PjitPartitioner& partitioner,
                          const models::BaseTransformerModel& model) {
  if (partitioner.mesh().size() > 1) partitioner.Placement(model.ParamSpecs());
}

namespace {

void PutInts(std::string& out, const std::vector<int32_t>& v) {
  const uint64_t n = v.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(reinterpret_cast<const char*>(v.data()), n * sizeof(int32_t));
}

// Reads a value of type T at `pos` of `in`, advancing pos.
template <typename T>
void TakeBytes(const std::string& in, size_t& pos, T* into, size_t count) {
  T5XX_CHECK(pos + count * sizeof(T) <= in.size(), "a replica's inference outputs are cut short");
  std::memcpy(into, in.data() + pos, count * sizeof(T));
  pos += count * sizeof(T);
}

std::vector<int32_t> TakeInts(const std::string& in, size_t& pos) {
  uint64_t n = 0;
  TakeBytes(in, pos, &n, 1);
  std::vector<int32_t> v(n);
  TakeBytes(in, pos, v.data(), n);
  return v;
}

// Each output as: tokens, the number of decodes and each, the scores
// (doubles, bitwise).
std::string SerializeInferences(const std::vector<ExampleInference>& outs) {
  std::string s;
  for (const ExampleInference& e : outs) {
    PutInts(s, e.tokens);
    const uint64_t decodes = e.all_decodes.size(), scores = e.scores.size();
    s.append(reinterpret_cast<const char*>(&decodes), sizeof decodes);
    for (const auto& d : e.all_decodes) PutInts(s, d);
    s.append(reinterpret_cast<const char*>(&scores), sizeof scores);
    s.append(reinterpret_cast<const char*>(e.scores.data()), scores * sizeof(double));
  }
  return s;
}

std::vector<ExampleInference> ParseInferences(const std::string& s) {
  std::vector<ExampleInference> outs;
  for (size_t pos = 0; pos < s.size();) {
    ExampleInference e;
    e.tokens = TakeInts(s, pos);
    uint64_t decodes = 0, scores = 0;
    TakeBytes(s, pos, &decodes, 1);
    for (uint64_t d = 0; d < decodes; ++d) e.all_decodes.push_back(TakeInts(s, pos));
    TakeBytes(s, pos, &scores, 1);
    e.scores.resize(scores);
    TakeBytes(s, pos, e.scores.data(), scores);
    outs.push_back(std::move(e));
  }
  return outs;
}

}  // namespace

std::vector<ExampleInference> GatherInferences(const InferenceReplicas& replicas,
                                               const std::vector<ExampleInference>& mine,
                                               size_t num_examples, size_t batch_size) {
  if (replicas.count == 1) return mine;
  const std::vector<std::string> parts =
      partitioning::AllGatherStrings(*replicas.group, SerializeInferences(mine));
  std::vector<std::vector<ExampleInference>> of(parts.size());
  for (size_t r = 0; r < parts.size(); ++r) of[r] = ParseInferences(parts[r]);
  std::vector<ExampleInference> all;
  all.reserve(num_examples);
  std::vector<size_t> next(parts.size(), 0);
  for (size_t begin = 0, b = 0; begin < num_examples; begin += batch_size, ++b) {
    const size_t r = b % parts.size();
    const size_t rows = std::min(batch_size, num_examples - begin);
    T5XX_CHECK(next[r] + rows <= of[r].size(),
               "data replica " + std::to_string(r) + " returned too few inference outputs");
    for (size_t i = 0; i < rows; ++i) all.push_back(std::move(of[r][next[r]++]));
  }
  return all;
}

bool ChiefDecides(const partitioning::Communicator& comm, bool chief_says) {
  if (comm.size() == 1) return chief_says;
  at::Tensor flag = at::tensor({chief_says ? int64_t{1} : int64_t{0}}, at::kLong);
  comm.Broadcast(flag, /*root=*/0);
  return flag.item<int64_t>() != 0;
}

}  // namespace t5xx::run
