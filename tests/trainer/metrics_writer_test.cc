// Tests for MetricsWriter's JSON lines (metrics.jsonl). Expected lines are
// written out by hand: nlohmann sorts keys; NaN is null; a metric name with
// bytes that are not UTF-8 gets U+FFFD (EF BF BD) per ill-formed sequence.
#include "t5xx/trainer/metrics_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

namespace t5xx::trainer {
namespace {

namespace fs = std::filesystem;

TEST(MetricsWriterTest, JsonLinesAreUtf8EvenForNamesThatAreNot) {
  const fs::path dir = fs::temp_directory_path() /
                       ("t5xx_metrics_writer_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  {
    MetricsWriter writer(dir.string());
    // "loss/\xff": FF starts no UTF-8 character -> one U+FFFD. Before this
    // writer used DumpJson, nlohmann threw type_error 316 here.
    writer.WriteScalars(3, {{"loss/\xff", 1.5}, {"z", std::nan("")}});
  }
  std::ifstream in(dir / "metrics.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "{\"loss/\xEF\xBF\xBD\":1.5,\"step\":3,\"z\":null}");
  EXPECT_FALSE(std::getline(in, line));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace t5xx::trainer
