// Helpers shared by the GoogleTest suites (tests/ is on their include path).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "t5xx/data/vocabularies/vocabulary.h"
#include "t5xx/util/error.h"

namespace t5xx::testing {

// Runs fn and returns the t5xx::Error message it throws, or
// "<no t5xx::Error>" when it throws none.
template <typename Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no t5xx::Error>";
}

// Waits (polling every millisecond, up to 10 s) until *counter reaches at
// least n, then asserts that it did: for counters a background thread
// increments (e.g. the examples a producer thread has read).
inline void WaitForAtLeast(const std::atomic<int64_t>& counter, int64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (counter.load() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(counter.load(), n);
}

// A fresh directory under the test temp dir (`path`), removed with its
// contents by the destructor.
struct TempDir {
  std::string path;
  TempDir() {
    path = ::testing::TempDir() + "/t5xx_test_XXXXXX";
    EXPECT_NE(::mkdtemp(path.data()), nullptr);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// A deterministic stand-in for a SentencePiece vocabulary: pad 0, eos 1,
// unk 2; byte c encodes to 3 + c % (base - 3); `extra` sentinel ids on top
// (vocab_size = base + extra). Decode returns the number of ids.
class FakeVocabulary : public seqio::Vocabulary {
 public:
  FakeVocabulary(int32_t base, int32_t extra) : base_(base), extra_(extra) {}
  int32_t eos_id() const override { return 1; }
  int32_t unk_id() const override { return 2; }
  int32_t vocab_size() const override { return base_ + extra_; }
  int32_t base_vocab_size() const override { return base_; }
  int32_t extra_ids() const override { return extra_; }
  std::vector<int32_t> Encode(const std::string& text) const override {
    std::vector<int32_t> out;
    for (unsigned char c : text) out.push_back(3 + c % (base_ - 3));
    return out;
  }
  std::string Decode(const std::vector<int32_t>& ids) const override {
    return std::to_string(ids.size());
  }

 private:
  int32_t base_;
  int32_t extra_;
};

}  // namespace t5xx::testing

// EXPECT that `stmt` throws a t5xx::Error whose message contains `text`.
#define EXPECT_ERROR_CONTAINS(stmt, text)                                        \
  do {                                                                           \
    std::string msg_ = ::t5xx::testing::ErrorOf([&] { stmt; });                  \
    EXPECT_NE(msg_.find(text), std::string::npos)                                \
        << "message: '" << msg_ << "'\nexpected to contain: '" << (text) << "'"; \
  } while (0)
