// The optimizer interface the trainer holds -- the implementation of
// optimizer.h.
#include "t5xx/optim/optimizer.h"

#include <ATen/core/grad_mode.h>

#include <set>
#include <sstream>
#include <stdexcept>

#include "t5xx/util/error.h"

namespace t5xx::optim {

std::string SettingText(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
namespace {

std::string Describe(const at::Tensor& t) {
  std::ostringstream os;
  os << t.scalar_type() << " " << t.sizes();
  return os.str();
}

}  // namespace

void Optimizer::RestoreState(const std::map<std::string, at::Tensor>& arrays, int64_t step) {
  if (!initialized_) throw std::logic_error(gin_name() + ": RestoreState before Init");
  at::NoGradGuard no_grad;
  std::set<std::string> expected;
  const std::vector<StateArray> mine = StateArrays();
  for (const StateArray& a : mine) {
    expected.insert(a.path);
    auto it = arrays.find(a.path);
    T5XX_CHECK(it != arrays.end(), "restoring " + gin_name() + " state: the checkpoint lacks state." +
                                  a.path + " (was it written with another optimizer or options?)");
    T5XX_CHECK(it->second.sizes() == a.value.sizes() &&
              it->second.scalar_type() == a.value.scalar_type(),
          "restoring " + gin_name() + " state: state." + a.path + " is " +
              Describe(it->second) + " in the checkpoint but " + Describe(a.value) +
              " for this optimizer configuration");
  }
  for (const auto& [path, t] : arrays) {
    T5XX_CHECK(expected.count(path) > 0, "restoring " + gin_name() +
                                        " state: the checkpoint has state." + path +
                                        ", which this optimizer configuration does not use");
  }
  for (const StateArray& a : mine) a.value.copy_(arrays.at(a.path));
  T5XX_CHECK(step >= 0, "restoring " + gin_name() + " state: negative step " + std::to_string(step));
  step_ = step;
}

void Optimizer::set_reducer(std::shared_ptr<const Reducer> reducer) {
  if (!reducer) throw std::logic_error("Optimizer::set_reducer(nullptr)");
  reducer_ = std::move(reducer);
}

}  // namespace t5xx::optim
