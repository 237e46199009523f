// A test tool for tests/interop/transformers_test.sh: the logits t5xx's
// network computes for a batch, with the parameters of a checkpoint, as
// JSON, so that Python can compare them with Transformers' own.
//
//   t5xx_logits --gin_file=MODEL.gin [--gin.X=V ...] --checkpoint_path=DIR
//               --batch=BATCH.json
//
// BATCH.json: {"encoder_input_tokens": [[ids]], "decoder_input_tokens":
// [[ids]]} (rows of equal length; 0 is padding in the encoder's), and
// optionally "decoder_target_tokens" (the decoder's mask, else all ones).
// Prints {"logits": [B][L][vocab]} (float32 as decimal, 9 significant
// digits). With --grad=PARAM (e.g. encoder.prompt.prompt.prompt) also
// "loss": the summed cross-entropy of decoder_target_tokens, and "grad":
// its gradient with respect to that parameter, flattened (tests/interop/
// prompt_tuning_oracle.py). Exit 2 with the message for bad input.
#include <cstdio>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/autograd.h>

#include "t5xx/config/flags.h"
#include "t5xx/run/inference/inference.h"
#include "t5xx/run/train_setup.h"
#include "t5xx/run/transformers/export.h"
#include "t5xx/util/error.h"
#include "t5xx/util/files/file_utils.h"

namespace {

at::Tensor Rows(const nlohmann::json& j, const char* key) {
  T5XX_CHECK(j.contains(key) && j[key].is_array() && !j[key].empty(),
             std::string("the batch needs ") + key + " (a list of rows)");
  const auto rows = j[key].get<std::vector<std::vector<int64_t>>>();
  at::Tensor t = at::zeros({static_cast<int64_t>(rows.size()),
                            static_cast<int64_t>(rows[0].size())}, at::kInt);
  for (size_t i = 0; i < rows.size(); ++i) {
    T5XX_CHECK(rows[i].size() == rows[0].size(), std::string(key) + ": rows differ in length");
    for (size_t k = 0; k < rows[i].size(); ++k) t[i][k] = static_cast<int32_t>(rows[i][k]);
  }
  return t;
}

int Run(const std::vector<std::string>& args) {
  t5xx::run::LoadedTrainConfig loaded = t5xx::run::NewTrainConfig();
  const std::vector<std::string> rest = t5xx::gin::ParseGinFlags(args, *loaded.config);
  std::map<std::string, std::string> flags;
  for (const std::string& a : rest) {
    const size_t eq = a.find('=');
    T5XX_CHECK(a.rfind("--", 0) == 0 && eq != std::string::npos, "unknown argument " + a);
    flags[a.substr(2, eq - 2)] = a.substr(eq + 1);
  }
  T5XX_CHECK(flags.count("checkpoint_path") && flags.count("batch"),
             "usage: t5xx_logits --gin_file=F --checkpoint_path=D --batch=B.json [--grad=P]");
  const t5xx::run::ModelConfig config = t5xx::run::ReadModelMacro(*loaded.config);
  std::ostringstream log;
  const t5xx::run::InferenceModel m =
      t5xx::run::LoadInferenceModel(config, 1, flags["checkpoint_path"], {}, log);
  const nlohmann::json j = nlohmann::json::parse(t5xx::seqio::ReadFileToString(flags["batch"]));
  t5xx::models::FeatureBatch batch;
  batch["encoder_input_tokens"] = Rows(j, "encoder_input_tokens");
  batch["decoder_input_tokens"] = Rows(j, "decoder_input_tokens");
  // t5x masks the decoder's attention where decoder_target_tokens is 0;
  // all ones: causal attention over every position, as Transformers'
  // decoder without a decoder_attention_mask.
  batch["decoder_target_tokens"] = j.contains("decoder_target_tokens")
                                      ? Rows(j, "decoder_target_tokens")
                                      : at::ones_like(batch["decoder_input_tokens"]);
  batch["decoder_loss_weights"] = at::ones_like(batch["decoder_input_tokens"]);
  at::Tensor param;
  if (flags.count("grad")) {
    param = m.params.Get(flags["grad"]);
    param.requires_grad_(true);
  }
  const at::Tensor logits_graph = m.model->ComputeLogits(m.params, batch, /*train=*/false, nullptr);
  std::string extra;
  if (param.defined()) {
    const at::Tensor targets = batch["decoder_target_tokens"].to(at::kLong);
    const at::Tensor loss =
        -at::log_softmax(logits_graph, -1).gather(-1, targets.unsqueeze(-1)).sum();
    const at::Tensor grad = torch::autograd::grad({loss}, {param})[0].contiguous();
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.9g", loss.item<double>());
    extra = std::string(", \"loss\": ") + buf + ", \"grad\": [";
    const float* g = grad.data_ptr<float>();
    for (int64_t i = 0; i < grad.numel(); ++i) {
      std::snprintf(buf, sizeof(buf), i ? ", %.9g" : "%.9g", g[i]);
      extra += buf;
    }
    extra += "]";
  }
  const at::Tensor logits = logits_graph.detach().contiguous();
  const float* p = logits.data_ptr<float>();
  const int64_t b = logits.size(0), l = logits.size(1), v = logits.size(2);
  std::string out = "{\"logits\": [";
  char buf[32];
  for (int64_t i = 0; i < b; ++i) {
    out += i ? ", [" : "[";
    for (int64_t k = 0; k < l; ++k) {
      out += k ? ", [" : "[";
      for (int64_t c = 0; c < v; ++c) {
        std::snprintf(buf, sizeof(buf), c ? ", %.9g" : "%.9g", p[(i * l + k) * v + c]);
        out += buf;
      }
      out += "]";
    }
    out += "]";
  }
  std::cout << out << "]" << extra << "}\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "t5xx_logits: error: " << e.what() << std::endl;
    return 2;
  }
}
