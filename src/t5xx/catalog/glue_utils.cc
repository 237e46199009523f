// See glue_utils.h. The numbers are t5's (t5/data/glue_utils.py).
#include "t5xx/catalog/glue_utils.h"

namespace t5xx::catalog::internal {

const std::vector<std::pair<std::string, double>>& GlueWeightMapping() {
  static const auto* m = new std::vector<std::pair<std::string, double>>{
      {"glue_cola_v002", 8551.},   {"glue_sst2_v002", 67349.},
      {"glue_mrpc_v002", 3668.},   {"glue_qqp_v002", 363849.},
      {"glue_stsb_v002", 5749.},   {"glue_mnli_v002", 392702.},
      {"glue_qnli_v002", 104743.}, {"glue_rte_v002", 2490.},
      {"glue_mnli_mismatched_v002", 0.}, {"glue_mnli_matched_v002", 0.},
      {"glue_ax_v002", 0.}};
  return *m;
}

const std::vector<std::pair<std::string, double>>& SuperGlueWeightMapping() {
  static const auto* m = new std::vector<std::pair<std::string, double>>{
      {"dpr_v001_simple", 1322.},
      {"super_glue_wsc_v102_simple_train", 259.},
      {"super_glue_wsc_v102_simple_eval", 0.},
      {"super_glue_boolq_v102", 9427.},
      {"super_glue_cb_v102", 250.},
      {"super_glue_copa_v102", 400.},
      {"super_glue_multirc_v102", 27243.},
      {"super_glue_record_v102", 138854.},
      {"super_glue_rte_v102", 2490.},
      {"super_glue_wic_v102", 5428.},
      {"super_glue_axb_v102", 0.},
      {"super_glue_axg_v102", 0.}};
  return *m;
}

const std::vector<std::pair<std::string, double>>& SuperGlueWeightMappingSentinel() {
  static const auto* m = new std::vector<std::pair<std::string, double>>{
      {"dpr_v001_simple_1_sentinel", 1322.},
      {"super_glue_wsc_v102_simple_1_sentinel_train", 259.},
      {"super_glue_wsc_v102_simple_1_sentinel_eval", 0.},
      {"super_glue_boolq_v102_1_sentinel", 9427.},
      {"super_glue_cb_v102_1_sentinel", 250.},
      {"super_glue_copa_v102_1_sentinel", 400.},
      {"super_glue_multirc_v102_1_sentinel", 27243.},
      {"super_glue_record_v102_1_sentinel", 138854.},
      {"super_glue_rte_v102_1_sentinel", 2490.},
      {"super_glue_wic_v102_1_sentinel", 5428.},
      {"super_glue_axb_v102_1_sentinel", 0.},
      {"super_glue_axg_v102_1_sentinel", 0.}};
  return *m;
}

}  // namespace t5xx::catalog::internal
