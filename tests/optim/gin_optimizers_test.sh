#!/usr/bin/env bash
# Optimizers configured from gin the way t5x configs write them, through
# `t5xx config` (validates and prints the operative config without
# training): Adafactor's options, @optimizers.adamw(), @optimizers.chain()
# of optax transformations, create_learning_rate_scheduler as an optax
# learning_rate; and bad values give one clear error line (exit 2).
# Usage: gin_optimizers_test.sh /path/to/t5xx
set -u
T5XX="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/../cli/cli_lib.sh"

# `t5xx config` checks the task and its vocabulary as train does: a small
# demo corpus, found through the default data dir.
export T5XX_DATA_DIR="$work/data"
"$T5XX" build_corpus --max_documents=300 --vocab_size=500 >"$work/corpus.log" 2>&1 ||
  { echo "FAIL build_corpus:"; cat "$work/corpus.log"; exit 1; }
run_args=(--gin.MODEL_DIR="$work/x" --gin.MIXTURE_OR_TASK_NAME=c4_demo_span_corruption
          --gin.TRAIN_STEPS=1 "--gin.TASK_FEATURE_LENGTHS={'inputs': 8, 'targets': 8}"
          --gin.DROPOUT_RATE=0.0
          --gin.seqio.SentencePieceVocabulary.sentencepiece_model_file=c4_demo/sentencepiece.model)
stock=(--gin_file=models/t5_1_1/tiny.gin --gin_file=runs/pretrain.gin "${run_args[@]}")

# expect_config NAME OUT_FILE -- args...: exit 0; OUT_FILE gets the operative config.
expect_config() {
  local name="$1" out="$2"; shift 3
  if "$T5XX" config "$@" >"$out" 2>"$work/err"; then
    pass=$((pass + 1))
  else
    echo "FAIL $name:"; cat "$work/err"; failures=$((failures + 1))
  fi
}
# expect_line NAME FILE LINE: FILE has exactly LINE. (OPTIMIZER = @x() is
# called in scope OPTIMIZER, as gin reads %OPTIMIZER as
# @OPTIMIZER/gin.macro(): its operative values are OPTIMIZER/x.param.)
expect_line() {
  if grep -qxF -- "$3" "$2"; then pass=$((pass + 1)); else
    echo "FAIL $1: no line '$3' in:"; grep -i "optax\|optimizers\|adafactor\|scheduler" "$2"
    failures=$((failures + 1))
  fi
}
# expect_config_error NAME SUBSTRING -- args...: `t5xx config args...`
# fails as cli_lib.sh's expect_error wants.
expect_config_error() {
  local name="$1" want="$2"; shift 3
  expect_error "$name" "$want" -- "$T5XX" config "$@"
}
# round_trip NAME FILE: the operative config, fed back, prints the same text.
round_trip() {
  if "$T5XX" config --gin_file="$2" >"$2.again" 2>"$work/err" && cmp -s "$2" "$2.again"; then
    pass=$((pass + 1))
  else
    echo "FAIL $1 round trip:"; cat "$work/err"; diff "$2" "$2.again" | head; failures=$((failures + 1))
  fi
}

# --- Adafactor with every t5x option ---
expect_config adafactor_options "$work/ada.gin" -- "${stock[@]}" \
  --gin.adafactor.Adafactor.beta1=0.9 --gin.adafactor.Adafactor.global_norm_clip_threshold=1.0 \
  "--gin.adafactor.Adafactor.dtype_momentum='bfloat16'" --gin.adafactor.Adafactor.max_parameter_scale=10.0 \
  --gin.adafactor.Adafactor.weight_decay_rate=0.001 --gin.adafactor.Adafactor.skip_nan_updates=True \
  --gin.adafactor.Adafactor.weight_decay_rate_lr_exponent=1.0 \
  "--gin.utils.create_learning_rate_scheduler.factors='constant * linear_decay'"
expect_line adafactor_beta1 "$work/ada.gin" "OPTIMIZER/t5x.adafactor.Adafactor.beta1 = 0.9"
expect_line adafactor_dtype "$work/ada.gin" "OPTIMIZER/t5x.adafactor.Adafactor.dtype_momentum = 'bfloat16'"
expect_line adafactor_default "$work/ada.gin" "OPTIMIZER/t5x.adafactor.Adafactor.epsilon1 = 1e-30"
round_trip adafactor "$work/ada.gin"
expect_config adafactor_rule_dict "$work/ada_rules.gin" -- "${stock[@]}" \
  "--gin.adafactor.Adafactor.logical_factor_rules={'embed': 'row', 'mlp': 'col', 'heads': 'column', 'kv': 'column', 'joined_kv': 'column', 'vocab': 'column', 'relpos_buckets': None}"

# --- AdamW and chains, in a self-contained model file written like t5x's
# base.gin (without its adafactor bindings) ---
cat >"$work/model.gin" <<'EOF'
from __gin__ import dynamic_registration
import optax
import seqio
from t5x import models
from t5x import optimizers
from t5x import utils
from t5x.examples.t5 import network

VOCABULARY = @seqio.SentencePieceVocabulary()
seqio.SentencePieceVocabulary.sentencepiece_model_file = 'sentencepiece.model'
seqio.SentencePieceVocabulary.extra_ids = 100
MODEL = @models.EncoderDecoderModel()
models.EncoderDecoderModel:
  module = @network.Transformer()
  input_vocabulary = %VOCABULARY
  output_vocabulary = %VOCABULARY
  optimizer_def = %OPTIMIZER
network.Transformer.config = @network.T5Config()
network.T5Config:
  vocab_size = 640
  emb_dim = 32
  num_heads = 2
  num_encoder_layers = 1
  num_decoder_layers = 1
  head_dim = 16
  mlp_dim = 64
  dropout_rate = %DROPOUT_RATE
EOF
cat >"$work/chain.gin" <<'EOF'
from __gin__ import dynamic_registration
import optax
from t5x import optimizers
from t5x import utils
include 'runs/pretrain.gin'

# As t5x/contrib/gpu/t5/t5_1_1/adamw_opt.gin, with a t5x schedule.
OPTIMIZER = @optimizers.chain()
optimizers.chain:
  transformations = [@optax.clip_by_global_norm(), @optax.adamw()]
optax.clip_by_global_norm:
  max_norm = 1.0
optax.adamw:
  learning_rate = @adamw/utils.create_learning_rate_scheduler()
  weight_decay = 0.01
adamw/utils.create_learning_rate_scheduler:
  factors = 'constant * linear_warmup * cosine_decay'
  base_learning_rate = 0.001
  warmup_steps = 100
  steps_per_cycle = 1000
EOF
expect_config chain "$work/op_chain.gin" -- --gin_file="$work/model.gin" --gin_file="$work/chain.gin" "${run_args[@]}"
expect_line chain_transformations "$work/op_chain.gin" \
  "OPTIMIZER/t5x.optimizers.chain.transformations = [@optax.clip_by_global_norm(), @optax.adamw()]"
expect_line chain_max_norm "$work/op_chain.gin" "OPTIMIZER/optax.clip_by_global_norm.max_norm = 1.0"
expect_line chain_b2 "$work/op_chain.gin" "OPTIMIZER/optax.adamw.b2 = 0.999"
expect_line chain_schedule "$work/op_chain.gin" \
  "adamw/t5x.utils.create_learning_rate_scheduler.factors = 'constant * linear_warmup * cosine_decay'"
round_trip chain "$work/op_chain.gin"

cat >"$work/adamw.gin" <<'EOF'
from __gin__ import dynamic_registration
from t5x import optimizers
include 'runs/pretrain.gin'

OPTIMIZER = @optimizers.adamw()
optimizers.adamw:
  learning_rate = 1e-4
  b1 = 0.8
  mu_dtype = 'bfloat16'
  nesterov = True
EOF
expect_config adamw "$work/op_adamw.gin" -- --gin_file="$work/model.gin" --gin_file="$work/adamw.gin" "${run_args[@]}"
expect_line adamw_lr "$work/op_adamw.gin" "OPTIMIZER/t5x.optimizers.adamw.learning_rate = 0.0001"
expect_line adamw_wd "$work/op_adamw.gin" "OPTIMIZER/t5x.optimizers.adamw.weight_decay = 0.0001"
round_trip adamw "$work/op_adamw.gin"

chain=(--gin_file="$work/model.gin" --gin_file="$work/chain.gin" "${run_args[@]}")
adamw=(--gin_file="$work/model.gin" --gin_file="$work/adamw.gin" "${run_args[@]}")

# --- optax optimizers and schedules beyond adamw (optax 0.2.3's names) ---
# lion + warmup_cosine_decay_schedule as t5x's base_wmt_from_scratch_lion.gin
# writes them.
cat >"$work/lion.gin" <<'EOF'
from __gin__ import dynamic_registration
import optax
from t5x import optimizers
include 'runs/pretrain.gin'

OPTIMIZER = @optimizers.chain()
optimizers.chain:
  transformations = [@optax.clip(), @optax.lion()]
optax.clip:
  max_delta = 1.0
optax.lion:
  learning_rate = @optax.warmup_cosine_decay_schedule()
optax.warmup_cosine_decay_schedule:
  init_value = 0.0
  peak_value = 5e-5
  warmup_steps = 1000
  decay_steps = %TRAIN_STEPS
  end_value = 0.0
EOF
lion=(--gin_file="$work/model.gin" --gin_file="$work/lion.gin" "${run_args[@]}" --gin.TRAIN_STEPS=2000)
expect_config lion "$work/op_lion.gin" -- "${lion[@]}"
expect_line lion_b2 "$work/op_lion.gin" "OPTIMIZER/optax.lion.b2 = 0.99"
expect_line lion_wd "$work/op_lion.gin" "OPTIMIZER/optax.lion.weight_decay = 0.001"
expect_line lion_schedule "$work/op_lion.gin" "OPTIMIZER/optax.warmup_cosine_decay_schedule.decay_steps = 2000"
round_trip lion "$work/op_lion.gin"

cat >"$work/sgd.gin" <<'EOF'
from __gin__ import dynamic_registration
import optax
from t5x import optimizers
include 'runs/pretrain.gin'

OPTIMIZER = @optimizers.sgd()
optimizers.sgd:
  learning_rate = @optax.join_schedules()
  momentum = 0.9
  nesterov = True
optax.join_schedules:
  schedules = [@warm/optax.linear_schedule(), @optax.exponential_decay()]
  boundaries = [100]
warm/optax.linear_schedule:
  init_value = 0.0
  end_value = 0.1
  transition_steps = 100
optax.exponential_decay:
  init_value = 0.1
  transition_steps = 1000
  decay_rate = 0.5
  staircase = True
EOF
sgd=(--gin_file="$work/model.gin" --gin_file="$work/sgd.gin" "${run_args[@]}")
expect_config sgd "$work/op_sgd.gin" -- "${sgd[@]}"
expect_line sgd_momentum "$work/op_sgd.gin" "OPTIMIZER/t5x.optimizers.sgd.momentum = 0.9"
expect_line sgd_dtype "$work/op_sgd.gin" "OPTIMIZER/t5x.optimizers.sgd.accumulator_dtype = None"
expect_line sgd_warm "$work/op_sgd.gin" "warm/optax.linear_schedule.transition_begin = 0"
round_trip sgd "$work/op_sgd.gin"

cat >"$work/chain2.gin" <<'EOF'
from __gin__ import dynamic_registration
import optax
from t5x import optimizers
from t5x import utils
include 'runs/pretrain.gin'

OPTIMIZER = @optimizers.chain()
optimizers.chain.transformations = [@optax.clip_by_global_norm(), @optax.rmsprop(), @optax.add_decayed_weights(), @optax.scale_by_schedule(), @optax.scale()]
optax.clip_by_global_norm.max_norm = 1.0
optax.rmsprop.learning_rate = @utils.create_learning_rate_scheduler()
optax.rmsprop.centered = True
optax.add_decayed_weights.weight_decay = 1e-4
optax.scale_by_schedule.step_size_fn = @optax.piecewise_constant_schedule()
optax.piecewise_constant_schedule:
  init_value = 1.0
  boundaries_and_scales = {1000: 0.5, 2000: 0.5}
optax.scale.step_size = 0.5
EOF
expect_config chain2 "$work/op_chain2.gin" -- --gin_file="$work/model.gin" --gin_file="$work/chain2.gin" "${run_args[@]}"
expect_line chain2_centered "$work/op_chain2.gin" "OPTIMIZER/optax.rmsprop.centered = True"
round_trip chain2 "$work/op_chain2.gin"
for opt in adam lamb adagrad; do
  cat >"$work/$opt.gin" <<EOF
from __gin__ import dynamic_registration
from t5x import optimizers
include 'runs/pretrain.gin'
OPTIMIZER = @optimizers.$opt()
optimizers.$opt.learning_rate = 0.01
EOF
  expect_config "wrapped_$opt" "$work/op_$opt.gin" -- --gin_file="$work/model.gin" --gin_file="$work/$opt.gin" "${run_args[@]}"
done
expect_line lamb_eps "$work/op_lamb.gin" "OPTIMIZER/t5x.optimizers.lamb.eps = 1e-06"

expect_config_error lion_b1 "optax.lion.b1 = 1.5 must be in [0, 1) (optax: 0.9)" -- \
  "${lion[@]}" --gin.optax.lion.b1=1.5
expect_config_error lion_mask "set mask = None" -- \
  "${lion[@]}" "--gin.optax.lion.mask='kernels'"
expect_config_error warmup_cosine_steps "optax.warmup_cosine_decay_schedule.decay_steps = 500: expected > optax.warmup_cosine_decay_schedule.warmup_steps = 1000" -- \
  "${lion[@]}" --gin.TRAIN_STEPS=500
expect_config_error sgd_join "optax.join_schedules: 2 schedules need 1 boundaries, got 2" -- \
  "${sgd[@]}" "--gin.optax.join_schedules.boundaries=[100, 200]"
expect_config_error lion_lr_uncalled "expected a float or a schedule, called with ()" -- \
  "${lion[@]}" "--gin.optax.lion.learning_rate=@optax.warmup_cosine_decay_schedule"
expect_config_error optax_adafactor "@optax.adafactor() is not supported: t5x cannot partition its FactoredState" -- \
  "${chain[@]}" "--gin.optimizers.chain.transformations=[@optax.adafactor()]"

# --- t5x's own example gins for optax (clip + adamw / lion with
# warmup_cosine_decay_schedule, decay_steps = %TRAIN_STEPS), on the demo
# task and one process instead of WMT and 2 partitions ---
root="$(cd "$(dirname "$0")/../.." && pwd)"
t5x="$(. "$root/tests/cli/t5x_checkout.sh" >/dev/null 2>&1; echo "${t5x:-}")"
if [ -n "$t5x" ]; then
  for o in adamw lion; do
    expect_config "t5x_example_$o" "$work/op_t5x_$o.gin" -- --gin_search_paths="$t5x" \
      --gin_file="t5x/examples/t5/t5_1_1/examples/base_wmt_from_scratch_$o.gin" \
      "${run_args[@]}" --gin.TRAIN_STEPS=50000 --gin.seqio.SentencePieceVocabulary.extra_ids=100 \
      --gin.partitioning.PjitPartitioner.num_partitions=1
    expect_line "t5x_example_${o}_chain" "$work/op_t5x_$o.gin" \
      "OPTIMIZER/t5x.optimizers.chain.transformations = [@optax.clip(), @optax.$o()]"
    expect_line "t5x_example_${o}_decay_steps" "$work/op_t5x_$o.gin" \
      "OPTIMIZER/optax.warmup_cosine_decay_schedule.decay_steps = 50000"
  done
else
  echo "note: no t5x checkout; t5x's example optax gins not checked"
fi

# --- errors ---
expect_config_error adafactor_beta1 "adafactor.Adafactor.beta1 = 1 must be in [0, 1)" -- \
  "${stock[@]}" --gin.adafactor.Adafactor.beta1=1.0
expect_config_error adafactor_learning_rate "has no effect (t5x's trainer sets Adafactor's rate" -- \
  "${stock[@]}" --gin.adafactor.Adafactor.learning_rate=0.1
expect_config_error adafactor_dtype "use 'float32' or 'bfloat16'" -- \
  "${stock[@]}" "--gin.adafactor.Adafactor.dtype_momentum='float16'"
expect_config_error adafactor_rule_name "unknown factor dim 'diagonal'" -- \
  "${stock[@]}" "--gin.adafactor.Adafactor.logical_factor_rules={'embed': 'diagonal'}"
expect_config_error adafactor_clipping "adafactor.Adafactor.clipping_threshold = 0 must be > 0" -- \
  "${stock[@]}" --gin.adafactor.Adafactor.clipping_threshold=0.0
expect_config_error schedule_factor "unknown factor 'rsqrt_dekay'" -- \
  "${stock[@]}" "--gin.utils.create_learning_rate_scheduler.factors='constant * rsqrt_dekay'"
expect_config_error adamw_b1 "optimizers.adamw.b1 = 1.5 must be in [0, 1)" -- \
  "${adamw[@]}" --gin.optimizers.adamw.b1=1.5
expect_config_error adamw_mask "set mask = None" -- \
  "${adamw[@]}" "--gin.optimizers.adamw.mask='decay_only_kernels'"
expect_config_error chain_max_norm "optax.clip_by_global_norm.max_norm = -1 must be > 0" -- \
  "${chain[@]}" --gin.optax.clip_by_global_norm.max_norm=-1.0
expect_config_error chain_schedule "unknown factor 'cosine'" -- \
  "${chain[@]}" "--gin.adamw/utils.create_learning_rate_scheduler.factors='constant * cosine'"
expect_config_error chain_not_reference "expected a list of optax transformations, called with () (@optax.adam(), @optax.adamw()" -- \
  "${chain[@]}" "--gin.optimizers.chain.transformations=[1.0]"
expect_config_error chain_unsupported "t5xx supports @optax.adam(), @optax.adamw(), @optax.lion(), @optax.sgd(), @optax.rmsprop(), @optax.adagrad(), @optax.lamb(), @optax.clip(), @optax.clip_by_global_norm(), @optax.add_decayed_weights(), @optax.scale_by_schedule(), @optax.scale() in optimizers.chain, got @t5x.optimizers.adamw" -- \
  "${chain[@]}" "--gin.optimizers.chain.transformations=[@optimizers.adamw()]"

# --- MultiOptimizer (t5x's, with prompt-tuning's match_any filter, as its
# gins bind it): only the decoder trains; the rest stays bitwise as
# initialised and has no optimizer state.
cat >"$work/multi.gin" <<'GIN'
from flax import traverse_util
from t5x import optimizers as optim
from t5x import adafactor
from prompt_tuning.train import utils as prompt_utils
OPTIMIZER = @optim.MultiOptimizer()
optim.MultiOptimizer:
  traversals_and_optimizers = ((@traverse_util.ModelParamTraversal(), @adafactor.Adafactor()),)
traverse_util.ModelParamTraversal:
  filter_fn = @prompt_utils.match_any()
prompt_utils.match_any.regexes = [".*/decoder/.*"]
GIN
multi=("${stock[@]}" --gin_file="$work/multi.gin" --gin.MODEL_DIR="'$work/multi'" --gin.TRAIN_STEPS=3
       --gin.BATCH_SIZE=2 --gin.utils.SaveCheckpointConfig.period=3 --gin.train.eval_period=3
       --gin.train.infer_eval_dataset_cfg=None --gin.train.train_eval_dataset_cfg=None)
"$T5XX" train "${multi[@]}" >"$work/multi.log" 2>&1
show="$work/multi.log" check "train with optimizers.MultiOptimizer exits 0" test $? = 0
c0="$work/multi/checkpoint_0" c3="$work/multi/checkpoint_3"
check "MultiOptimizer: the encoder and embedding stay bitwise, the decoder trains" bash -c '
  for a in "$0"/target.encoder.* "$0"/target.token_embedder.*; do
    diff -rq "$a" "$1/$(basename "$a")" >/dev/null || { echo "changed: $a"; exit 1; }; done
  for a in "$0"/target.decoder.layers_0.mlp.wi_0.kernel; do
    ! diff -rq "$a" "$1/$(basename "$a")" >/dev/null || { echo "frozen: $a"; exit 1; }; done' "$c0" "$c3"
check "MultiOptimizer: optimizer state only for the decoder" bash -c '
  ls "$0" | grep -q "^state.param_states.decoder\." && ! ls "$0" | grep -q "^state.param_states.\(encoder\|token_embedder\)"' "$c3"
expect_error multi_selects_nothing "the regexes ['.*/promt/.*'] select no parameter" -- \
  "$T5XX" train "${multi[@]}" --gin.MODEL_DIR="'$work/multi_bad'" "--gin.prompt_utils.match_any.regexes=['.*/promt/.*']"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
