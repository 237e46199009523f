// Inference across processes (`t5xx infer`, `t5xx eval` and train's
// inference evaluation under a launcher): the ('data', 'model') mesh of the
// run's processes, the parameters restored onto it, and the split of the
// work between its data replicas.
//
// The processes of one 'model' group decode the same batches together (the
// parameters' hooks complete each layer and the vocabulary-parallel logits
// over the group). The data replicas split the batches: with `count`
// replicas, replica i decodes batches b = i, i + count, ... -- each batch
// exactly as one process forms it (the same rows, the same padding, its own
// generator seeded with HashSeed(seed, b)) -- and the outputs are gathered
// over the data group and put back in input order, so every process holds
// the outputs one process would have made, bitwise. (t5x splits each batch's
// rows between the hosts instead; whole batches keep every row's arithmetic,
// and so its bytes, the same as in one process.)
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "t5xx/models/base_model.h"
#include "t5xx/partitioning/collectives/communicator.h"
#include "t5xx/partitioning/logical_axis_rules.h"
#include "t5xx/partitioning/pjit_partitioner.h"

namespace t5xx::run {

struct ExampleInference;

// This process's share of an inference: it decodes the batches b with
// b % count == index; `group` (the data group: one process per data
// replica, ranked by replica) gathers the outputs. Default: alone.
struct InferenceReplicas {
  const partitioning::Communicator* group = nullptr;
  int index = 0;
  int count = 1;
};

// The replicas of `p`'s mesh: its data group, unless a parameter is split
// over 'data' (ZeRO-3, parameter_partitioning_dims = 2): its per-layer
// gathers need every data replica at the same layer of the same batch, so
// then every replica decodes every batch (count 1; train's inference
// evaluation under ZeRO-3). Another partitioner than PjitPartitioner: alone.
InferenceReplicas ReplicasOf(const partitioning::BasePartitioner& partitioner);

// The partitioner of an infer or eval run: the run's processes
// (JoinProcesses) on a mesh with num_partitions as its 'model' axis and
// `rules` without their parameter placements on 'data' (every rule mapping
// another logical axis than 'batch' to 'data' maps it to None): the parameters
// are whole over the data axis, so that each data replica decodes its own
// batches (ReplicasOf). Logs the mesh to `log`. Throws t5xx::Error when
// num_partitions does not divide the process count (the validation of the
// infer and eval runs names the binding first) or the processes cannot be
// joined.
std::unique_ptr<partitioning::PjitPartitioner> MakeInferencePartitioner(
    int64_t num_partitions, const partitioning::LogicalAxisRules& rules, const at::Device& device,
    std::ostream& log);

// Checks that `model`'s parameters split over `partitioner`'s mesh (every
// sharded dimension divides by its mesh axis), before anything is read or
// written. Throws t5xx::Error naming every parameter that does not.
void CheckInferenceLayout(partitioning::PjitPartitioner& partitioner,
                          const models::BaseTransformerModel& model);

// Every replica's outputs (`mine`: this replica's batches, in order, of
// `num_examples` examples in batches of batch_size), gathered over
// replicas.group and put in input order. Every process gets all of them.
std::vector<ExampleInference> GatherInferences(const InferenceReplicas& replicas,
                                               const std::vector<ExampleInference>& mine,
                                               size_t num_examples, size_t batch_size);

// Whether the chief (rank 0 of `comm`) says `chief_says`: every process gets
// rank 0's value (a broadcast), so that decisions made from files only the
// chief reads or changes (a chunk to reuse, a task already complete) are
// the same everywhere.
bool ChiefDecides(const partitioning::Communicator& comm, bool chief_says);

}  // namespace t5xx::run
