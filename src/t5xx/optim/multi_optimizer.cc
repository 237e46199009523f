// See multi_optimizer.h (t5x/optimizers.py MultiOptimizer).
#include "t5xx/optim/multi_optimizer.h"

#include <algorithm>

#include "t5xx/util/error.h"

namespace t5xx::optim {

std::string FlaxParamPath(const std::string& name) {
  std::string path = "/" + name;
  std::replace(path.begin(), path.end(), '.', '/');
  return path;
}

std::vector<std::regex> ParamTraversal::Compiled() const {
  return std::vector<std::regex>(regexes.begin(), regexes.end());
}

bool ParamTraversal::MatchesAny(const std::vector<std::regex>& compiled, const std::string& name) {
  const std::string path = FlaxParamPath(name);
  for (const std::regex& r : compiled) {
    if (std::regex_match(path, r)) return true;
  }
  return false;
}

bool ParamTraversal::Matches(const std::string& name) const { return MatchesAny(Compiled(), name); }

MultiOptimizer::MultiOptimizer(
    std::vector<std::pair<ParamTraversal, std::unique_ptr<Optimizer>>> traversals_and_optimizers) {
  T5XX_CHECK(!traversals_and_optimizers.empty(),
             "optimizers.MultiOptimizer.traversals_and_optimizers is empty; give at least one "
             "(traversal, optimizer) pair");
  for (auto& [t, o] : traversals_and_optimizers) {
    for (const std::string& r : t.regexes) {
      try {
        std::regex check(r);
      } catch (const std::regex_error& e) {
        throw Error(t.where + ": '" + r + "' is not a valid regular expression (" + e.what() + ")");
      }
    }
    traversals_.push_back(std::move(t));
    optimizers_.push_back(std::move(o));
  }
}

void MultiOptimizer::Init(const models::ParamStore& params) {
  selected_.assign(traversals_.size(), {});
  names_.clear();
  std::vector<std::vector<std::regex>> compiled;
  for (const ParamTraversal& t : traversals_) compiled.push_back(t.Compiled());
  const std::vector<models::Param>& ps = params.params();
  for (size_t p = 0; p < ps.size(); ++p) {
    names_.push_back(ps[p].name);
    int owner = -1;
    for (size_t t = 0; t < traversals_.size(); ++t) {
      if (!ParamTraversal::MatchesAny(compiled[t], ps[p].name)) continue;
      T5XX_CHECK(owner < 0, "optimizers.MultiOptimizer: parameter " + FlaxParamPath(ps[p].name) +
                                " is selected by traversals " + std::to_string(owner) + " (" +
                                traversals_[owner].where + ") and " + std::to_string(t) + " (" +
                                traversals_[t].where +
                                "); t5x raises ValueError: Multiple optimizers match the same "
                                "leaves. Make the regexes disjoint");
      owner = static_cast<int>(t);
      selected_[t].push_back(p);
    }
  }
  for (size_t t = 0; t < traversals_.size(); ++t) {
    std::string regexes;
    for (const std::string& r : traversals_[t].regexes) regexes += (regexes.empty() ? "'" : ", '") + r + "'";
    T5XX_CHECK(!selected_[t].empty(),
               traversals_[t].where + ": the regexes [" + regexes +
                   "] select no parameter (they must match a whole flax path such as " +
                   (ps.empty() ? std::string("'/encoder/layers_0/mlp/wi/kernel'")
                               : "'" + FlaxParamPath(ps.front().name) + "'") +
                   "), so that optimizer would train nothing");
    optimizers_[t]->set_reducer(reducer_);
    if (scanned_) optimizers_[t]->set_scanned_layers(*scanned_);
    optimizers_[t]->Init(Subset(params, t));
  }
  step_ = 0;
  initialized_ = true;
}

models::ParamStore MultiOptimizer::Subset(const models::ParamStore& params, size_t i) const {
  models::ParamStore sub;
  const std::vector<models::Param>& ps = params.params();
  T5XX_CHECK(ps.size() == names_.size(), "optimizers.MultiOptimizer: the parameters changed since Init");
  for (size_t p : selected_[i]) {
    T5XX_CHECK(ps[p].name == names_[p], "optimizers.MultiOptimizer: the parameters changed since Init");
    sub.Add(ps[p].name, ps[p].value, ps[p].axes);
  }
  sub.set_hooks(params.hooks_ptr());
  return sub;
}

double MultiOptimizer::Apply(models::ParamStore& params, double learning_rate) {
  if (!initialized_) throw std::logic_error("optimizers.MultiOptimizer: Apply before Init");
  double rate = learning_rate;
  for (size_t t = 0; t < optimizers_.size(); ++t) {
    SetStep(*optimizers_[t], step_);  // t5x: OptimizerState(state.step, ...)
    optimizers_[t]->set_reducer(reducer_);
    models::ParamStore sub = Subset(params, t);
    const double r = optimizers_[t]->Apply(sub, learning_rate);
    if (t == 0) rate = r;
  }
  ++step_;
  return rate;
}

std::vector<StateArray> MultiOptimizer::StateArrays() const {
  std::vector<StateArray> out;
  for (const auto& o : optimizers_) {
    std::vector<StateArray> a = o->StateArrays();
    out.insert(out.end(), std::make_move_iterator(a.begin()), std::make_move_iterator(a.end()));
  }
  return out;
}

}  // namespace t5xx::optim
