#!/bin/bash
# Issue 34's headline: a model no capped process can hold trains on four.
#
#   scripts/memory_headline.sh [BUILD_DIR] [CAP_GIB]     (default build, 6)
#
# The model: decoder-only, 1.30B parameters (bench/memory_headline.cc),
# whose float32 parameters + gradients (9.7 GiB) exceed the cap.
#  1. One uncapped process trains it 2 steps: the reference losses.
#  2. Four processes, ZeRO-3 (parameter_partitioning_dims = 2), each in a
#     memory cgroup of CAP_GIB made here (cgroup v1 memory.limit_in_bytes,
#     or v2 memory.max; the kernel kills a process that passes it), train
#     the same global batches: the same losses (relative 1e-5), and each
#     process's peak (the cgroup's max usage, else its peak RSS) under the
#     cap. Where no cgroup can be made, peak RSS is asserted below the cap.
#  3. `t5xx train` of the same model on one process in such a cgroup is
#     refused up front by the memory plan, naming the layouts that fit.
# Needs about 12 GiB free for step 1 and root for the cgroups; takes a few
# minutes on 2 cores. Exits non-zero on any failure.
set -euo pipefail
BUILD=${1:-build}
CAP_GIB=${2:-6}
CAP=$((CAP_GIB * 1024 * 1024 * 1024))
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/$BUILD/bin"
WORK=$(mktemp -d)
cleanup() {
  # (make_cgroup runs in a command substitution: its cgroups are found by name)
  for cg in /sys/fs/cgroup/memory/t5xx_headline_$$_* /sys/fs/cgroup/t5xx_headline_$$_*; do
    [ -d "$cg" ] && rmdir "$cg" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# A memory cgroup capped at CAP for one command; prints its path, or
# nothing where none can be made.
make_cgroup() {
  local name="t5xx_headline_$$_$1" dir
  if [ -w /sys/fs/cgroup/memory ] && [ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
    dir=/sys/fs/cgroup/memory/$name
    mkdir "$dir" && echo "$CAP" > "$dir/memory.limit_in_bytes" || return 0
    [ -e "$dir/memory.memsw.limit_in_bytes" ] && echo "$CAP" > "$dir/memory.memsw.limit_in_bytes" 2>/dev/null || true
  elif [ -w /sys/fs/cgroup ] && [ -e /sys/fs/cgroup/cgroup.controllers ]; then
    dir=/sys/fs/cgroup/$name
    mkdir "$dir" && echo "$CAP" > "$dir/memory.max" || return 0
    echo 0 > "$dir/memory.swap.max" 2>/dev/null || true
  else
    return 0
  fi
  echo "$dir"
}

# The wrapper each rank runs under: joins its own capped cgroup, runs the
# command, reports the cgroup's peak usage.
cat > "$WORK/capped.sh" <<'EOS'
#!/bin/bash
dir=$1; shift
if [ -n "$dir" ]; then echo $$ > "$dir/cgroup.procs"; fi
"$@"; rc=$?
if [ -n "$dir" ]; then
  peak=$(cat "$dir/memory.max_usage_in_bytes" 2>/dev/null || cat "$dir/memory.peak" 2>/dev/null || echo -1)
  echo "cgroup_peak_bytes $peak"
  oom=$(grep -h "^oom_kill " "$dir/memory.oom_control" "$dir/memory.events" 2>/dev/null | head -1 | awk '{print $2}')
  echo "cgroup_oom_kills ${oom:-0}"
fi
exit $rc
EOS
chmod +x "$WORK/capped.sh"

echo "== 1. one uncapped process (reference)"
"$BIN/t5xx_memory_headline" 2 1 > "$WORK/ref.out"
cat "$WORK/ref.out"

echo "== 2. four processes, ZeRO-3, each capped at $CAP_GIB GiB"
dirs=()
for r in 0 1 2 3; do dirs+=("$(make_cgroup "$r")"); done
if [ -z "${dirs[0]}" ]; then echo "(no memory cgroup can be made here: peak RSS is checked instead)"; fi
# Each rank finds its cgroup by RANK (set by the launcher).
cat > "$WORK/rank.sh" <<EOS
#!/bin/bash
dirs=(${dirs[*]})
exec "$WORK/capped.sh" "\${dirs[\$RANK]:-}" "\$@"
EOS
chmod +x "$WORK/rank.sh"
"$BIN/t5xx" launch --nproc_per_node=4 -- "$WORK/rank.sh" "$BIN/t5xx_memory_headline" 2 2 \
  > "$WORK/z3.out" 2> "$WORK/z3.err" || { cat "$WORK/z3.err"; exit 1; }
grep -E "^(loss|plan_peak_bytes|peak_rss_kib|cgroup_)" "$WORK/z3.out"

python3 - "$WORK/ref.out" "$WORK/z3.out" "$CAP" <<'EOP'
import sys
def read(path):
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("loss", "plan_peak_bytes", "peak_rss_kib",
                                            "cgroup_peak_bytes", "cgroup_oom_kills"):
            out.setdefault(parts[0], []).append(float(parts[1]))
    return out
ref, z3, cap = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
losses = ref["loss"]
# Every process prints the global losses (the launcher interleaves the
# lines): 4 copies of each step's.
assert len(z3["loss"]) == 4 * len(losses), z3["loss"]
for l, r in zip(sorted(z3["loss"]), sorted(losses * 4)):
    assert abs(l - r) <= 1e-5 * abs(r), f"loss {l} vs one process's {r}"
peaks = z3.get("cgroup_peak_bytes") or [k * 1024 for k in z3["peak_rss_kib"]]
assert len(peaks) == 4 and all(0 < p < cap for p in peaks), (peaks, cap)
assert not any(z3.get("cgroup_oom_kills", [])), z3["cgroup_oom_kills"]
plans = z3["plan_peak_bytes"]
for p, rss in zip(plans, [k * 1024 for k in z3["peak_rss_kib"]]):
    print(f"plan {p / 2**30:.2f} GiB vs peak RSS {rss / 2**30:.2f} GiB ({p / rss:.3f})")
print(f"OK: losses equal one uncapped process's ({losses}); peaks per process "
      f"{[round(p / 2**30, 2) for p in peaks]} GiB < cap {cap / 2**30:.0f} GiB; "
      f"one process held {max(ref['peak_rss_kib']) / 2**20:.2f} GiB")
EOP

echo "== 3. t5xx train of the same model on one capped process: refused up front"
cat > "$WORK/headline.gin" <<'EOG'
from __gin__ import dynamic_registration
import seqio
from t5x.examples.decoder_only import network
include 'models/decoder_only/xl.gin'
include 'runs/pretrain.gin'
MIXTURE_OR_TASK_NAME = 'c4_demo_full_lm'
TASK_FEATURE_LENGTHS = {'targets': 32}
TRAIN_STEPS = 2
BATCH_SIZE = 4
DROPOUT_RATE = 0.0
network.TransformerConfig.vocab_size = 32128
network.TransformerConfig.mlp_dim = 5632
seqio.SentencePieceVocabulary.sentencepiece_model_file = 'c4_demo/sentencepiece.model'
EOG
dir=$(make_cgroup single)
if [ -n "$dir" ]; then
  data_dir=${T5XX_DATA_DIR:-$WORK/data}
  [ -e "$data_dir/c4_demo" ] ||
    "$BIN/t5xx" build_corpus --data_dir="$data_dir" --max_documents=3000 --vocab_size=1000 > /dev/null
  if "$WORK/capped.sh" "$dir" "$BIN/t5xx" train --gin_search_paths="$ROOT/configs" \
       --gin_file="$WORK/headline.gin" --data_dir="$data_dir" --gin.MODEL_DIR="'$WORK/single'" > "$WORK/single.out" 2>&1; then
    echo "FAIL: one capped process was not refused"; cat "$WORK/single.out"; exit 1
  fi
  grep -q "the memory plan needs" "$WORK/single.out" && grep -q "these layouts would fit" "$WORK/single.out" ||
    { echo "FAIL: no plan refusal naming the layouts that fit:"; cat "$WORK/single.out"; exit 1; }
  [ ! -e "$WORK/single" ] || { echo "FAIL: the refused run wrote MODEL_DIR"; exit 1; }
  grep "memory plan needs" "$WORK/single.out"
else
  echo "(no memory cgroup: skipped)"
fi
echo "PASS"
