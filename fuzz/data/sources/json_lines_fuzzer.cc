// Fuzz target: the two JSON-lines sources reading one file, plain or gzip,
// with and without skip_bad_records: seqio's C4-style strings
// (data/sources/json_lines_source.h) and t5xx's token-id lines
// (data/sources/token_json_lines_source.h).
// Input: byte 0 selects the options (bit 0: skip bad records; bit 1: read
// only the field "text" instead of every field; bit 2: the token-id source);
// the rest is the file.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "fuzz/fuzz_support.h"
#include "t5xx/data/sources/json_lines_source.h"
#include "t5xx/data/sources/token_json_lines_source.h"
#include "t5xx/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace t5xx;
  fuzz::ClearScratchDir();
  const std::string path = fuzz::WriteScratchFile(
      "data.jsonl", fuzz::InputBytes(data, size, 1));
  seqio::BadRecordPolicy policy;
  policy.skip = data[0] & 1;
  std::vector<std::string> fields;
  if (data[0] & 2) fields = {"text"};
  try {
    std::unique_ptr<seqio::DataSource> source;
    if (data[0] & 4) {
      source = std::make_unique<seqio::TokenJsonLinesDataSource>(
          std::map<std::string, std::string>{{"train", path}}, fields, policy);
    } else {
      source = std::make_unique<seqio::JsonLinesDataSource>(
          std::map<std::string, std::string>{{"train", path}}, fields, policy);
    }
    auto dataset = source->GetDataset("train", false, 0, {});
    while (dataset->Next()) {
    }
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {path});
  }
  return 0;
}
