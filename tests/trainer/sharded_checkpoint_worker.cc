// One process of sharded_checkpoint_test, started N times as torchrun would
// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). On a DATA x MODEL mesh:
//   save MODEL_DIR DATA MODEL [DIE_RANK WAIT_SECONDS]
//       joins the others over Gloo, holds its boxes of the fixture's state
//       (sharded_checkpoint_fixture.h) and saves its part of one checkpoint
//       (SnapshotShardedTrainState, then AsyncCheckpointer in the
//       background) with 64-byte chunks, its dataset state beside; rank
//       DIE_RANK exits before writing anything (as a crashed process);
//       rank 0 waits WAIT_SECONDS for the others. Exit 0, or 4 with the
//       error on stderr.
//   restore CHECKPOINT_DIR DATA MODEL
//       restores its boxes (OwnedSlices of its layout) into a fresh state
//       and checks them against the global values. Exit 0, or 1 naming
//       what differs.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "sharded_checkpoint_fixture.h"
#include "t5xx/checkpoints/async_checkpointer.h"
#include "t5xx/partitioning/collectives/c10d_communicator.h"
#include "t5xx/trainer/checkpoint_io.h"
#include "t5xx/util/error.h"

using namespace t5xx;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: sharded_checkpoint_worker save|save_orbax|restore DIR DATA MODEL"
              << std::endl;
    return 2;
  }
  const std::string mode = argv[1], dir = argv[2];
  const partitioning::Mesh mesh{std::atol(argv[3]), std::atol(argv[4])};
  try {
    const auto env = partitioning::DetectProcessEnvironment();
    const int rank = env ? env->rank : 0, world = env ? env->world_size : 1;
    if (world != mesh.size()) throw Error("the mesh does not have WORLD_SIZE processes");
    const partitioning::MeshCoordinates coords = partitioning::MeshCoordinates::OfRank(rank, mesh);
    if (mode == "restore") {  // no collectives: each reads its own boxes
      testing::ShardedState s = testing::BuildShardedState(mesh, coords, /*fill=*/false);
      trainer::RestoreOptions options;
      options.owned_slice = trainer::OwnedSlices(s.layout);
      const trainer::RestoreReport r =
          trainer::RestoreTrainState(dir, s.params, s.optimizer.get(), options, rank, world);
      std::string bad = testing::CheckShardedState(s);
      if (!r.notes.empty()) bad += "notes: " + r.notes.front();
      if (!bad.empty()) {
        std::cerr << "rank " << rank << ": " << bad << std::endl;
        return 1;
      }
      std::cout << "rank " << rank << " read " << r.bytes_read << " bytes" << std::endl;
      return 0;
    }
    const int die_rank = argc > 5 ? std::atoi(argv[5]) : -1;
    const double wait_seconds = argc > 6 ? std::atof(argv[6]) : 600;
    auto comm = partitioning::C10dCommunicator::Connect(*env, {});
    testing::ShardedState s = testing::BuildShardedState(mesh, coords, /*fill=*/true);
    checkpoints::PendingCheckpoint snapshot = trainer::SnapshotShardedTrainState(
        dir, s.params, *s.optimizer, s.layout, *comm, trainer::SaveDType::kFloat32,
        {{checkpoints::DatasetStateFileName(rank, world), "{\"rank\": " + std::to_string(rank) + "}"}},
        wait_seconds);
    if (rank == die_rank) _exit(9);  // dies before writing its part
    checkpoints::SaveOptions options;
    options.max_chunk_bytes = 64;  // chunks smaller than the boxes
    if (mode == "save_orbax") options.format = checkpoints::CheckpointFormat::kOrbax;
    checkpoints::AsyncCheckpointer checkpointer(dir, options, {});
    checkpointer.Save(std::move(snapshot));
    for (const checkpoints::WriteResult& w : checkpointer.Wait()) {
      std::cout << "rank " << rank << (w.committed ? " committed " : " wrote its part of ")
                << w.dir << std::endl;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << std::endl;
    return 4;
  }
}
