// metrics::rank_classification against t5's own rank_classification (and the
// sklearn metrics it calls) on the seeded cases of
// rank_classification_goldens.json (made by
// make_rank_classification_goldens.py; versions in its "about"): every
// metric within 1e-9 on the ×100 scale (sklearn sums in another order), and
// t5's errors as t5xx::Errors.
#include <cmath>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "t5xx/metrics/rank_classification.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio::metrics {
namespace {

using json = nlohmann::json;

json Goldens() {
  const std::string path =
      std::string(T5XX_SOURCE_DIR) + "/tests/metrics/rank_classification_goldens.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

TEST(RankClassification, MatchesT5) {
  const json goldens = Goldens();
  ASSERT_GE(goldens["cases"].size(), 13u);
  for (const json& c : goldens["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::vector<RankClassificationTarget> targets;
    for (const json& t : c["targets"]) {
      targets.push_back({t[0].get<std::vector<int64_t>>(), t[1].get<bool>(),
                         static_cast<double>(t[2].get<float>()), t[3].get<int64_t>()});
    }
    const auto scores = c["scores"].get<std::vector<double>>();
    std::optional<int64_t> num_classes;
    if (!c["num_classes"].is_null()) num_classes = c["num_classes"].get<int64_t>();
    const json& want = c["expected"];
    if (want.contains("error")) {
      EXPECT_THROW(rank_classification(targets, scores, num_classes,
                                       c["normalize_by_target_length"].get<bool>()),
                   Error)
          << want["error"];
      continue;
    }
    const Metrics got =
        rank_classification(targets, scores, num_classes, c["normalize_by_target_length"]);
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.count(k)) << k;
      EXPECT_NEAR(got.at(k), v.get<double>(), 1e-9) << k;
    }
  }
}

TEST(RankClassification, NamesWhatIsWrong) {
  const std::vector<RankClassificationTarget> targets = {{{0, 0}, true, 1.0, 0},
                                                         {{0, 1}, false, 1.0, 3}};
  try {
    rank_classification(targets, {-1.0, -2.0}, std::nullopt, true);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("target 0 has no tokens"), std::string::npos) << e.what();
  }
  try {
    rank_classification({{{0}, true, 1.0, 1}}, {-1.0});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("should be 2-dimensional"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(rank_classification(targets, {-1.0}), Error);
  // num_classes other than the choices per input (t5 would rank rows of two
  // inputs together).
  const std::vector<RankClassificationTarget> two_inputs = {
      {{0, 0}, true, 1.0, 1}, {{0, 1}, false, 1.0, 1}, {{1, 0}, false, 1.0, 1},
      {{1, 1}, true, 1.0, 1}};
  try {
    rank_classification(two_inputs, {-1, -2, -3, -4}, 4);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 0 has 2 choices but num_classes is 4"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace t5xx::seqio::metrics
