// Whole and ranged reads shared by the object-store drivers (see object_store.h).
#include "t5xx/storage/object_store.h"

#include <algorithm>
#include <atomic>
#include <future>

#include "t5xx/util/error.h"

namespace t5xx::storage {

std::string ObjectStore::RangeHeader(uint64_t first, uint64_t last) {
  return "bytes=" + std::to_string(first) + "-" + std::to_string(last);
}

std::optional<std::string> ObjectStore::GetRange(const std::string& object, uint64_t offset,
                                                 uint64_t length) {
  if (length == 0) {
    if (!Size(object)) return std::nullopt;
    return std::string();
  }
  std::optional<HttpResponse> r = GetBytes(object, offset, offset + length - 1);
  if (!r) return std::nullopt;
  if (r->status != 200 && r->status != 206 && r->status != 416) Fail(*r, "cannot read", object);
  if (r->status == 416) return std::string();  // the range starts past the end
  if (r->status == 200 && (offset > 0 || r->body.size() > length)) {
    // A store that ignores Range: cut the range out.
    r->body = offset >= r->body.size() ? std::string() : r->body.substr(offset, length);
  }
  return std::move(r->body);
}

std::optional<std::string> ObjectStore::Get(const std::string& object) {
  std::optional<HttpResponse> r = GetBytes(object, 0, kPartBytes - 1);
  if (!r) return std::nullopt;
  if (r->status != 200 && r->status != 206 && r->status != 416) Fail(*r, "cannot read", object);
  if (r->status == 416) return std::string();  // an empty object
  if (r->status == 200) return std::move(r->body);
  const std::optional<uint64_t> total = ContentRangeTotal(r->header("content-range"));
  if (!total) return std::move(r->body);
  return ReadRestInParallel(object, std::move(r->body), *total);
}

std::string ObjectStore::ReadRestInParallel(const std::string& object, std::string first,
                                            uint64_t total) {
  const uint64_t part_bytes = kPartBytes;
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
      std::optional<std::string> part = GetRange(object, b, n);
      T5XX_CHECK(part && part->size() == n,
                 "cannot read " + UrlFor(object) + ": it changed while being read (a range came back " +
                     (part ? "with " + std::to_string(part->size()) + " of " + std::to_string(n) + " bytes"
                           : std::string("missing")) +
                     ")");
      std::copy(part->begin(), part->end(), out.begin() + static_cast<std::ptrdiff_t>(b));
    }
  };
  std::vector<std::future<void>> jobs;
  for (uint64_t t = 0; t < std::min<uint64_t>(kParallelParts, parts); ++t) {
    jobs.push_back(std::async(std::launch::async, worker));
  }
  for (auto& j : jobs) j.get();
  return out;
}

}  // namespace t5xx::storage
