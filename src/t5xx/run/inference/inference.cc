// See inference.h.
#include "t5xx/run/inference/inference.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/device/device.h"
#include "t5xx/kernels/skinny_matmul.h"
#include "t5xx/models/few_row_decoder.h"
#include "t5xx/run/model.h"
#include "t5xx/run/restore.h"
#include "t5xx/storage/remote_copy.h"
#include "t5xx/trainer/batch_conversion.h"
#include "t5xx/util/error.h"
#include "t5xx/util/hash.h"

namespace t5xx::run {

InferMode ParseInferMode(const std::string& mode) {
  if (mode == "predict") return InferMode::kPredict;
  if (mode == "score") return InferMode::kScore;
  if (mode == "predict_with_aux") return InferMode::kPredictWithAux;
  throw Error("infer.mode = '" + mode + "': use 'predict', 'score' or 'predict_with_aux'");
}

InferenceModel LoadInferenceModel(const ModelConfig& config, int32_t eos_id,
                                  const std::string& checkpoint_dir,
                                  trainer::RestoreOptions options, std::ostream& log,
                                  at::Device device,
                                  partitioning::PjitPartitioner* partitioner, uint64_t init_seed,
                                  int64_t decode_batch_size) {
  InferenceModel out;
  out.model = CreateModel(config);
  out.model->set_eos_id(eos_id);
  const bool sharded = partitioner && partitioner->mesh().size() > 1;
  // The checkpoint fills the parameters: t5x's initialisers (most of the
  // start-up: a truncated normal per kernel) run only for those it lacks,
  // below. scalable_t5's scanned layout is read through other keys: there
  // every parameter is initialised first, as before.
  const bool deferred = !config.scan_layout().has_value();
  out.params = InitParams(*out.model, init_seed, sharded ? partitioner : nullptr, deferred);
  out.params.To(device);
  // t5x's eval and infer restore the parameters only (strict=False): the
  // optimizer state in the checkpoint is not read.
  options.strict = false;
  options.scan = config.scan_layout();
  if (sharded) {
    options.owned_slice = trainer::OwnedSlices(partitioner->DescribeVariables(out.params, {}));
  }
  const trainer::RestoreReport report =
      trainer::RestoreTrainState(checkpoint_dir, out.params, /*optimizer=*/nullptr, options);
  if (deferred && !report.unrestored_params->empty()) {
    // fallback_to_scratch or assignment_map None: their fresh values, as a
    // model initialised before the restore would have kept them.
    models::ParamStore fresh = InitParams(*out.model, init_seed, sharded ? partitioner : nullptr);
    fresh.To(device);
    const at::NoGradGuard no_grad;
    for (const std::string& name : *report.unrestored_params) {
      out.params.GetParam(name).value.copy_(fresh.Get(name));
    }
  }
  // A decode step's few-row products stream the decoder's kernels faster
  // transposed (models::StoreKernelsTransposed). skinny_matmul.h gives the
  // same bits for both layouts, sgemm need not: so only where nothing but
  // those products reads them, i.e. encoder-decoder decoding over the cache
  // with at most kSkinnyMatmulMaxRows rows a step and no beam search past
  // the targets' length (its extra rows rerun the decoder through sgemm).
  // Whole kernels, on every process alike.
  const int64_t rows = decode_batch_size * config.num_decodes;
  const bool past_length = config.decode_fn.kind == decoding::DecodeFnConfig::Kind::kBeamSearch &&
                           config.decode_fn.beam_search.max_decode_len > 0;
  if (device.is_cpu() && config.kind == ModelKind::kEncoderDecoder && rows >= 1 &&
      rows <= models::kSkinnyMatmulMaxRows && !past_length) {
    models::StoreKernelsTransposed(out.params, models::DecodeStepKernel);
  }
  out.step = report.step;
  out.checkpoint_dir = checkpoint_dir;
  log << "[restore] " << WithUrls(checkpoint_dir) << ": step " << report.step << ", parameters only, "
      << report.bytes_read / (1024.0 * 1024.0) << " MiB read" << std::endl;
  return out;
}

std::unique_ptr<models::Int8Weights> Int8WeightsFor(const RunOptions& options,
                                                    const ModelConfig& config,
                                                    const InferenceModel& m, std::ostream& log) {
  if (!options.int8_weights) return nullptr;
  const bool encoder_decoder = config.kind == ModelKind::kEncoderDecoder;
  const std::string& dtype =
      encoder_decoder ? config.t5_config.dtype : config.decoder_only_config.dtype;
  T5XX_CHECK(dtype == "float32",
             std::string("--int8_weights replaces float32 matmuls, and ") +
                 (encoder_decoder ? "network.T5Config.dtype" : "network.TransformerConfig.dtype") +
                 " is '" + dtype + "'; set it to 'float32' or drop the flag");
  for (const models::Param& p : m.params.params()) {
    if (!p.value.defined()) continue;
    T5XX_CHECK(p.value.is_cpu(),
               "--int8_weights: the int8 kernels run on the CPU, and parameter '" + p.name +
                   "' is on " + p.value.device().str() + "; use --device=cpu or drop the flag");
    T5XX_CHECK(p.value.scalar_type() == at::kFloat,
               "--int8_weights quantizes float32 parameters, and '" + p.name + "' is " +
                   std::string(c10::toString(p.value.scalar_type())) +
                   "; restore it as float32 (utils.RestoreCheckpointConfig.dtype = 'float32') "
                   "or drop the flag");
  }
  log << "[restore] --int8_weights: kernels quantized to int8 per output column on first use, "
         "activations per row (docs/inference_eval.md)"
      << std::endl;
  return std::make_unique<models::Int8Weights>(m.params);
}

void LogInt8Weights(const models::Int8Weights* int8, const std::string& scope, std::ostream& log) {
  if (!int8) return;
  log << "[" << scope << "] --int8_weights: " << int8->quantized()
      << " kernels multiplied in int8 (" << int8->quantized_bytes() / (1024.0 * 1024.0) << " MiB)"
      << std::endl;
}

std::vector<std::string> CheckpointsToRestore(const RestoreCheckpointConfig& r) {
  std::vector<std::string> dirs;
  if (r.mode == "specific") {
    for (const std::string& p : r.paths) {
      T5XX_CHECK(checkpoints::IsCheckpointDir(p),
                 r.where + ": '" + p + "' is not a checkpoint (neither t5x's legacy " + p +
                     "/checkpoint index nor Orbax's " + p +
                     "/state/manifest.ocdbt); give a checkpoint_<N> directory, or set "
                     "utils.RestoreCheckpointConfig.mode = 'latest' and a MODEL_DIR");
      dirs.push_back(p);
    }
    return dirs;
  }
  CheckRestoreDirectories(r);
  std::vector<std::pair<int64_t, std::string>> all;
  for (const std::string& p : r.paths) {
    for (int64_t step : checkpoints::ListCheckpointSteps(p)) {
      all.emplace_back(step, checkpoints::CheckpointDir(p, step));
    }
    if (r.mode == "latest" && !all.empty()) return {all.back().second};
  }
  T5XX_CHECK(!all.empty(), r.where + ": no checkpoint_<N> directory in '" + r.paths.front() +
                               "' (mode '" + r.mode + "'); train one first or give a "
                               "checkpoint directory with mode 'specific'");
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [step, dir] : all) dirs.push_back(dir);
  return dirs;
}

void CreateOutputDir(const std::string& dir, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  T5XX_CHECK(!ec, what + " = '" + dir + "' cannot be created: " + ec.message() +
                      "; choose a writable directory");
  const std::string probe = dir + "/.t5xx_write_test";
  {
    std::ofstream f(probe);
    T5XX_CHECK(f.good(), what + " = '" + dir + "' is not writable; choose a writable directory");
  }
  std::filesystem::remove(probe, ec);
}

void CheckOutputDirUsable(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path whole = fs::absolute(dir, ec);
  fs::path p = whole;
  T5XX_CHECK(!ec && !dir.empty(), what + " = '" + dir + "' is not a usable path; choose a "
                                         "writable directory");
  // The nearest part of the path that exists.
  while (!fs::exists(fs::symlink_status(p, ec)) && p.has_parent_path() && p != p.parent_path()) {
    p = p.parent_path();
  }
  T5XX_CHECK(fs::is_directory(p, ec),
             what + " = '" + dir + "' cannot be created: " + p.string() +
                 " is not a directory; choose a writable directory");
  T5XX_CHECK(::access(p.c_str(), W_OK) == 0,
             what + " = '" + dir + "' " +
                 (p == whole ? std::string("is not writable")
                                         : "cannot be created: " + p.string() + " is not writable") +
                 "; choose a writable directory");
}

seqio::VocabularyPtr TargetsVocabulary(const std::string& name) {
  const seqio::OutputFeatures& f = seqio::GetMixtureOrTask(name)->output_features();
  auto it = f.find("targets");
  T5XX_CHECK(it != f.end() && it->second.vocabulary,
             "task or mixture '" + name + "' has no 'targets' output feature to decode "
             "predictions with");
  return it->second.vocabulary;
}

seqio::FeatureLengths LongestLengths(const std::vector<seqio::Example>& examples,
                                     const std::vector<std::string>& features) {
  seqio::FeatureLengths lengths;
  for (const std::string& f : features) {
    int64_t longest = 1;
    for (const seqio::Example& ex : examples) {
      auto it = ex.find(f);
      if (it == ex.end()) continue;
      if (const auto* t = std::get_if<seqio::Tokens>(&it->second)) {
        longest = std::max<int64_t>(longest, static_cast<int64_t>(t->size()));
      }
    }
    lengths[f] = longest;
  }
  return lengths;
}

namespace {

// The converted examples [begin, end) as one batch of batch_size rows, rows
// past the examples all zeros (t5x pads the last batch of infer_fn alike).
models::FeatureBatch MakeBatch(const std::vector<seqio::Example>& converted, size_t begin,
                               size_t end, int64_t batch_size) {
  seqio::Batch b;
  b.batch_size = batch_size;
  const seqio::Example& first = converted[begin];
  for (const auto& [name, value] : first) {
    const auto& t = std::get<seqio::Tokens>(value);
    b.lengths[name] = static_cast<int64_t>(t.size());
    b.features[name].assign(static_cast<size_t>(batch_size) * t.size(), 0);
  }
  for (size_t i = begin; i < end; ++i) {
    for (auto& [name, rows] : b.features) {
      const seqio::Tokens& t = seqio::GetTokens(converted[i], name);
      std::copy(t.begin(), t.end(), rows.begin() + (i - begin) * t.size());
    }
  }
  return trainer::ToFeatureBatch(b);
}

std::vector<int32_t> Row(const at::Tensor& row) {
  const at::Tensor r = row.to(at::kInt).contiguous();
  return std::vector<int32_t>(r.data_ptr<int32_t>(), r.data_ptr<int32_t>() + r.numel());
}

// Appends the outputs of `batch`'s first `rows` rows to `out`; decoding
// draws from a generator seeded with `seed`.
void InferBatch(const models::BaseTransformerModel& model, const models::ParamStore& params,
                const ModelConfig& config, const models::FeatureBatch& batch, size_t rows,
                InferMode mode, uint64_t seed, std::vector<ExampleInference>& out) {
  const int64_t n = static_cast<int64_t>(rows);
  if (mode == InferMode::kScore) {
    const at::Tensor scores =
        model.ScoreBatch(params, batch).sequence_scores.to(at::kCPU, at::kDouble).contiguous();
    for (int64_t r = 0; r < n; ++r) {
      ExampleInference e;
      e.scores = {scores[r].item<double>()};
      out.push_back(std::move(e));
    }
    return;
  }
  at::Generator rng = device::MakeGenerator(seed, batch.begin()->second.device());
  const models::PredictionsWithAux p = model.PredictBatchWithAux(
      params, batch, &rng, config.return_all_decodes, config.num_decodes);
  const at::Tensor scores = p.aux.at("scores").to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor predictions = p.predictions.to(at::kCPU);
  for (int64_t r = 0; r < n; ++r) {
    ExampleInference e;
    if (config.return_all_decodes) {  // [B, num_decodes, L], [B, num_decodes]
      for (int64_t d = 0; d < predictions.size(1); ++d) {
        e.all_decodes.push_back(Row(predictions[r][d]));
        e.scores.push_back(scores[r][d].item<double>());
      }
      e.tokens = e.all_decodes.back();
    } else {  // [B, L], [B]
      e.tokens = Row(predictions[r]);
      e.scores = {scores[r].item<double>()};
    }
    out.push_back(std::move(e));
  }
}

}  // namespace

std::vector<ExampleInference> InferExamples(const models::BaseTransformerModel& model,
                                            const models::ParamStore& params,
                                            const ModelConfig& config,
                                            const std::vector<seqio::Example>& examples,
                                            const seqio::FeatureLengths& lengths,
                                            int64_t batch_size, InferMode mode, uint64_t seed,
                                            const InferenceReplicas& replicas) {
  T5XX_CHECK(batch_size >= 1, "the inference batch size must be >= 1");
  std::vector<ExampleInference> out;
  if (examples.empty()) return out;
  const std::shared_ptr<seqio::FeatureConverter> converter =
      model.CreateFeatureConverter(/*pack=*/false, lengths);
  const std::vector<seqio::Example> converted = converter->Convert(examples, lengths);
  T5XX_CHECK(converted.size() == examples.size(),
             "the feature converter made " + std::to_string(converted.size()) +
                 " model examples of " + std::to_string(examples.size()) +
                 " task examples; inference needs one each (no packing)");
  const at::Device device =
      params.params().empty() ? at::Device(at::kCPU) : params.params().front().value.device();
  const size_t rows = static_cast<size_t>(batch_size);
  for (size_t begin = rows * static_cast<size_t>(replicas.index), b = replicas.index;
       begin < converted.size(); begin += rows * replicas.count, b += replicas.count) {
    const size_t end = std::min(converted.size(), begin + rows);
    const models::FeatureBatch batch =
        trainer::ToDevice(MakeBatch(converted, begin, end, batch_size), device);
    InferBatch(model, params, config, batch, end - begin, mode, HashSeed(seed, b), out);
  }
  return GatherInferences(replicas, out, converted.size(), rows);
  return out;
}

}  // namespace t5xx::run
