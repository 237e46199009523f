// Parallel ranged reads shared by the object-store drivers (see object_store.h).
#include "t5xx/storage/object_store.h"

#include <algorithm>
#include <atomic>
#include <future>

#include "t5xx/util/error.h"

namespace t5xx::storage {

std::string ReadRestInParallel(ObjectStore& store, const std::string& url, const std::string& object,
                               std::string first, uint64_t total, uint64_t part_bytes, int parallel) {
  if (total <= first.size()) return first;
  std::string out(total, '\0');
  std::copy(first.begin(), first.end(), out.begin());
  const uint64_t start = first.size();
  const uint64_t parts = (total - start + part_bytes - 1) / part_bytes;
  std::atomic<uint64_t> next{0};
  auto worker = [&] {
    for (uint64_t i; (i = next++) < parts;) {
      const uint64_t b = start + part_bytes * i;
      const uint64_t n = std::min(part_bytes, total - b);
      std::optional<std::string> part = store.GetRange(object, b, n);
      T5XX_CHECK(part && part->size() == n,
                 "cannot read " + url + ": it changed while being read (a range came back " +
                     (part ? "with " + std::to_string(part->size()) + " of " + std::to_string(n) + " bytes"
                           : std::string("missing")) +
                     ")");
      std::copy(part->begin(), part->end(), out.begin() + static_cast<std::ptrdiff_t>(b));
    }
  };
  std::vector<std::future<void>> jobs;
  for (uint64_t t = 0; t < std::min<uint64_t>(static_cast<uint64_t>(parallel), parts); ++t) {
    jobs.push_back(std::async(std::launch::async, worker));
  }
  for (auto& j : jobs) j.get();
  return out;
}

}  // namespace t5xx::storage
