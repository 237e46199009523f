// metrics_json_tool REQUESTS.json: reads a JSON array of metric requests
// (metrics_requests.h) and prints the JSON array of t5xx's answers, for
// metrics_live_test.py to compare with the Python libraries.
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "metrics_requests.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: metrics_json_tool REQUESTS.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "metrics_json_tool: cannot open " << argv[1] << "\n";
    return 2;
  }
  const nlohmann::json requests = nlohmann::json::parse(in);
  nlohmann::json answers = nlohmann::json::array();
  for (const auto& r : requests) answers.push_back(t5xx::seqio::testing::AnswerMetricsRequest(r));
  std::cout << answers.dump() << "\n";
  return 0;
}
