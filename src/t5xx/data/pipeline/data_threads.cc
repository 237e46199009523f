// The process-wide input-pipeline thread count (see data_threads.h).
#include "t5xx/data/pipeline/data_threads.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "t5xx/util/error.h"

namespace t5xx::seqio {
namespace {

std::atomic<int> g_data_threads{0};  // 0 = not set

int DefaultDataThreads() {
  if (const char* env = std::getenv(kDataThreadsEnv); env != nullptr && *env != '\0') {
    const std::string text = env;
    size_t used = 0;
    long n = 0;
    try {
      n = std::stol(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    T5XX_CHECK(used == text.size() && n >= 1 && n <= kMaxDataThreads,
               std::string(kDataThreadsEnv) + "='" + text +
                   "' is not a thread count: set it to an integer in [1, " +
                   std::to_string(kMaxDataThreads) + "] (the input pipeline's threads) or unset "
                   "it for the default (the machine's hardware threads, at most 8)");
    return static_cast<int>(n);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw, 1, 8));
}

}  // namespace

int DataThreads() {
  const int set = g_data_threads.load();
  return set > 0 ? set : DefaultDataThreads();
}

void SetDataThreads(int n) {
  T5XX_CHECK(n >= 0 && n <= kMaxDataThreads,
             "SetDataThreads: the input pipeline's thread count must be in [1, " +
                 std::to_string(kMaxDataThreads) + "] (0 = the default), got " +
                 std::to_string(n));
  g_data_threads.store(n);
}

int ResolveDataThreads(int num_threads) {
  return num_threads >= 1 ? num_threads : DataThreads();
}

}  // namespace t5xx::seqio
