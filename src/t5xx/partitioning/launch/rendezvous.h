// The rendezvous of a multi-process run: every process meets the others at
// a c10d TCPStore at MASTER_ADDR:MASTER_PORT (rank 0 serves it, unless
// torchrun's agent does), claims its rank, and records who it is; rank 0
// waits until every rank has joined and checks that they were launched
// alike, then lets them go on (torchrun's c10d rendezvous, with the errors
// named). Each rank's record -- its host name, its address on the route to
// the master, the world size it was launched with -- names it in errors.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "t5xx/partitioning/launch/process_environment.h"

namespace t5xx::partitioning {

// Joins. `self`: how this process is named in errors ("host h (10.0.0.2)").
// Throws t5xx::Error:
//  - rank 0: the port cannot be served (in use); another rank: rank 0's
//    store cannot be reached within join_timeout (naming MASTER_ADDR:PORT);
//  - a rank claimed by two processes (two hosts with one --node_rank),
//    naming both;
//  - ranks launched for another number of processes (hosts with different
//    --nnodes or --nproc_per_node), naming each such rank and its host;
//  - ranks that did not join within join_timeout, naming them;
// every rank that joined reports rank 0's verdict.
c10::intrusive_ptr<c10d::Store> JoinRendezvous(const ProcessEnvironment& env,
                                               std::chrono::milliseconds join_timeout,
                                               const std::string& self);

// A client's first request to the store at `where`, given join_timeout to
// be answered: a program other than a rendezvous that listens on the port
// accepts the connection and never answers, and the store's own requests
// would wait for it forever (the request runs on a thread of its own that
// keeps the store alive). Throws t5xx::Error naming `where`, the flags,
// and `server` (who serves it: "rank 0", "the launch with --node_rank=0").
void ProbeRendezvousStore(const c10::intrusive_ptr<c10d::Store>& store,
                          std::chrono::milliseconds join_timeout, const std::string& where,
                          const std::string& server = "rank 0");

// Where each rank of the run joined from ("host h (10.0.0.2)"), by rank,
// read from the join records of a store JoinRendezvous returned.
std::vector<std::string> RankHosts(c10d::Store& store, int world_size);

// "12.5 s".
std::string Seconds(std::chrono::milliseconds ms);

}  // namespace t5xx::partitioning
