// t5's task and mixture catalog -- what `import t5.data.mixtures` (or
// t5.data.tasks) registers in Python: the 60 tasks of t5/data/tasks.py (c4
// pretraining objectives, GLUE, SuperGLUE, WSC/DPR, CNN/DailyMail, WMT,
// SQuAD, TriviaQA) and the 20 mixtures of t5/data/mixtures.py, with t5's
// names, TFDS sources (seqio.TfdsDataSource: data/tfds/), preprocessors,
// output features, postprocessors and metric functions (behaviour source:
// google-research/text-to-text-transfer-transformer at e081111, t5/data/
// {tasks,mixtures,glue_utils,utils}.py; checked against it by
// tests/catalog/).
//
// t5's tasks tokenize with its default vocabulary,
// gs://t5-data/vocabs/cc_all.32000/sentencepiece.model with 100 extra ids
// (the prefix-LM objective and full-LM tasks:
// gs://t5-data/vocabs/cc_all.32000.100extra/sentencepiece.model); t5xx
// reads its copy under the data directory (util/files/remote_copy.h:
// <data_dir>/t5-data/vocabs/...). Without the copy the tasks are still
// registered, and reading one says which file to copy where.
// Framework-free: no libtorch.
#pragma once

#include <string>
#include <vector>

#include "t5xx/data/dataset_providers/mixture.h"
#include "t5xx/data/dataset_providers/task.h"

namespace t5xx::catalog {

struct T5CatalogOptions {
  // Where the copies of gs://t5-data/... files are looked for.
  std::string data_dir;
  // The TFDS sources' bad-record policy (--skip_bad_records).
  bool skip_bad_records = false;
};

// Whether importing `module` registers the catalog: "t5.data.tasks",
// "t5.data.mixtures" (t5x's gins: `import t5.data.mixtures`,
// MIXTURE_OR_TASK_MODULE = "t5.data.mixtures") and "t5.data" itself.
bool IsT5CatalogModule(const std::string& module);

// Registers every task of t5.data.tasks into `tasks` and every mixture of
// t5.data.mixtures into `mixtures`, as importing t5.data.mixtures does.
// Registering twice into the same registries does nothing the second time.
// Throws t5xx::Error when a name is already registered by something else
// (naming it: a gin-defined task with a catalog name, say).
void RegisterT5Catalog(seqio::TaskRegistry& tasks, seqio::MixtureRegistry& mixtures,
                       const T5CatalogOptions& options);

// The names RegisterT5Catalog registers, sorted (for hints in errors).
std::vector<std::string> T5CatalogTaskNames();
std::vector<std::string> T5CatalogMixtureNames();

}  // namespace t5xx::catalog
