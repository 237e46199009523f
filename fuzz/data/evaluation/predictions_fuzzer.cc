// Fuzz target: the predictions file of `t5xx data score`
// (data/evaluation/evaluation.h: ReadPredictionsFile), then t5's metrics over what it
// read, as a task's metric_fns see it: BLEU (tokenizers intl, 13a, zh),
// ROUGE with the stemmer, edit distance, SQuAD's normalisation, and
// string_to_float with Pearson and Spearman correlation. The targets are
// the same lines in reverse order. Input: the predictions file.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "t5xx/data/dataset_providers/postprocessors.h"
#include "t5xx/data/evaluation/evaluation.h"
#include "t5xx/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace t5xx;
  using seqio::PostprocessedValue;
  fuzz::ClearScratchDir();
  const std::string path = fuzz::WriteScratchFile(
      "predictions.txt", fuzz::InputBytes(data, size));
  std::vector<std::string> lines;
  try {
    lines = seqio::ReadPredictionsFile(path);
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {path});
    return 0;
  }
  if (lines.empty()) return 0;
  std::vector<PostprocessedValue> predictions, targets, pred_floats, target_floats;
  std::vector<PostprocessedValue> answer_lists;
  const seqio::PostprocessFn to_float = seqio::postprocessors::string_to_float();
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& target = lines[lines.size() - 1 - i];
    predictions.emplace_back(lines[i]);
    targets.emplace_back(target);
    pred_floats.push_back(to_float(lines[i], {}, false));
    target_floats.push_back(to_float(target, {}, true));
    answer_lists.emplace_back(std::vector<std::string>{target, lines[i]});
  }
  try {
    for (const char* tokenizer : {"intl", "13a", "zh", "none"}) {
      seqio::metric_fns::bleu(tokenizer)(targets, predictions);
    }
    seqio::metric_fns::rouge({"rouge1", "rouge2", "rougeL", "rougeLsum"}, true)(targets,
                                                                                predictions);
    seqio::metric_fns::edit_distance()(targets, predictions);
    seqio::metric_fns::squad()(answer_lists, predictions);
    seqio::metric_fns::sequence_accuracy()(targets, predictions);
    seqio::metric_fns::pearson_corrcoef()(target_floats, pred_floats);
    seqio::metric_fns::spearman_corrcoef()(target_floats, pred_floats);
  } catch (const Error& e) {
    fuzz::ExpectNamedError(e.what(), {"metrics."});
  }
  return 0;
}
