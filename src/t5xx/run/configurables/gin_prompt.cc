// See gin_prompt.h. Behaviour source: prompt_tuning/prompts.py (Prompt,
// from_array, np_load, from_sample_of_embeddings, t5x_load),
// prompt_tuning/train/prompts.py (Prompt, prefix_prompt) and
// prompt_tuning/train/utils.py (Checkpointer).
#include "t5xx/run/configurables/gin_prompt.h"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>

#include "t5xx/checkpoints/npy.h"
#include "t5xx/checkpoints/t5x/checkpoints.h"
#include "t5xx/config/reading.h"
#include "t5xx/config/spec_builders.h"
#include "t5xx/util/error.h"

namespace t5xx::run {
namespace {

using gin::Value;

constexpr char kTrainPrompt[] = "prompt_tuning.train.prompts.Prompt";
constexpr char kPrefixPrompt[] = "prompt_tuning.train.prompts.prefix_prompt";
constexpr char kPrompt[] = "prompt_tuning.prompts.Prompt";
constexpr char kUniform[] = "flax.linen.initializers.uniform";
constexpr char kFromArray[] = "prompt_tuning.prompts.from_array";
constexpr char kNpLoad[] = "prompt_tuning.prompts.np_load";
constexpr char kFromSample[] = "prompt_tuning.prompts.from_sample_of_embeddings";
constexpr char kT5xLoad[] = "prompt_tuning.prompts.t5x_load";
constexpr char kPromptCheckpointer[] = "prompt_tuning.train.utils.Checkpointer";

// The rows of the embedding prompts.from_sample_of_embeddings draws: the
// first population_size rows of `variable_path` in the t5x checkpoint, drawn
// without replacement (with replacement when the prompt is longer), by
// t5xx's generator seeded with 0 -- JAX's jax.random.choice draws other rows.
std::vector<float> SampleEmbeddings(gin::Config& c, const std::string& scope, int64_t length,
                                    int64_t emb_dim) {
  const Value embeddings = c.Query(kFromSample, "embeddings", scope);
  const std::string ls = gin::ExpectReference(embeddings, kT5xLoad, true, scope);
  const Value path = c.Query(kT5xLoad, "checkpoint_path", ls);
  const Value var = c.Query(kT5xLoad, "variable_path", ls);
  std::string dotted = var.AsString();
  if (dotted.rfind("target/", 0) == 0) dotted = dotted.substr(7);
  if (!dotted.empty() && dotted[0] == '/') dotted = dotted.substr(1);
  std::replace(dotted.begin(), dotted.end(), '/', '.');
  std::unique_ptr<checkpoints::CheckpointReader> reader;
  try {
    reader = std::make_unique<checkpoints::CheckpointReader>(path.AsString());
  } catch (const Error& e) {
    throw Error(gin::Where(path) + ": cannot open the checkpoint " + path.AsString() + ": " +
                e.what());
  }
  checkpoints::LoadedArray a;
  try {
    a = reader->Read("target." + dotted);
  } catch (const Error& e) {
    throw Error(gin::Where(var) + ": cannot read '" + var.AsString() + "' from the checkpoint " +
                path.AsString() + ": " + e.what());
  }
  T5XX_CHECK(a.shape.size() == 2 && a.dtype == checkpoints::DType::kFloat32,
             gin::Where(var) + ": '" + var.AsString() + "' is " +
                 checkpoints::DTypeName(a.dtype) + " " + checkpoints::ShapeString(a.shape) +
                 "; the embeddings to sample must be float32 [vocab, embed]");
  T5XX_CHECK(a.shape[1] == emb_dim,
             gin::Where(var) + ": shape mismatch between the number of features in the "
                               "embeddings: " + std::to_string(a.shape[1]) +
                 " and the requested prompt shape " + std::to_string(emb_dim));
  const Value pop = c.Query(kFromSample, "population_size", scope);
  int64_t population = pop.is_none() ? a.shape[0] : pop.AsInt();
  T5XX_CHECK(population > 0, gin::Where(pop) + ": cannot sample from a population less than "
                                               "one, got " + std::to_string(population));
  if (population > a.shape[0]) {  // prompt-tuning: a warning, then clipped
    std::cerr << "t5xx: warning: " << gin::Where(pop) << ": population_size " << population
              << " is larger than the " << a.shape[0] << " embeddings; drawing from all of them"
              << std::endl;
    population = a.shape[0];
  }
  std::vector<int64_t> rows(static_cast<size_t>(population));
  std::iota(rows.begin(), rows.end(), 0);
  std::mt19937_64 gen(0);
  std::vector<int64_t> index;
  if (length > population) {
    std::uniform_int_distribution<int64_t> pick(0, population - 1);
    for (int64_t i = 0; i < length; ++i) index.push_back(pick(gen));
  } else {
    std::shuffle(rows.begin(), rows.end(), gen);
    index.assign(rows.begin(), rows.begin() + length);
  }
  std::vector<float> out(static_cast<size_t>(length * emb_dim));
  const float* table = reinterpret_cast<const float*>(a.bytes.data());
  for (int64_t i = 0; i < length; ++i) {
    std::memcpy(&out[i * emb_dim], table + index[i] * emb_dim, emb_dim * sizeof(float));
  }
  return out;
}

}  // namespace

void RegisterPromptConfigurables(gin::Registry& r) {
  using namespace gin::spec;
  // prompt-tuning's own gin files build on flaxformer's architectures.
  const std::string flaxformer =
      "is flaxformer's (or prompt-tuning's layers over it): t5xx runs t5x's own networks "
      "(t5x.examples.t5.network, scalable_t5, decoder_only), not flaxformer's architectures; "
      "use a t5x model gin (prompt tuning: configs/prompt_tuning/t5_1_1_prompt.gin; "
      "docs/capabilities.md)";
  r.RefuseModule("flaxformer", flaxformer);
  r.RefuseModule("prompt_tuning.train.layers", flaxformer);
  r.Register({kTrainPrompt,
              {Required("prompt", T::kReference, "@prompts.Prompt(): the prompt's variable."),
               Optional("combine", T::kOptionalReference, None(),
                        "None or @train_prompts.prefix_prompt (the default).")},
              "prompt-tuning's prompt, prepended to the embedded inputs."});
  r.Register({kPrefixPrompt, {}, "Concatenates the prompt in front of the embedded inputs."});
  r.Register({kPrompt,
              {Required("length", T::kInt, "The prompt's length P."),
               Optional("prompt_init", T::kOptionalReference, None(),
                        "@linen.initializers.uniform() (None: uniform(0.01), flax's default), "
                        "@prompts.from_array() or @prompts.from_sample_of_embeddings()."),
               Optional("axis_names", T::kAny, None(),
                        "('prompt', 'prompt_embed') only: the prompt is replicated."),
               Optional("dtype", T::kString, S("float32"), "The network's dtype.")},
              "prompt-tuning's learned prompt, a [length, embed] parameter."});
  r.Register({kUniform,
              {Optional("scale", T::kFloat, F(0.01), "Values are drawn from U[0, scale).")},
              "flax's uniform initializer."});
  r.Register({kFromArray,
              {Required("prompt", T::kReference, "@prompts.np_load(): the prompt's value.")},
              "Initializes the prompt with a given [length, embed] array."});
  r.Register({kNpLoad,
              {Required("path", T::kString, "A .npy file, e.g. a numpy checkpoint's "
                                            "encoder.prompt.prompt.prompt."),
               Optional("restore_dtype", T::kAny, None(), "None only.")},
              "Reads a numpy array (numpy.load)."});
  r.Register({kFromSample,
              {Required("embeddings", T::kReference, "@prompts.t5x_load(): [vocab, embed]."),
               Optional("population_size", T::kOptionalInt, None(),
                        "Draw from the first population_size rows (None: all).")},
              "Initializes the prompt with rows of the embedding table."});
  r.Register({kT5xLoad,
              {Required("checkpoint_path", T::kString, "A t5x checkpoint directory."),
               Required("variable_path", T::kString, "e.g. 'token_embedder/embedding'."),
               Optional("restore_dtype", T::kAny, None(), "None only.")},
              "Reads one variable of a t5x checkpoint."});
  r.Register({kPromptCheckpointer,
              {Required("save_paths", T::kList,
                        "Regexes of the parameters also saved as numpy files, e.g. "
                        "['.*/prompt/.*'].")},
              "t5x's Checkpointer that first saves the matching parameters as numpy files "
              "under MODEL_DIR/numpy_checkpoints/checkpoint_<step>/."});
}

void ReadPrompt(gin::Config& c, const char* transformer, const std::string& module_scope,
                models::T5Config& t) {
  const Value ref = c.Query(transformer, "prompt", module_scope);
  if (ref.is_none()) return;
  const std::string ts = gin::ExpectReference(ref, kTrainPrompt, true, module_scope);
  const Value combine = c.Query(kTrainPrompt, "combine", ts);
  if (!combine.is_none()) gin::ExpectReference(combine, kPrefixPrompt, false, ts);
  const std::string ps = gin::ExpectReference(c.Query(kTrainPrompt, "prompt", ts), kPrompt, true, ts);
  const Value length = c.Query(kPrompt, "length", ps);
  t.prompt_length = gin::AtLeast(length, 1);
  const Value axes = c.Query(kPrompt, "axis_names", ps);
  gin::Refuse(!axes.is_none() && axes.ToGinString() != "('prompt', 'prompt_embed')", axes,
              "t5xx keeps the prompt replicated, with the axes ('prompt', 'prompt_embed')");
  const Value dtype = c.Query(kPrompt, "dtype", ps);
  T5XX_CHECK(dtype.AsString() == t.dtype,
             gin::Where(dtype) + " = '" + dtype.AsString() + "': the prompt is cast to the "
                                 "network's activation dtype '" + t.dtype + "'; bind the same");
  const Value init = c.Query(kPrompt, "prompt_init", ps);
  if (init.is_none()) return;
  const std::string& kind = gin::ExpectOneOf(init, {kUniform, kFromArray, kFromSample},
                                             "a prompt initializer");
  const std::string is = gin::ExpectReference(init, kind, true, ps);
  if (kind == kUniform) {
    t.prompt_init_scale = c.Query(kUniform, "scale", is).AsFloat();
  } else if (kind == kFromArray) {
    const std::string ns = gin::ExpectReference(c.Query(kFromArray, "prompt", is), kNpLoad, true, is);
    const Value path = c.Query(kNpLoad, "path", ns);
    gin::Refuse(!c.Query(kNpLoad, "restore_dtype", ns).is_none(), c.Query(kNpLoad, "restore_dtype", ns),
                "the prompt is float32; remove restore_dtype");
    checkpoints::NpyArray a;
    try {
      a = checkpoints::ReadNpy(path.AsString());
    } catch (const Error& e) {
      throw Error(gin::Where(path) + ": " + e.what());
    }
    T5XX_CHECK(a.shape == std::vector<int64_t>({t.prompt_length, t.emb_dim}),
               gin::Where(path) + ": the prompt loaded from disk has shape " +
                   checkpoints::ShapeString(a.shape) + " while the config says it should be " +
                   checkpoints::ShapeString({t.prompt_length, t.emb_dim}) +
                   " (prompts.Prompt.length x the network's emb_dim)");
    t.prompt_init_values = std::move(a.values);
  } else {
    t.prompt_init_values = SampleEmbeddings(c, is, t.prompt_length, t.emb_dim);
  }
}

bool ReadPromptCheckpointer(gin::Config& c, const Value& cls, const std::string& scope,
                            std::vector<std::string>* save_paths) {
  if (cls.kind() != Value::Kind::kReference || cls.reference_name() != kPromptCheckpointer) {
    return false;
  }
  const std::string s = gin::ExpectReference(cls, kPromptCheckpointer, false, scope);
  const Value paths = c.Query(kPromptCheckpointer, "save_paths", s);
  *save_paths = gin::StringList(paths);
  T5XX_CHECK(!save_paths->empty(), gin::Where(paths) + " is empty: no parameter would be saved");
  return true;
}

}  // namespace t5xx::run
