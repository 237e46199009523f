// optimizers.MultiOptimizer (t5x/optimizers.py): the parameters a
// traversal selects get exactly the updates their optimizer gives them on
// their own; the rest stay bitwise as they were and have no state; the
// state resumes; overlapping and empty traversals are refused as t5x
// refuses them.
#include "t5xx/optim/multi_optimizer.h"

#include <gtest/gtest.h>

#include <map>

#include "optim_test_util.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/optim/make_optimizer.h"
#include "test_util.h"

namespace t5xx::optim {
namespace {

using testing::Noise;

struct Spec {
  const char* name;
  std::vector<int64_t> shape;
  std::vector<std::string> axes;
};
const std::vector<Spec> kSpecs = {
    {"token_embedder.embedding", {32, 8}, {"vocab", "embed"}},
    {"encoder.prompt.prompt", {5, 8}, {"prompt", "embed"}},
    {"encoder.layers_0.mlp.wi.kernel", {8, 16}, {"embed", "mlp"}},
    {"decoder.prompt.prompt", {3, 8}, {"prompt", "embed"}},
};

models::ParamStore Store(const std::vector<Spec>& specs) {
  models::ParamStore s;
  uint64_t seed = 1;
  for (const Spec& p : specs) s.Add(p.name, Noise(p.shape, seed++, 1.0), p.axes);
  return s;
}

void SetGrads(models::ParamStore& s, int step) {
  for (size_t i = 0; i < s.params().size(); ++i) {
    const auto& p = s.params()[i];
    s.params()[i].value.mutable_grad() =
        Noise(p.value.sizes().vec(), 1000 + 10 * static_cast<uint64_t>(step) + i, 0.5);
  }
}

std::unique_ptr<MultiOptimizer> PromptOnly(const std::vector<std::string>& regexes) {
  std::vector<std::pair<ParamTraversal, std::unique_ptr<Optimizer>>> parts;
  parts.emplace_back(ParamTraversal{regexes, "prompt_utils.match_any.regexes"},
                     std::make_unique<Adafactor>(AdafactorConfig{}));
  return std::make_unique<MultiOptimizer>(std::move(parts));
}

TEST(MultiOptimizerTest, FlaxPathsAndFullMatches) {
  EXPECT_EQ(FlaxParamPath("encoder.prompt.prompt"), "/encoder/prompt/prompt");
  const ParamTraversal t{{".*/prompt/.*"}, "x"};
  EXPECT_TRUE(t.Matches("encoder.prompt.prompt"));
  EXPECT_TRUE(t.Matches("decoder.prompt.prompt"));
  EXPECT_FALSE(t.Matches("encoder.layers_0.mlp.wi.kernel"));
  // A full match, as match_any's regex.fullmatch: a prefix is not enough.
  EXPECT_FALSE((ParamTraversal{{"/encoder"}, "x"}).Matches("encoder.prompt.prompt"));
}

TEST(MultiOptimizerTest, OnlySelectedParametersChangeAsTheirOptimizerAloneWouldChangeThem) {
  models::ParamStore store = Store(kSpecs);
  const std::map<std::string, at::Tensor> start = [&] {
    std::map<std::string, at::Tensor> m;
    for (const auto& p : store.params()) m[p.name] = p.value.clone();
    return m;
  }();
  // The same Adafactor over a store of the prompts alone (copies).
  models::ParamStore alone;
  for (const auto& p : store.params()) {
    if (p.name.find("prompt") != std::string::npos) alone.Add(p.name, p.value.clone(), p.axes);
  }
  auto multi = PromptOnly({".*/prompt/.*"});
  Adafactor reference{AdafactorConfig{}};
  multi->Init(store);
  reference.Init(alone);
  ASSERT_EQ(multi->selected(), (std::vector<std::vector<size_t>>{{1, 3}}));
  for (int step = 0; step < 4; ++step) {
    SetGrads(store, step);
    for (auto& p : alone.params()) p.value.mutable_grad() = store.Get(p.name).grad().clone();
    const double lr = 0.01 * (step + 1);
    EXPECT_EQ(multi->Apply(store, lr), reference.Apply(alone, lr));
  }
  EXPECT_EQ(multi->step(), 4);
  for (const auto& p : store.params()) {
    if (p.name.find("prompt") != std::string::npos) {
      EXPECT_TRUE(at::equal(p.value, alone.Get(p.name))) << p.name;
      EXPECT_FALSE(at::equal(p.value, start.at(p.name))) << p.name << " did not train";
    } else {
      EXPECT_TRUE(at::equal(p.value, start.at(p.name))) << p.name << " is frozen but changed";
    }
  }
  // State only for the trained parameters, at the paths Adafactor gives them.
  const std::vector<StateArray> mine = multi->StateArrays(), ref = reference.StateArrays();
  ASSERT_EQ(mine.size(), ref.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    EXPECT_EQ(mine[i].path, ref[i].path);
    EXPECT_TRUE(at::equal(mine[i].value, ref[i].value)) << mine[i].path;
    EXPECT_NE(mine[i].path.find("prompt"), std::string::npos) << mine[i].path;
  }
}

TEST(MultiOptimizerTest, PartialStateResumesBitForBit) {
  models::ParamStore a = Store(kSpecs);
  auto first = PromptOnly({".*/prompt/.*"});
  first->Init(a);
  for (int step = 0; step < 3; ++step) {
    SetGrads(a, step);
    first->Apply(a, 0.01);
  }
  std::map<std::string, at::Tensor> saved;
  for (const StateArray& s : first->StateArrays()) saved[s.path] = s.value.clone();
  models::ParamStore b = Store(kSpecs);
  for (size_t i = 0; i < b.params().size(); ++i) b.params()[i].value.copy_(a.params()[i].value);
  auto resumed = PromptOnly({".*/prompt/.*"});
  resumed->Init(b);
  resumed->RestoreState(saved, first->step());
  SetGrads(a, 3);
  SetGrads(b, 3);
  first->Apply(a, 0.01);
  resumed->Apply(b, 0.01);
  for (size_t i = 0; i < a.params().size(); ++i) {
    EXPECT_TRUE(at::equal(a.params()[i].value, b.params()[i].value)) << a.params()[i].name;
  }
}

TEST(MultiOptimizerTest, OverlappingAndEmptyTraversalsAreRefused) {
  models::ParamStore store = Store(kSpecs);
  std::vector<std::pair<ParamTraversal, std::unique_ptr<Optimizer>>> parts;
  parts.emplace_back(ParamTraversal{{".*/prompt/.*"}, "a/prompt_utils.match_any.regexes"},
                     std::make_unique<Adafactor>(AdafactorConfig{}));
  parts.emplace_back(ParamTraversal{{"/encoder/.*"}, "b/prompt_utils.match_any.regexes"},
                     std::make_unique<Adafactor>(AdafactorConfig{}));
  MultiOptimizer overlap(std::move(parts));
  EXPECT_ERROR_CONTAINS(overlap.Init(store),
                        "parameter /encoder/prompt/prompt is selected by traversals 0 "
                        "(a/prompt_utils.match_any.regexes) and 1");
  EXPECT_ERROR_CONTAINS(PromptOnly({".*/promt/.*"})->Init(store),
                        "prompt_utils.match_any.regexes: the regexes ['.*/promt/.*'] select no "
                        "parameter");
  EXPECT_ERROR_CONTAINS(PromptOnly({"(unclosed"}), "'(unclosed' is not a valid regular expression");
}

}  // namespace
}  // namespace t5xx::optim
