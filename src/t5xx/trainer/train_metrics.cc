// t5x's train and train-eval metrics: batch counts, accumulation.
#include "t5xx/trainer/train_metrics.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "t5xx/util/error.h"

namespace t5xx::trainer {

using Summary = std::map<std::string, double>;

std::string FormatMetric(double v) {
  std::ostringstream out;
  out << std::setprecision(5) << v;
  return out.str();
}

int64_t CountPackedExamples(const at::Tensor& segment_ids) {
  T5XX_CHECK(segment_ids.dim() == 2, "CountPackedExamples: segment ids must be [batch, length]");
  const at::Tensor s = segment_ids.to(at::kLong);
  const int64_t rows = s.size(0), len = s.size(1);
  if (rows == 0 || len == 0) return 0;
  const int64_t padded = s.select(1, len - 1).eq(0).sum().item<int64_t>();
  const int64_t changes =
      len > 1 ? s.narrow(1, 1, len - 1).ne(s.narrow(1, 0, len - 1)).sum().item<int64_t>() : 0;
  return changes + rows - padded;
}

BatchCounts CountBatch(const models::FeatureBatch& batch) {
  BatchCounts c;
  const at::Tensor& targets = batch.at("decoder_target_tokens");
  c.examples = targets.size(0);
  c.target_tokens = targets.numel();
  std::map<std::string, at::Tensor> segments;
  const std::string suffix = "_segment_ids";
  for (const auto& [k, v] : batch) {
    if (k.size() > suffix.size() && k.compare(k.size() - suffix.size(), suffix.size(), suffix) == 0) {
      segments[k.substr(0, k.size() - suffix.size())] = v;
    }
  }
  if (segments.empty()) {  // unpacked: a padding mask per token feature
    for (const char* k : {"encoder_input_tokens", "decoder_target_tokens"}) {
      auto it = batch.find(k);
      if (it != batch.end()) segments[k] = it->second.ne(0);
    }
  }
  for (const auto& [name, seg] : segments) {
    if (seg.dim() != 2 || seg.size(1) == 0) continue;
    BatchCounts::Feature f;
    f.non_padding = seg.ne(0).sum().item<int64_t>();
    f.size = seg.numel();
    f.packed_examples = CountPackedExamples(seg);
    c.features[name] = f;
  }
  return c;
}

void MetricsAccumulator::Add(const StepMetrics& m, const BatchCounts& counts) {
  examples_ += counts.examples;
  target_tokens_ += counts.target_tokens;
  lr_sum_ += m.learning_rate;
  lr_last_ = m.learning_rate;
  for (const auto& [name, f] : counts.features) {
    BatchCounts::Feature& total = features_[name];
    total.non_padding += f.non_padding;
    total.size += f.size;
    total.packed_examples += f.packed_examples;
  }
  if (m.resolved()) {
    AddValues(m);
    if (!first_non_finite_ && !std::isfinite(m.loss)) {
      first_non_finite_ = std::make_pair(steps_, m.loss);
    }
  } else {
    pending_.emplace_back(steps_, m);
  }
  ++steps_;
}

void MetricsAccumulator::AddValues(const StepMetrics& m) const {
  loss_ += m.loss;
  z_loss_ += m.z_loss;
  weights_ += m.weight_sum;
  correct_ += m.correct;
  stop_requests_ += m.stop_requests;
}

bool MetricsAccumulator::StopRequested() const {
  ResolvePending();
  return stop_requests_ > 0;
}

void MetricsAccumulator::ResolvePending() const {
  if (pending_.empty()) return;
  // One copy for every pending step: [steps, 9] to the host.
  std::vector<at::Tensor> rows;
  for (const auto& [position, m] : pending_) rows.push_back(m.pending);
  const at::Tensor host = at::stack(rows).to(at::kCPU).contiguous();
  const double* v = host.data_ptr<double>();
  const int64_t width = host.size(1);
  for (size_t i = 0; i < pending_.size(); ++i) {
    StepMetrics m = pending_[i].second;
    m.pending = at::Tensor();
    m.SetFromSums(v + static_cast<int64_t>(i) * width);
    AddValues(m);
    if (!std::isfinite(m.loss) &&
        (!first_non_finite_ || first_non_finite_->first > pending_[i].first)) {
      first_non_finite_ = std::make_pair(pending_[i].first, m.loss);
    }
  }
  pending_.clear();
}

std::optional<std::pair<int64_t, double>> MetricsAccumulator::FirstNonFiniteLoss() const {
  ResolvePending();
  return first_non_finite_;
}

std::map<std::string, double> MetricsAccumulator::Compute(double seconds, int64_t num_devices,
                                                          double flops_per_step,
                                                          double peak_flops_per_second) const {
  if (steps_ == 0) throw std::logic_error("MetricsAccumulator::Compute: no steps");
  ResolvePending();
  const double steps = static_cast<double>(steps_);
  const double tokens = static_cast<double>(target_tokens_);
  const double dt = std::max(seconds, 1e-9);
  const double devices = static_cast<double>(std::max<int64_t>(num_devices, 1));
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  Summary s;
  s["accuracy"] = ratio(correct_, weights_);
  s["loss"] = loss_ / steps;
  s["z_loss"] = z_loss_ / steps;
  s["cross_ent_loss"] = (loss_ - z_loss_) / steps;
  s["loss_per_nonpadding_target_token"] = ratio(loss_, weights_);
  s["loss_per_all_target_tokens"] = ratio(loss_, tokens);
  s["z_loss_per_all_target_tokens"] = ratio(z_loss_, tokens);
  s["cross_ent_loss_per_all_target_tokens"] = ratio(loss_ - z_loss_, tokens);
  s["non_padding_fraction/loss_weights"] = ratio(weights_, tokens);
  if (!features_.empty()) {
    double non_padding = 0, size = 0;
    for (const auto& [name, f] : features_) {
      s["effective_batch_size/" + name] = static_cast<double>(f.packed_examples) / steps;
      s["non_padding_fraction/" + name] =
          ratio(static_cast<double>(f.non_padding), static_cast<double>(f.size));
      non_padding += static_cast<double>(f.non_padding);
      size += static_cast<double>(f.size);
    }
    s["non_padding_fraction/overall"] = ratio(non_padding, size);
  }
  s["timing/seconds"] = seconds;
  s["timing/seqs"] = static_cast<double>(examples_);
  s["timing/steps_per_second"] = steps / dt;
  s["timing/seqs_per_second"] = examples_ / dt;
  s["timing/seqs_per_second_per_core"] = examples_ / devices / dt;
  s["timing/target_tokens_per_second"] = tokens / dt;
  s["timing/target_tokens_per_second_per_core"] = tokens / devices / dt;
  if (train_) {
    s["learning_rate"] = lr_sum_ / steps;
    s["learning_rate/current"] = lr_last_;
    if (flops_per_step > 0) {
      s["timing/model_flops_per_second"] = flops_per_step * steps / dt;
      if (peak_flops_per_second > 0) {
        s["timing/mfu"] = flops_per_step * steps / dt / peak_flops_per_second;
      }
    }
  }
  return s;
}

}  // namespace t5xx::trainer
