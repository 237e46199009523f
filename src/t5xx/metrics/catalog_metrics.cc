// sklearn's matthews_corrcoef and t5's span_squad (see metrics.h): the
// metrics of t5's GLUE/SQuAD catalog over plain values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "t5xx/metrics/metrics.h"
#include "t5xx/metrics/unicode_properties.h"
#include "t5xx/util/error.h"

namespace t5xx::seqio::metrics {
namespace {

// Python int(token) for a token of \w characters (no sign or space can
// occur): decimal digits with single '_' between them. Values beyond 10^18
// are held as 10^18 (any such index is past every context). False when
// int() would raise ValueError, also for more than 4300 digits (Python
// 3.11's default int_max_str_digits).
bool PythonInt(const std::u32string& token, int64_t* value) {
  constexpr int64_t kCap = 1000000000000000000;
  int64_t v = 0;
  size_t digits = 0;
  bool last_digit = false;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == U'_') {
      if (!last_digit || i + 1 == token.size()) return false;
      last_digit = false;
      continue;
    }
    const int d = unicode::DecimalValue(token[i]);
    if (d < 0) return false;
    v = v >= kCap / 10 ? kCap : std::min(kCap, v * 10 + d);
    last_digit = true;
    ++digits;
  }
  if (!last_digit || digits > 4300) return false;  // empty, or too long
  *value = v;
  return true;
}

// re.sub(r"\W", " ", s).split(): the runs of \w characters.
std::vector<std::u32string> SpaceTok(const std::string& s) {
  std::vector<std::u32string> out;
  std::u32string cur;
  for (char32_t c : unicode::Decode(s)) {
    if (unicode::IsWord(c)) {
      cur += c;
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace

double matthews_corrcoef(const std::vector<int64_t>& targets,
                         const std::vector<int64_t>& predictions) {
  T5XX_CHECK(targets.size() == predictions.size(),
             "metrics.matthews_corrcoef: got " + std::to_string(targets.size()) +
                 " targets but " + std::to_string(predictions.size()) +
                 " predictions; they must have the same length");
  if (targets.empty()) return 0.0;  // sklearn 1.5: no error, 0.0
  // Row sums (targets), column sums (predictions) and the trace of the
  // confusion matrix over the labels seen on either side. All are integers
  // below 2^53, so sklearn's float64 sums are exact and so are these.
  std::map<int64_t, double> t_sum, p_sum;
  double n_correct = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    t_sum[targets[i]] += 1;
    p_sum[predictions[i]] += 1;
    if (targets[i] == predictions[i]) n_correct += 1;
  }
  const double n = static_cast<double>(targets.size());
  double t_dot_p = 0, p_dot_p = 0, t_dot_t = 0;
  for (const auto& [label, t] : t_sum) {
    t_dot_t += t * t;
    if (auto it = p_sum.find(label); it != p_sum.end()) t_dot_p += t * it->second;
  }
  for (const auto& [label, p] : p_sum) p_dot_p += p * p;
  const double cov_ytyp = n_correct * n - t_dot_p;
  const double cov_ypyp = n * n - p_dot_p;
  const double cov_ytyt = n * n - t_dot_t;
  if (cov_ypyp * cov_ytyt == 0) return 0.0;
  return cov_ytyp / std::sqrt(cov_ytyt * cov_ypyp);
}

std::string span_answer_text(const std::string& context, const std::string& prediction) {
  const std::vector<std::u32string> answer = SpaceTok(prediction);
  // In early training the model can output garbage: "" then.
  if (answer.size() < 4) return "";
  int64_t start = 0, end = 0;
  if (!PythonInt(answer[1], &start) || !PythonInt(answer[3], &end)) return "";
  const std::vector<std::u32string> tokens = SpaceTok(context);
  const int64_t size = static_cast<int64_t>(tokens.size());
  const int64_t stop = std::min(end + 1, size);  // context[start:end+1]
  std::u32string out;
  for (int64_t i = start; i < stop; ++i) {
    if (i > start) out += U' ';
    out += tokens[static_cast<size_t>(i)];
  }
  return unicode::Encode(out);
}

Metrics span_squad(const std::vector<std::vector<std::string>>& answers,
                   const std::vector<std::string>& contexts,
                   const std::vector<std::string>& predictions) {
  T5XX_CHECK(answers.size() == contexts.size(),
             "metrics.span_squad: " + std::to_string(answers.size()) + " answer lists but " +
                 std::to_string(contexts.size()) + " contexts");
  T5XX_CHECK(answers.size() == predictions.size(),
             "metrics.span_squad: got " + std::to_string(answers.size()) + " targets but " +
                 std::to_string(predictions.size()) +
                 " predictions; they must have the same length");
  std::vector<std::string> texts;
  texts.reserve(predictions.size());
  for (size_t i = 0; i < predictions.size(); ++i) {
    texts.push_back(span_answer_text(contexts[i], predictions[i]));
  }
  try {
    return squad(answers, texts);
  } catch (const Error& e) {
    const std::string what = e.what();
    const std::string prefix = "metrics.squad: ";
    throw Error("metrics.span_squad: " +
                (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
  }
}

}  // namespace t5xx::seqio::metrics
