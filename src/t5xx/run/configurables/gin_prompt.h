// google-research/prompt-tuning's configurables as t5xx reads them for t5x's
// own network (gin_prompt.cc): the prompt (prompt_tuning.prompts.Prompt in
// prompt_tuning.train.prompts.Prompt), its initialisers (flax's
// linen.initializers.uniform, prompts.from_array over prompts.np_load,
// prompts.from_sample_of_embeddings over prompts.t5x_load), and
// prompt_tuning.train.utils.Checkpointer (the prompt saved alone as numpy
// files). prompt-tuning attaches the prompt to flaxformer's encoder
// (prompt_layers.PromptEncoder); t5x's network.Transformer has no such
// parameter, so t5xx adds one: network.Transformer.prompt =
// @train_prompts.Prompt(). flaxformer's architectures are not read.
#pragma once

#include <string>
#include <vector>

#include "t5xx/config/config.h"
#include "t5xx/config/registry.h"
#include "t5xx/models/networks/t5_config.h"

namespace t5xx::run {

// Registers the configurables above (called by RegisterModelConfigurables)
// and refuses imports of flaxformer and prompt_tuning.train.layers by name
// (Registry::RefuseModule).
void RegisterPromptConfigurables(gin::Registry& registry);

// network.Transformer.prompt (called in `module_scope`) into t.prompt_length
// and t.prompt_init_values / prompt_init_scale; nothing when it is None.
// Reads a from_array file or the embedding of a t5x_load checkpoint now.
// Throws t5xx::Error naming the gin binding: another combine than
// prefix_prompt, a prompt dtype other than the network's, a file or
// checkpoint variable that cannot be read or has another shape (as
// prompt-tuning's ValueError), population_size <= 0.
void ReadPrompt(gin::Config& config, const char* transformer, const std::string& module_scope,
                models::T5Config& t);

// utils.SaveCheckpointConfig.checkpointer_cls = @prompt_utils.Checkpointer:
// true and its save_paths (regexes, fully matched against 'a/b/c' parameter
// paths) when `cls` names it; false otherwise.
bool ReadPromptCheckpointer(gin::Config& config, const gin::Value& cls, const std::string& scope,
                            std::vector<std::string>* save_paths);

}  // namespace t5xx::run
