// t5xx's bleu, rouge, Porter stemmer, correlations, edit distance and QA
// metrics against the answers the Python libraries gave to the same
// requests (metrics_goldens.json, made by make_metrics_goldens.py with
// sacrebleu, rouge-score, NLTK, scipy, editdistance and t5's qa_utils.py;
// versions in its "about"). No Python needed here; metrics_live_test.py
// repeats the comparison against the installed libraries.
//
// Equality: strings exactly; numbers exactly (bit for bit) except the
// correlations, whose scipy/BLAS dot product sums in another order
// (|difference| <= 1e-12 on the ×100 scale).
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "metrics_requests.h"

namespace t5xx::seqio::testing {
namespace {

using json = nlohmann::json;

const json& Goldens() {
  static const json j = [] {
    const std::string path = std::string(T5XX_SOURCE_DIR) + "/tests/metrics/metrics_goldens.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return json::parse(in);
  }();
  return j;
}

// Compares recursively; numbers within `tol` (0: exactly). Errors match when
// both sides are errors (the messages differ: Python's vs t5xx's).
void ExpectSame(const json& want, const json& got, double tol, const std::string& where,
                int* failures) {
  auto fail = [&](const std::string& why) {
    if (++*failures <= 20) ADD_FAILURE() << where << ": " << why;
  };
  if (want.is_object() && want.contains("error")) {
    if (!(got.is_object() && got.contains("error"))) fail("expected an error, got " + got.dump());
    return;
  }
  if (want.is_number() || got.is_number()) {
    if (!want.is_number() || !got.is_number()) return fail(want.dump() + " vs " + got.dump());
    const double a = want.get<double>(), b = got.get<double>();
    if (tol == 0 ? a != b : std::fabs(a - b) > tol) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%.17g vs %.17g (diff %.3g)", a, b, b - a);
      fail(buf);
    }
    return;
  }
  if (want.is_array()) {
    if (!got.is_array() || got.size() != want.size()) {
      return fail("array of " + std::to_string(want.size()) + " vs " + got.dump().substr(0, 200));
    }
    for (size_t i = 0; i < want.size(); ++i) {
      ExpectSame(want[i], got[i], tol, where + "[" + std::to_string(i) + "]", failures);
    }
    return;
  }
  if (want.is_object()) {
    if (!got.is_object() || got.size() != want.size()) return fail(want.dump() + " vs " + got.dump());
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return fail("missing key " + it.key());
      ExpectSame(it.value(), got.at(it.key()), tol, where + "." + it.key(), failures);
    }
    return;
  }
  if (want != got) fail(want.dump() + " vs " + got.dump());
}

TEST(MetricsGoldens, EveryStoredCaseMatches) {
  const json& cases = Goldens().at("cases");
  ASSERT_GT(cases.size(), 150u);
  std::map<std::string, int> per_fn;
  int failures = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const json& request = cases[i].at("request");
    const std::string fn = request.at("fn");
    const double tol = fn == "pearson_corrcoef" || fn == "spearman_corrcoef" ? 1e-12 : 0.0;
    ExpectSame(cases[i].at("expected"), AnswerMetricsRequest(request), tol,
               "case " + std::to_string(i) + " (" + fn + ")", &failures);
    ++per_fn[fn];
  }
  EXPECT_EQ(failures, 0);
  // Every kind of request is there (squad/trivia_qa only when the goldens
  // were made with --t5_src, as committed).
  for (const char* fn : {"bleu", "corpus_bleu", "tokenize", "rouge", "rouge_mean", "rouge_score",
                         "rouge_tokenize", "porter_stem", "pearson_corrcoef", "spearman_corrcoef",
                         "edit_distance", "squad", "trivia_qa", "normalize_squad",
                         "normalize_trivia_qa", "python_lower"}) {
    EXPECT_GT(per_fn[fn], 0) << fn;
  }
}

TEST(MetricsGoldens, StemmerWordListIsLarge) {
  // The Porter check covers NLTK's irregular forms, every suffix rule and a
  // sample of GCIDE headwords, in all three modes.
  int modes = 0;
  for (const auto& c : Goldens().at("cases")) {
    if (c.at("request").at("fn") != "porter_stem") continue;
    ++modes;
    EXPECT_GT(c.at("request").at("words").size(), 1000u);
  }
  EXPECT_EQ(modes, 3);
}

}  // namespace
}  // namespace t5xx::seqio::testing
