// The Dataset interface's shared parts (declared in dataset.h): the default
// SaveState/RestoreState, the pipeline state helpers (root version wrapper,
// Example <-> JSON, StateField), FromVector and Collect. The ops live in
// dataset_ops.cc, parallel_map.cc and factory_datasets.cc.
#include "t5xx/data/pipeline/dataset.h"

#include "t5xx/data/pipeline/array_json.h"

#include <cxxabi.h>

#include <cstdint>
#include <cstdlib>
#include <typeinfo>
#include <utility>

#include <nlohmann/json.hpp>

#include "t5xx/util/error.h"
#include "t5xx/util/json_text.h"
#include "t5xx/util/utf8.h"

namespace t5xx::seqio {

using json = nlohmann::json;

namespace {
// The path ("/key/index/...") of the first non-integer number in `j`, stored
// in *found; "" if there is none. Pipeline states hold only integers
// (positions, counters, token ids), and the restore code converts numbers
// with get<integer>(), which casts a float with undefined behaviour when it
// is out of range: one check here stands in for one at every StateField.
std::string FirstFloat(const json& j, const std::string& at, const json** found) {
  if (j.is_number_float()) {
    *found = &j;
    return at.empty() ? "/" : at;
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string path = FirstFloat(it.value(), at + "/" + it.key(), found);
      if (!path.empty()) return path;
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      std::string path = FirstFloat(j[i], at + "/" + std::to_string(i), found);
      if (!path.empty()) return path;
    }
  }
  return "";
}

std::string StageName(const Dataset& ds) {
  const char* mangled = typeid(ds).name();
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : mangled;
  std::free(d);
  return out;
}
}  // namespace

json Dataset::SaveState() const {
  throw Error("dataset stage " + StageName(*this) +
              " cannot save its position (no SaveState)");
}

void Dataset::RestoreState(const json&) {
  throw Error("dataset stage " + StageName(*this) +
              " cannot save its position (no RestoreState)");
}

json ExampleToJson(const Example& ex) {
  json j = json::object();
  for (const auto& [k, v] : ex) {
    if (const auto* s = std::get_if<std::string>(&v))
      j[k] = *s;
    else if (const auto* t = std::get_if<Tokens>(&v))
      j[k] = *t;
    else
      j[k] = ArrayToStateJson(std::get<Array>(v));
  }
  return j;
}

Example ExampleFromJson(const json& j) {
  T5XX_CHECK(j.is_object(), "pipeline state: an example must be a JSON object, got " +
                           std::string(TruncateUtf8(DumpJson(j), 80)));
  Example ex;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_string())
      ex[it.key()] = it->get<std::string>();
    else if (it->is_array())
      ex[it.key()] = it->get<Tokens>();
    else if (it->is_object())
      ex[it.key()] = ArrayFromStateJson(*it, "pipeline state: feature '" + it.key() + "'");
    else
      throw Error("pipeline state: feature '" + it.key() +
                  "' must be a string, an array of ints or an array record");
  }
  return ex;
}

const json& StateField(const json& state, const char* field, const char* who) {
  T5XX_CHECK(state.is_object() && state.contains(field),
        std::string(who) + ": saved state lacks field '" + field +
            "' (state from a different pipeline?)");
  return state.at(field);
}

uint64_t StateCount(const json& state, const char* field, const char* who) {
  const json& v = StateField(state, field, who);
  const bool count = (v.is_number_unsigned() && v.get<uint64_t>() <= uint64_t{INT64_MAX}) ||
                     (v.is_number_integer() && v.get<int64_t>() >= 0);
  T5XX_CHECK(count, std::string(who) + ": saved field '" + field + "' is " + DumpJson(v) +
                        ", not a count (an integer in [0, 2^63)); the state is damaged");
  return v.get<uint64_t>();
}

json WrapRootState(json state) {
  return json{{"version", kPipelineStateVersion}, {"state", std::move(state)}};
}

json UnwrapRootState(const json& root) {
  T5XX_CHECK(root.is_object() && root.contains("version") &&
            root["version"].is_number_integer(),
        "pipeline state: missing integer \"version\" field");
  const std::optional<int64_t> read_version = JsonInteger(root["version"]);
  T5XX_CHECK(read_version.has_value(), "pipeline state: \"version\" " +
                                           DumpJson(root["version"]) + " is out of range");
  const int64_t v = *read_version;
  T5XX_CHECK(v <= kPipelineStateVersion,
        "pipeline state has version " + std::to_string(v) +
            ", newer than this build supports (" +
            std::to_string(kPipelineStateVersion) +
            "); restore it with a newer t5xx");
  T5XX_CHECK(v >= 1, "pipeline state: invalid version " + std::to_string(v));
  T5XX_CHECK(v >= 2, "pipeline state has version " + std::to_string(v) +
                         ", written by a t5xx before compact positions (version 2), whose "
                         "positions held the buffered examples and a shuffle this build no "
                         "longer has: it cannot be continued exactly; set "
                         "utils.RestoreCheckpointConfig.restore_dataset = False to start the "
                         "data from its beginning");
  const json& state = StateField(root, "state", "pipeline state");
  const json* value = nullptr;
  const std::string float_at = FirstFloat(state, "", &value);
  T5XX_CHECK(float_at.empty(), "pipeline state: a non-integer number, " +
                                   (value ? DumpJson(*value) : std::string()) + ", at " +
                                   float_at +
                                   "; t5xx writes only integers there, so the state is damaged");
  return state;
}

json InputStateOrNull(const Dataset& input, bool* saveable) {
  if (!*saveable) return nullptr;
  try {
    return input.SaveState();
  } catch (const Error&) {
    *saveable = false;
    return nullptr;
  }
}

void SkipOutputs(Dataset& ds, uint64_t skip, uint64_t max_skip, const char* who) {
  T5XX_CHECK(skip <= max_skip, std::string(who) + ": the saved position skips " +
                                   std::to_string(skip) + " outputs, more than the " +
                                   std::to_string(max_skip) +
                                   " of one unit (the state is damaged)");
  for (uint64_t i = 0; i < skip; ++i) {
    bool ended = false;
    try {
      ended = !ds.Next().has_value();
    } catch (const Error&) {
      continue;  // the saved run met this error and went on
    }
    T5XX_CHECK(!ended, std::string(who) + ": the saved position is " + std::to_string(skip) +
                           " outputs past its start but the data ends after " +
                           std::to_string(i) +
                           " (did the data or the configuration change?)");
  }
}

namespace {
// The stage `state` chains to (its "input" when that is an object), or null.
const json* ChainedInput(const json& state) {
  auto input = state.find("input");
  return input != state.end() && input->is_object() ? &*input : nullptr;
}

// A stage's own fields, flattened; an "input" that is not an object (null)
// is kept, as it ends the chain.
json StageFields(const json& stage) {
  json out = json::object();
  for (auto it = stage.begin(); it != stage.end(); ++it) {
    if (it.key() != "input") {
      out[it.key()] = FlattenState(it.value());
    } else if (!it.value().is_object()) {
      out["input"] = it.value();
    }
  }
  return out;
}
}  // namespace

json FlattenState(const json& state) {
  if (state.is_array()) {
    json out = json::array();
    for (const json& e : state) out.push_back(FlattenState(e));
    return out;
  }
  if (!state.is_object()) return state;
  if (!ChainedInput(state)) return StageFields(state);
  json stages = json::array();
  for (const json* stage = &state; stage; stage = ChainedInput(*stage)) {
    stages.push_back(StageFields(*stage));
  }
  return json{{"stages", std::move(stages)}};
}

json UnflattenState(const json& stored) {
  if (stored.is_array()) {
    json out = json::array();
    for (const json& e : stored) out.push_back(UnflattenState(e));
    return out;
  }
  if (!stored.is_object()) return stored;
  auto stages = stored.find("stages");
  if (stages == stored.end() || stored.size() != 1) {
    json out = json::object();
    for (auto it = stored.begin(); it != stored.end(); ++it) {
      out[it.key()] = UnflattenState(it.value());
    }
    return out;
  }
  T5XX_CHECK(stages->is_array() && !stages->empty(),
             "pipeline state: \"stages\" must be a non-empty array of stage objects");
  json chain;
  for (size_t i = stages->size(); i-- > 0;) {
    const json& e = (*stages)[i];
    T5XX_CHECK(e.is_object(), "pipeline state: stage " + std::to_string(i) +
                                  " of \"stages\" is " + DumpJson(e) + ", not an object");
    json stage = UnflattenState(e);
    if (i + 1 < stages->size()) stage["input"] = std::move(chain);
    chain = std::move(stage);
  }
  return chain;
}

json SavePipelineState(const Dataset& ds) { return WrapRootState(ds.SaveState()); }

void RestorePipelineState(Dataset& ds, const json& root) {
  ds.RestoreState(UnwrapRootState(root));
}

namespace {

class VectorDataset : public Dataset {
 public:
  explicit VectorDataset(std::vector<Example> examples)
      : examples_(std::move(examples)) {}
  std::optional<Example> Next() override {
    if (pos_ >= examples_.size()) return std::nullopt;
    return std::move(examples_[pos_++]);
  }
  json SaveState() const override { return {{"pos", pos_}}; }
  void RestoreState(const json& state) override {
    const size_t pos = static_cast<size_t>(StateCount(state, "pos", "FromVector"));
    T5XX_CHECK(pos <= examples_.size(),
          "FromVector: saved position " + std::to_string(pos) +
              " is past the end (" + std::to_string(examples_.size()) + ")");
    pos_ = pos;
  }

 private:
  std::vector<Example> examples_;
  size_t pos_ = 0;
};

}  // namespace

DatasetPtr FromVector(std::vector<Example> examples) {
  return std::make_unique<VectorDataset>(std::move(examples));
}

bool ReadUpTo(Dataset& input, size_t n, std::vector<Example>* out) {
  while (out->size() < n) {
    std::optional<Example> ex = input.Next();
    if (!ex) return false;
    out->push_back(std::move(*ex));
  }
  return true;
}

std::vector<Example> Collect(Dataset& ds, size_t max_examples) {
  std::vector<Example> out;
  while (out.size() < max_examples) {
    auto ex = ds.Next();
    if (!ex) break;
    out.push_back(std::move(*ex));
  }
  return out;
}

}  // namespace t5xx::seqio
