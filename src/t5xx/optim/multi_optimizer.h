// t5x's optimizers.MultiOptimizer (t5x/optimizers.py): each sub-optimizer
// updates the parameters its traversal selects; parameters no traversal
// selects are frozen -- no update, no optimizer state (t5x stores None) --
// which is how prompt tuning (google-research/prompt-tuning) trains only the
// prompt. The traversal is flax's traverse_util.ModelParamTraversal with
// prompt-tuning's train.utils.match_any filter: a parameter is selected when
// its flax path ('/' + its dotted t5x name with '/' for '.', e.g.
// '/encoder/layers_0/mlp/wi/kernel') fully matches one of the regexes
// (ECMAScript syntax here, Python's re there: the common subset agrees).
//
// Each sub-optimizer sees only its parameters, with the shared step; its
// state arrays keep the paths it gives them (param_states.<param path>...),
// as t5x's MultiOptimizer state holds the sub-optimizers' param_states at
// their parameters' places.
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "t5xx/optim/optimizer.h"

namespace t5xx::optim {

// A ModelParamTraversal with match_any(regexes). `where` names the gin
// binding in messages.
struct ParamTraversal {
  std::vector<std::string> regexes;
  std::string where;
  // Whether the parameter of dotted name `name` is selected (compiles the
  // regexes; Compiled + MatchesAny to test many names).
  bool Matches(const std::string& name) const;
  std::vector<std::regex> Compiled() const;
  static bool MatchesAny(const std::vector<std::regex>& compiled, const std::string& name);
};

// The flax path of a dotted t5x parameter name: "a.b.c" -> "/a/b/c".
std::string FlaxParamPath(const std::string& name);

class MultiOptimizer : public Optimizer {
 public:
  // Throws t5xx::Error for an empty list or an invalid regex (naming where).
  explicit MultiOptimizer(
      std::vector<std::pair<ParamTraversal, std::unique_ptr<Optimizer>>> traversals_and_optimizers);

  std::string gin_name() const override { return "optimizers.MultiOptimizer"; }
  // Throws t5xx::Error naming the parameter two traversals select (t5x:
  // "Multiple optimizers match the same leaves") or the traversal that
  // selects none.
  void Init(const models::ParamStore& params) override;
  // Each sub-optimizer's update of its parameters; returns the first's rate.
  double Apply(models::ParamStore& params, double learning_rate) override;
  std::vector<StateArray> StateArrays() const override;

  // The parameters each traversal selected at Init, by index into the store.
  const std::vector<std::vector<size_t>>& selected() const { return selected_; }

 private:
  // The store of sub-optimizer `i`'s parameters: the same tensors.
  models::ParamStore Subset(const models::ParamStore& params, size_t i) const;

  std::vector<ParamTraversal> traversals_;
  std::vector<std::unique_ptr<Optimizer>> optimizers_;
  std::vector<std::vector<size_t>> selected_;
  std::vector<std::string> names_;  // the store's names at Init, for checks
};

}  // namespace t5xx::optim
