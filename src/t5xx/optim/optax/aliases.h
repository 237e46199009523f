// The optax calls a t5x config names -- optimizers (optax/_src/alias.py:
// adam, adamw, lion, sgd, rmsprop, adagrad, lamb) and single
// transformations (clip, clip_by_global_norm, add_decayed_weights,
// scale_by_schedule, scale) -- with optax 0.2.3's signatures and defaults,
// and the chain of primitives (transforms.h) each one is in optax:
//
//   adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0,
//        mu_dtype=None, *, nesterov=False)
//       chain(scale_by_adam, scale_by_learning_rate)
//   adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0,
//         mu_dtype=None, weight_decay=1e-4, mask=None, *, nesterov=False)
//       chain(scale_by_adam, add_decayed_weights, scale_by_learning_rate)
//   lion(learning_rate, b1=0.9, b2=0.99, mu_dtype=None, weight_decay=1e-3,
//        mask=None)
//       chain(scale_by_lion, add_decayed_weights, scale_by_learning_rate)
//   sgd(learning_rate, momentum=None, nesterov=False, accumulator_dtype=None)
//       chain(trace(momentum, nesterov) or identity, scale_by_learning_rate)
//   rmsprop(learning_rate, decay=0.9, eps=1e-8, initial_scale=0.0,
//           centered=False, momentum=None, nesterov=False)
//       chain(scale_by_rms or (centered) scale_by_stddev,
//             scale_by_learning_rate, trace(momentum, nesterov) or identity)
//   adagrad(learning_rate, initial_accumulator_value=0.1, eps=1e-7)
//       chain(scale_by_rss, scale_by_learning_rate)
//   lamb(learning_rate, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0,
//        weight_decay=0.0, mask=None)
//       chain(scale_by_adam, add_decayed_weights, scale_by_trust_ratio,
//             scale_by_learning_rate)
//   clip(max_delta), clip_by_global_norm(max_norm),
//   add_decayed_weights(weight_decay=0.0, mask=None),
//   scale_by_schedule(step_size_fn), scale(step_size): one primitive each.
//
// mask must be None (t5xx decays every parameter); optax.adafactor is
// refused where gin reads it (t5x cannot partition its FactoredState).
#pragma once

#include <string>
#include <vector>

#include "t5xx/optim/optax/transforms.h"

namespace t5xx::optim::optax {

struct OptaxTransform {
  enum class Kind {
    kAdam,
    kAdamW,
    kLion,
    kSgd,
    kRmsprop,
    kAdagrad,
    kLamb,
    kClip,
    kClipByGlobalNorm,
    kAddDecayedWeights,
    kScaleBySchedule,
    kScale,
  };
  Kind kind = Kind::kAdamW;
  // Gin name for messages: "optax.adamw", "optimizers.lion", ...
  std::string gin_name;

  // optax's parameter names; Defaults(kind) sets optax's defaults for kind.
  LearningRate learning_rate;  // optimizers; scale_by_schedule's step_size_fn
  double b1 = 0.9, b2 = 0.999, eps = 1e-8, eps_root = 0.0;
  std::optional<at::ScalarType> mu_dtype;  // adam(w), lion; sgd's accumulator_dtype
  double weight_decay = 1e-4;  // adamw's (the default kind)
  bool nesterov = false;
  std::optional<double> momentum;  // sgd, rmsprop
  double decay = 0.9;              // rmsprop
  double initial_scale = 0;        // rmsprop
  bool centered = false;           // rmsprop
  double initial_accumulator_value = 0.1;  // adagrad
  double max_delta = 0, max_norm = 0;      // clip, clip_by_global_norm
  double step_size = 0;                    // scale

  // A transform of `kind` with optax's defaults; gin_name defaults to
  // "optax.<name>".
  static OptaxTransform Defaults(Kind kind, std::string gin_name = "");

  // Whether optax builds it as a chain (an optimizer alias: its state is a
  // tuple, one entry per primitive) rather than one transformation.
  bool is_chain() const;

  // Throws t5xx::Error naming the gin key and the fix, e.g.
  // "optax.lion.b1 = 1.5 must be in [0, 1) (optax: 0.9)".
  void Validate() const;

  // The primitives, in optax's order (one for a non-chain).
  std::vector<Primitive> Expand() const;
};

// "adam", "clip_by_global_norm", ... for a kind; and back (nullopt for an
// unknown name).
std::string OptaxName(OptaxTransform::Kind kind);
std::optional<OptaxTransform::Kind> OptaxKindOf(const std::string& name);
// Every supported name, optimizers first: "adam, adamw, lion, ...".
std::string SupportedOptaxNames(bool optimizers_only);

}  // namespace t5xx::optim::optax
