// Writes a checkpoint's train state again in Orbax's layout with t5xx's
// writer (checkpoints.h SaveOptions::format = kOrbax), as `processes`
// writers of one sharded save: each array whose first dimension the
// process count divides is split along it, every process writing its box;
// the others are written whole by process 0 (replicated). Used by
// run_orbax_restore_test.sh, which then has t5x's own Orbax restore read it.
// Usage: t5xx_orbax_rewrite SRC_CHECKPOINT_DIR MODEL_DIR PROCESSES
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/util/error.h"

using namespace t5xx::checkpoints;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s SRC_CHECKPOINT_DIR MODEL_DIR PROCESSES\n", argv[0]);
    return 2;
  }
  const std::string model_dir = argv[2];
  const int n = std::atoi(argv[3]);
  try {
    CheckpointReader reader(argv[1]);
    std::vector<std::pair<std::string, LoadedArray>> whole;
    for (const auto& [path, entry] : reader.arrays()) whole.emplace_back(path, reader.Read(path));
    const std::string tmp = n > 1 ? BeginShardedSave(model_dir, reader.step(), 1) : "";
    std::vector<std::string> errors(n);
    std::vector<std::thread> writers;
    for (int p = 0; p < n; ++p) {
      writers.emplace_back([&, p] {
        std::vector<LoadedArray> boxes(whole.size());
        std::vector<ArrayRef> refs;
        for (size_t i = 0; i < whole.size(); ++i) {
          const LoadedArray& a = whole[i].second;
          ArrayRef r{whole[i].first, a.dtype, a.shape, a.bytes.data()};
          if (!a.shape.empty() && a.shape[0] % n == 0 && n > 1) {
            Box box{std::vector<int64_t>(a.shape.size(), 0), a.shape};
            box.shape[0] = a.shape[0] / n;
            box.origin[0] = box.shape[0] * p;
            boxes[i] = reader.Read(whole[i].first, box);
            r.data = boxes[i].bytes.data();
            r.box = box;
          } else {
            r.write = p == 0;
          }
          refs.push_back(r);
        }
        SaveOptions o;
        o.format = CheckpointFormat::kOrbax;
        try {
          SaveCheckpoint(model_dir, reader.step(), refs, o, {},
                         n > 1 ? ShardedSave{p, n, tmp, 120} : ShardedSave{});
        } catch (const t5xx::Error& e) {
          errors[p] = e.what();
        }
      });
    }
    for (auto& t : writers) t.join();
    for (int p = 0; p < n; ++p) {
      if (!errors[p].empty()) {
        std::fprintf(stderr, "process %d: %s\n", p, errors[p].c_str());
        return 1;
      }
    }
    std::printf("%s: %zu arrays, step %lld, %d writer(s)\n",
                CheckpointDir(model_dir, reader.step()).c_str(), whole.size(),
                static_cast<long long>(reader.step()), n);
  } catch (const t5xx::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
