// t5/data/glue_utils.py: the GLUE and SuperGLUE mixing weights (each task's
// training-set size; 0 for evaluation-only tasks), as t5's mixtures use
// them. Internal to catalog/. Framework-free: no libtorch.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace t5xx::catalog::internal {

// (task, weight) in t5's order.
const std::vector<std::pair<std::string, double>>& GlueWeightMapping();
const std::vector<std::pair<std::string, double>>& SuperGlueWeightMapping();
const std::vector<std::pair<std::string, double>>& SuperGlueWeightMappingSentinel();

}  // namespace t5xx::catalog::internal
