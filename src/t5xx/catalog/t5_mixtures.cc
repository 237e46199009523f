// t5/data/mixtures.py: GLUE and SuperGLUE proportional mixtures, en_mix,
// all_* , the leave-one-out mixtures, the large supervised and translation
// mixtures, SQuAD + TriviaQA and WSC + DPR.
#include <algorithm>
#include <map>
#include <set>

#include "t5xx/catalog/catalog_builder.h"
#include "t5xx/catalog/glue_utils.h"
#include "t5xx/data/dataset_providers/mixing_rates.h"

namespace t5xx::catalog::internal {
namespace {

using seqio::MixtureEntry;
using seqio::MixtureRate;

// t5.data.rate_num_examples with its defaults: seqio's
// mixing_rate_num_examples (TFDS's example count for an uncached task).
MixtureRate RateNumExamples() { return seqio::MixingRateNumExamplesRate({}); }
// t5.data.rate_unsupervised: 1e6 whatever the task.
MixtureRate RateUnsupervised() {
  return MixtureRate([](const seqio::Task&) { return 1e6; });
}

std::vector<std::string> Names(const std::vector<std::pair<std::string, double>>& weights) {
  std::vector<std::string> out;
  for (const auto& [name, w] : weights) out.push_back(name);
  return out;
}

std::vector<MixtureEntry> Weighted(const std::vector<std::pair<std::string, double>>& weights) {
  std::vector<MixtureEntry> out;
  for (const auto& [name, w] : weights) out.emplace_back(name, MixtureRate(w));
  return out;
}

std::optional<double> WeightOf(const std::string& name) {
  for (const auto* m : {&GlueWeightMapping(), &SuperGlueWeightMapping()}) {
    for (const auto& [n, w] : *m) {
      if (n == name) return w;
    }
  }
  return std::nullopt;
}

// mixtures.py's _dedupe: the GLUE/SuperGLUE weight (halved for GLUE's RTE,
// which SuperGLUE also holds), else rate_num_examples.
MixtureRate Dedupe(const std::string& name) {
  std::optional<double> w = WeightOf(name);
  if (!w) return RateNumExamples();
  const bool glue_rte = name.find("glue") != std::string::npos &&
                        name.find("rte") != std::string::npos;
  return MixtureRate(glue_rte ? *w * 0.5 : *w);
}

// mixtures.py's assign_weight_or_rate_num_examples.
MixtureRate WeightOrRateNumExamples(const std::string& name) {
  std::optional<double> w = WeightOf(name);
  return w ? MixtureRate(*w) : RateNumExamples();
}

}  // namespace

void AddT5Mixtures(const seqio::TaskRegistry& tasks, seqio::MixtureRegistry& mixtures) {
  auto add = [&](const std::string& name, std::vector<MixtureEntry> entries,
                 std::optional<MixtureRate> default_rate = std::nullopt) {
    mixtures.Add(std::make_shared<seqio::Mixture>(name, std::move(entries),
                                                  std::move(default_rate), tasks, mixtures));
  };
  const std::vector<std::string> glue = Names(GlueWeightMapping());
  const std::vector<std::string> super_glue = Names(SuperGlueWeightMapping());
  std::vector<std::string> supervised = glue;
  supervised.insert(supervised.end(), super_glue.begin(), super_glue.end());
  for (const char* t : {"cnn_dailymail_v002", "squad_v010_allanswers", "wmt_t2t_ende_v003",
                        "wmt15_enfr_v003", "wmt16_enro_v003"}) {
    supervised.push_back(t);
  }
  const std::string unsupervised = "c4_v020_unsupervised";

  add("glue_v002_proportional", Weighted(GlueWeightMapping()));
  add("super_glue_v102_proportional", Weighted(SuperGlueWeightMapping()));
  add("super_glue_v102_proportional_sentinel", Weighted(SuperGlueWeightMappingSentinel()));
  {
    std::vector<MixtureEntry> mnli;
    for (const std::string& t : glue) {
      if (t.find("mnli") != std::string::npos) mnli.emplace_back(t);
    }
    add("glue_mnli_and_dev_v002", std::move(mnli), MixtureRate(1.0));
  }
  {
    std::vector<MixtureEntry> en{{unsupervised, RateUnsupervised()}};
    for (const std::string& t : glue) en.emplace_back(t);
    for (const std::string& t : super_glue) en.emplace_back(t);
    en.emplace_back("squad_v010_allanswers");
    add("en_mix", std::move(en), RateNumExamples());
  }
  {
    std::vector<MixtureEntry> all(supervised.begin(), supervised.end());
    all.emplace_back(unsupervised);
    add("all_equal", std::move(all), MixtureRate(1.0));
  }
  {
    std::vector<MixtureEntry> all;
    for (const std::string& t : supervised) all.emplace_back(t, Dedupe(t));
    all.emplace_back(unsupervised, Dedupe(unsupervised));
    add("all_proportional", std::move(all));
  }
  {
    std::vector<MixtureEntry> all{{unsupervised, RateUnsupervised()}};
    for (const std::string& t : supervised) all.emplace_back(t, Dedupe(t));
    add("all_mix", std::move(all));
  }
  for (const std::string finetune :
       {"glue_v002_proportional", "super_glue_v102_proportional", "cnn_dailymail_v002",
        "squad_v010_allanswers", "wmt_t2t_ende_v003", "wmt15_enfr_v003", "wmt16_enro_v003"}) {
    std::set<std::string> names(supervised.begin(), supervised.end());
    names.insert(unsupervised);
    std::vector<MixtureEntry> entries;
    if (finetune == "glue_v002_proportional" || finetune == "super_glue_v102_proportional") {
      // The whole benchmark is the one task left out.
      for (const std::string& t : finetune[0] == 'g' ? glue : super_glue) names.erase(t);
      for (const std::string& t : names) entries.emplace_back(t, WeightOrRateNumExamples(t));
    } else {
      names.erase(finetune);
      for (const std::string& t : names) entries.emplace_back(t, Dedupe(t));
    }
    add("leave_one_out_" + finetune, std::move(entries));
  }
  const std::vector<std::string> translation = {"wmt_t2t_ende_v003", "wmt15_enfr_v003"};
  std::vector<std::string> large = translation;
  large.push_back("cnn_dailymail_v002");
  add("large_supervised_equal", {large.begin(), large.end()}, MixtureRate(1.0));
  add("large_supervised_proportional", {large.begin(), large.end()}, RateNumExamples());
  add("large_translation_equal", {translation.begin(), translation.end()}, MixtureRate(1.0));
  add("squad_trivia_qa_equal", {"squad_v010_allanswers", "trivia_qa_v010"}, MixtureRate(1.0));
  add("wsc_dpr_simple_proportional",
      {{"dpr_v001_simple", MixtureRate(*WeightOf("dpr_v001_simple"))},
       {"super_glue_wsc_v102_simple_train",
        MixtureRate(*WeightOf("super_glue_wsc_v102_simple_train"))},
       {"super_glue_wsc_v102_simple_eval",
        MixtureRate(*WeightOf("super_glue_wsc_v102_simple_eval"))}});
}

}  // namespace t5xx::catalog::internal
