// The parts of a train step that Trainer::TrainStepOnLocalBatch marks as
// libtorch user scopes (RECORD_USER_SCOPE, at::RecordScope::USER_SCOPE), so
// that anything observing at::RecordFunction -- bench/step_profile.cc's
// per-op profile, libtorch's own profiler -- can tell which part of the step
// an op ran in. When no callback is registered a scope costs only libtorch's
// check for one (nanoseconds).
#pragma once

namespace t5xx::trainer {

// model.Loss on a (micro)batch: the network's forward pass, the logits and
// the loss.
inline constexpr char kForwardScope[] = "t5xx::train_step::forward";
// partitioner.BeforeBackward and loss.backward(): the autograd engine's
// backward pass, with the gradient buckets it starts.
inline constexpr char kBackwardScope[] = "t5xx::train_step::backward";
// partitioner.ReduceGradients and optimizer.Apply: the gradient reduction
// and the parameter update.
inline constexpr char kOptimizerScope[] = "t5xx::train_step::optimizer";
// Everything else in the step (the normalizing factor, the copy to the
// device, zeroing gradients, the metrics' sums) runs outside these scopes.

}  // namespace t5xx::trainer
