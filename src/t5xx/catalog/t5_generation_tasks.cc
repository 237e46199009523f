// t5/data/tasks.py's generation tasks: CNN/DailyMail summarization, WMT
// translation, SQuAD and TriviaQA question answering.
#include <utility>

#include "t5xx/catalog/catalog_builder.h"
#include "t5xx/data/dataset_providers/postprocessors.h"

namespace t5xx::catalog::internal {
namespace {

using nlohmann::json;

// preprocessor -> tokenize -> placeholder -> append_eos_after_trim.
std::vector<Step> TextTask(Step preprocessor) {
  return {std::move(preprocessor), {"seqio.preprocessors.tokenize"}, {kPlaceholder},
          {"seqio.preprocessors.append_eos_after_trim"}};
}

}  // namespace

void AddGenerationTasks(CatalogBuilder& b) {
  namespace mf = seqio::metric_fns;
  namespace pp = seqio::postprocessors;
  const seqio::OutputFeatures& features = b.default_output_features();
  b.AddTask({"cnn_dailymail_v002", "cnn_dailymail:3.4.0", {},
             TextTask({"t5.data.preprocessors.summarize",
                       {{"article_key", "article"}, {"summary_key", "highlights"}}}),
             features, nullptr, {mf::rouge()}});

  // TFDS's WMT configs name the pair (source, English) as "xx-en"; t5
  // translates English -> xx and names the task after that direction.
  struct Wmt {
    const char* year;
    const char* config;
  };
  for (const Wmt& w : {Wmt{"14", "de-en"}, Wmt{"14", "fr-en"}, Wmt{"16", "ro-en"},
                       Wmt{"15", "fr-en"}, Wmt{"19", "de-en"}}) {
    const std::string xx = std::string(w.config).substr(0, 2);
    b.AddTask({"wmt" + std::string(w.year) + "_en" + xx + "_v003",
               "wmt" + std::string(w.year) + "_translate/" + w.config + ":1.0.0", {},
               TextTask({"t5.data.preprocessors.translate",
                         {{"source_language", "en"}, {"target_language", xx}}}),
               features, nullptr, {mf::bleu()}});
  }
  b.AddTask({"wmt_t2t_ende_v003", "wmt_t2t_translate/de-en:1.0.0", {},
             TextTask({"t5.data.preprocessors.translate",
                       {{"source_language", "en"}, {"target_language", "de"}}}),
             features, nullptr, {mf::bleu()}});

  const char* squad = "squad/v1.1:3.0.0";
  b.AddTask({"squad_v010_allanswers", squad, {}, TextTask({"t5.data.preprocessors.squad"}),
             features, pp::qa(), {mf::squad()}});
  b.AddTask({"squad_v010_context_free", squad, {},
             TextTask({"t5.data.preprocessors.squad", {{"include_context", false}}}), features,
             pp::qa(), {mf::squad()}});
  b.AddTask({"squad_v010_allanswers_span", squad, {},
             TextTask({"t5.data.preprocessors.squad_span_space_tokenized"}), features,
             pp::span_qa(), {mf::span_squad()}});
  b.AddTask({"squad_v010", squad, {}, TextTask({"t5.data.preprocessors.squad"}), features,
             nullptr, {mf::squad()}});

  b.AddTask({"trivia_qa_v010", "trivia_qa/rc:1.1.0", {},
             {{"t5.data.preprocessors.trivia_qa"},
              {"seqio.preprocessors.tokenize"},
              {kPlaceholder},
              {"t5.data.preprocessors.trivia_qa_truncate_inputs"},
              {"seqio.preprocessors.append_eos_after_trim"}},
             features, nullptr, {}});
}

}  // namespace t5xx::catalog::internal
