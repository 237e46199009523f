#!/usr/bin/env bash
# The one-shot GPU check and profile (issues 14 and 49): on a machine with
# one NVIDIA GPU, its PyTorch and no network, builds only what it runs
# against that PyTorch's libtorch, runs the GPU tests, benchmarks the four
# training configurations (t5xx_gpu_train_bench) with per-phase GPU times
# and launch counts, A/B runs of the switches on T5.1.1 base, one profiled
# step per configuration kind (libtorch's Kineto trace, tabled by
# scripts/gpu_trace_top.py), the t5x-on-JAX peer where .gpu/peers is there,
# and a summary beside issue 49's targets -- everything into $OUT, so that
# one call brings back what offline analysis needs. Each stage has a time
# budget inside the whole run's (default 480 s).
#
#   scripts/gpu_perf_check.sh            on the GPU machine (after
#                                        scripts/gpu_perf_prepare.sh here:
#                                        carry .gpu)
#   scripts/gpu_perf_check.sh --smoke    the same stages on the CPU at the
#                                        bench's smoke sizes, with the
#                                        binaries of an existing build
#                                        (--build_dir, default build/; the
#                                        missing targets are built there):
#                                        CI runs it (ctest gpu_perf_check_smoke)
#                                        so that the script cannot rot
# Environment:
#   OUT                         where results go (default BUILD/out): at most
#                               8 files -- summary.txt, stages.log, bench.json,
#                               ab.json, top_kernels.txt, two traces
#                               (.json.gz), peers.jsonl
#   T5XX_GPU_PERF_BUILD_DIR     GPU mode's build directory (build-gpu-perf)
#   T5XX_GPU_PERF_BUDGET_S      the whole run's budget, default 480
#   T5XX_GPU_PERF_JOBS          build parallelism, default $(nproc)
#   T5XX_GPU_PERF_CMAKE_ARGS    extra cmake arguments (split on spaces)
#   T5XX_GPU_DIR                what gpu_perf_prepare.sh gathered (.gpu)
#   T5XX_GPU_PEERS=0|1          run the JAX peer for T5.1.1 base (default:
#                               when .gpu/peers exists and the GPU is not an
#                               H200, whose peer figures issue 49 has)
#   CUDA_HOME                   the CUDA toolkit (else nvcc on PATH,
#                               /usr/local/cuda, or pip's nvidia packages)
# Exit status: 0 when every stage passed (and, on a GPU, every target was
# met); 3 when all passed but a figure is BELOW its target; 1 when a stage
# failed or its results lack what they must hold.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
log() { echo "[gpu-perf] $*"; }
die() { log "FAILED: $*"; exit 1; }

smoke=0
build_dir=""
for a in "$@"; do
  case "$a" in
    --smoke) smoke=1 ;;
    --build_dir=*) build_dir="${a#--build_dir=}" ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) die "unknown argument '$a' (known: --smoke, --build_dir=DIR)" ;;
  esac
done
budget="${T5XX_GPU_PERF_BUDGET_S:-480}"
jobs="${T5XX_GPU_PERF_JOBS:-$(nproc)}"
gpu_dir="${T5XX_GPU_DIR:-.gpu}"
device=cuda
[ "$smoke" = 1 ] && device=cpu
[ -n "$build_dir" ] || build_dir="$([ "$smoke" = 1 ] && echo build || echo "${T5XX_GPU_PERF_BUILD_DIR:-build-gpu-perf}")"
mkdir -p "$build_dir"
build="$(cd "$build_dir" && pwd)"
out="${OUT:-$build/out}"
mkdir -p "$out" "$build/perf"
out="$(cd "$out" && pwd)"
work="$build/perf"
: >"$out/stages.log"
status=0
summary=()

# run_stage NAME CAP_S CMD...: runs CMD with at most min(CAP_S, what is left
# of the budget) seconds, its output in WORK/NAME.log and appended to
# OUT/stages.log; prints its time.
run_stage() {
  local name="$1" cap="$2"
  shift 2
  local left=$((budget - (SECONDS - t0)))
  local limit=$((cap < left ? cap : left))
  if ((limit < 5)); then
    log "stage $name: SKIPPED (no time left of the ${budget}s budget)"
    summary+=("$(printf '%-34s %-9s %5ss' "$name" SKIPPED 0)")
    status=1
    return 1
  fi
  local s=$SECONDS rc=0
  log "stage $name (budget ${limit}s) ..."
  timeout -k 10 "$limit" "$@" >"$work/$name.log" 2>&1 || rc=$?
  local took=$((SECONDS - s)) verdict=ok
  if ((rc == 124 || rc == 137)); then verdict=TIMEOUT; elif ((rc != 0)); then verdict=FAILED; fi
  log "stage $name: $verdict in ${took}s (exit $rc)"
  summary+=("$(printf '%-34s %-9s %5ss' "$name" "$verdict" "$took")")
  { echo "===== $name: $verdict in ${took}s (exit $rc): $*"; cat "$work/$name.log"; } >>"$out/stages.log"
  if [ "$verdict" != ok ]; then
    tail -n 30 "$work/$name.log" | sed 's/^/    /'
    status=1
    return 1
  fi
}

# ---- environment and build (GPU mode) ----
if [ "$smoke" != 1 ]; then
  command -v python3 >/dev/null || die "no python3: the GPU machine's PyTorch is found with python3 -c 'import torch'"
  torch_cmake="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>&1)" ||
    die "python3 cannot import torch: $torch_cmake"
  read -r torch_version torch_cuda cuda_ok < <(python3 -c \
    'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.is_available())')
  log "PyTorch $torch_version (CUDA $torch_cuda), cmake prefix $torch_cmake"
  [ "$cuda_ok" = True ] || die "torch.cuda.is_available() is False: no usable GPU (driver? CUDA_VISIBLE_DEVICES?); --smoke runs on the CPU"
  gpu_name="$(python3 -c 'import torch;print(torch.cuda.get_device_name(0))')"
  log "GPU: $gpu_name"
  # Debian packages: installed, or unpacked from .gpu/debs (dpkg -x).
  needed=(libsentencepiece-dev nlohmann-json3-dev libmsgpack-cxx-dev libdeflate-dev zlib1g-dev
          libzstd-dev libgtest-dev libgmock-dev libbenchmark-dev libgloo-dev)
  missing=()
  for p in "${needed[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  command -v pkg-config >/dev/null || missing+=(pkgconf)
  if ((${#missing[@]})); then
    debs="$gpu_dir/debs"
    ls "$debs"/*.deb >/dev/null 2>&1 ||
      die "Debian packages missing (${missing[*]}) and no .deb files in $debs: run scripts/gpu_perf_prepare.sh on a networked Debian 12 machine and carry .gpu"
    prefix="$build/debs-prefix"
    rm -rf "$prefix" && mkdir -p "$prefix"
    for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$prefix" || die "dpkg-deb -x $d"; done
    find "$prefix" -name '*.pc' -exec sed -i "s#^\([A-Za-z_]*=\)/usr#\1$prefix/usr#" {} +
    arch_lib="$prefix/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"
    export CMAKE_PREFIX_PATH="$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export PKG_CONFIG_PATH="$arch_lib/pkgconfig:$prefix/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export CPATH="$prefix/usr/include${CPATH:+:$CPATH}"
    export LIBRARY_PATH="$arch_lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$arch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    command -v pkg-config >/dev/null || export PATH="$prefix/usr/bin:$PATH"
    log "unpacked $(ls "$debs"/*.deb | wc -l) .debs from $debs"
  fi
  nvcc="$(command -v nvcc || true)"
  for c in "${CUDA_HOME:-}" /usr/local/cuda; do
    [ -z "$nvcc" ] && [ -n "$c" ] && [ -x "$c/bin/nvcc" ] && nvcc="$c/bin/nvcc"
  done
  [ -n "$nvcc" ] || die "no CUDA toolkit (nvcc) matching torch.version.cuda=$torch_cuda; set CUDA_HOME"
  cuda_root="$(cd "$(dirname "$(readlink -f "$nvcc")")/.." && pwd)"
  cmake_cuda=(-DCUDA_TOOLKIT_ROOT_DIR="$cuda_root" -DCMAKE_CUDA_COMPILER="$nvcc")
  [ -e "$cuda_root/include/nvtx3" ] && cmake_cuda+=(-Dnvtx3_dir="$cuda_root/include")
  [ -f "$gpu_dir/cudnn-frontend/include/cudnn_frontend.h" ] &&
    cmake_cuda+=(-DT5XX_CUDNN_FRONTEND_INCLUDE_DIR="$(cd "$gpu_dir/cudnn-frontend/include" && pwd)")
  # cudnn.h: the toolkit's, else the nvidia-cudnn wheel's beside PyTorch.
  cudnn_inc="$(python3 -c 'import nvidia.cudnn as c, os; print(os.path.join(list(c.__path__)[0], "include"))' 2>/dev/null || true)"
  [ -f "$cuda_root/include/cudnn.h" ] || { [ -f "$cudnn_inc/cudnn.h" ] && cmake_cuda+=(-DT5XX_CUDNN_INCLUDE_DIR="$cudnn_inc"); }
  run_stage configure 120 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST \
    -DCMAKE_PREFIX_PATH="$torch_cmake${CMAKE_PREFIX_PATH:+;${CMAKE_PREFIX_PATH//:/;}}" \
    "${cmake_cuda[@]}" ${T5XX_GPU_PERF_CMAKE_ARGS:-} || die "configure"
  grep -q "CUDA build of libtorch" "$work/configure.log" || die "$torch_cmake is not a CUDA build of libtorch"
fi

# The GPU tests: parity, bf16, decoding parity, device, the kernels' tests
# and the trainer tests that follow T5XX_TEST_DEVICE (tests/test_device.h).
all_targets="$(cmake --build "$build" --target help 2>/dev/null)"
has_target() { grep -qE "(^|\.\.\. )$1(:|\$)" <<<"$all_targets"; }
tests=()
for t in models_parity_test models_bf16_test models_decoding_parity_test device_device_test; do
  has_target "$t" && tests+=("$t")
done
for f in tests/trainer/*_test.cc tests/kernels/*_test.cc tests/optim/*_test.cc; do
  grep -q 'test_device.h' "$f" || continue
  t="$(basename "$(dirname "$f")")_$(basename "$f" .cc)"
  has_target "$t" && tests+=("$t")
done
targets=(t5xx_gpu_train_bench)
[ "$smoke" = 1 ] || targets+=("${tests[@]}")
missing_targets=()
for t in "${targets[@]}"; do [ -x "$build/bin/$t" ] || missing_targets+=("$t"); done
if ((${#missing_targets[@]})); then
  run_stage build 330 cmake --build "$build" -j"$jobs" --target "${missing_targets[@]}" || die "build"
fi

# ---- tests on the device (GPU mode; the smoke run's CI ran them already) ----
if [ "$smoke" != 1 ]; then
  for t in "${tests[@]}"; do
    run_stage "test_$t" 90 env T5XX_TEST_DEVICE="$device" "$build/bin/$t" --gtest_brief=1
  done
fi

bench="$build/bin/t5xx_gpu_train_bench"
bench_common=(--device="$device")
# On the CPU the optimizer takes the GPU's path (the fused CPU update runs
# no ATen ops, so there would be nothing to count).
[ "$smoke" = 1 ] && bench_common+=(--smoke --adafactor_fused_cpu=false)

# ---- the four configurations: tokens/s, MFU, memory, phases, launches ----
run_stage bench 200 "$bench" "${bench_common[@]}" --phases --count_ops \
  --benchmark_out="$out/bench.json" --benchmark_out_format=json

# ---- A/B switches on T5.1.1 base (one process each) ----
variants=("tf32_off --allow_tf32=false" "attention_unfused --attention=unfused"
          "adafactor_per_param --adafactor=per_param" "bf16_reduction_on --bf16_reduction=true")
[ "$smoke" = 1 ] || variants+=("sdpa_efficient_only --sdpa_backends=efficient"
                               "sdpa_cudnn_first --sdpa_backends=cudnn,efficient,math")
ab_files=()
for v in "${variants[@]}"; do
  name="${v%% *}" flag="${v#* }"
  run_stage "ab_$name" 60 "$bench" "${bench_common[@]}" "$flag" --steps="$([ "$smoke" = 1 ] && echo 1 || echo 5)" \
    --phases --benchmark_filter='/t5_1_1_base/' \
    --benchmark_out="$work/ab_$name.json" --benchmark_out_format=json &&
    ab_files+=("$work/ab_$name.json")
done
python3 - "$out/ab.json" "${ab_files[@]}" <<'EOF' || status=1
import json, sys
runs = []
for path in sys.argv[2:]:
    runs += json.load(open(path))["benchmarks"]
json.dump({"benchmarks": runs}, open(sys.argv[1], "w"), indent=1)
EOF

# ---- one profiled step per kind of network ----
: >"$out/top_kernels.txt"
for cfg in t5_1_1_base decoder_only_base; do
  run_stage "trace_$cfg" 90 "$bench" "${bench_common[@]}" --steps=1 --trace_dir="$work" \
    --benchmark_filter="/$cfg/" || continue
  trace="$work/$cfg.trace.json"
  if [ -s "$trace" ]; then
    python3 scripts/gpu_trace_top.py "$trace" --top 15 --json "$work/top_$cfg.json" \
      >>"$out/top_kernels.txt" 2>&1 || status=1
    echo >>"$out/top_kernels.txt"
    gzip -c "$trace" >"$out/trace_$cfg.json.gz"
  else
    grep -h "trace:" "$work/trace_$cfg.log" | tee -a "$out/top_kernels.txt"
  fi
done

# ---- the t5x-on-JAX peer, same call, same GPU ----
peers="${T5XX_GPU_PEERS:-}"
if [ -z "$peers" ]; then
  peers=0
  [ "$smoke" != 1 ] && [ -f "$gpu_dir/peers/gpu_peers.py" ] && [[ "${gpu_name:-}" != *H200* ]] && peers=1
fi
if [ "$peers" = 1 ]; then
  run_stage peer_jax 150 env OUT="$out" BUDGET_S=140 CONFIGS=base_128x512+114 \
    T5X_DIR="$(cd "$gpu_dir/peers/t5x" && pwd)" python3 "$gpu_dir/peers/gpu_peers.py" jax
fi

# ---- summary ----
{
  echo "gpu_perf_check: $([ "$smoke" = 1 ] && echo "smoke run on the CPU" || echo "${gpu_name:-GPU}, PyTorch ${torch_version:-?}")"
  echo "stages (budget ${budget}s, elapsed $((SECONDS - t0))s):"
  printf '  %s\n' "${summary[@]}"
  echo
  echo "attention kernels (bench log):"
  awk '/ attention:/ {p = 1; print "  " $0; next} p && /^    / {print "  " $0; next} {p = 0}' \
    "$work/bench.log" 2>/dev/null
  echo
} >"$out/summary.txt"
python3 - "$out/bench.json" "$out/ab.json" "$smoke" >>"$out/summary.txt" <<'EOF'
import json, sys
smoke = sys.argv[3] == "1"
try:
    runs = json.load(open(sys.argv[1]))["benchmarks"]
except (OSError, ValueError, KeyError) as e:
    print(f"no benchmark results: {e}"); sys.exit(1)
# Issue 49's bars on one H100/H200: t5x-on-JAX's tokens/s on an H200 (its
# peers' figures), small's memory at most 0.7 x 45.7 GiB, the 1B's MFU.
jax = {"t5_1_1_small": 961e3, "t5_1_1_base": 345e3, "decoder_only_base": 238e3}
mem_gib = {"t5_1_1_small": 0.7 * 45.7}
mfu_min = {"decoder_only_1b": 0.40}
phases = ("forward", "backward", "optimizer")
need = ["tokens_per_second", "mfu", "peak_gpu_mib", "ops_forward", "ops_backward", "ops_optimizer"]
need += [p + "_ms" for p in phases] + ["host_" + p + "_ms" for p in phases]
print(f"{'config':<18} {'tokens/s':>10} {'MFU':>6} {'GiB':>6} {'ms/step':>8} "
      f"{'fwd':>7} {'bwd':>7} {'opt':>7} {'ops f/b/o':>17}  bar")
bad = below = 0
for r in runs:
    name = r["name"].split("/")[1]
    if "error_message" in r:
        print(f"{name:<18} ERROR: {r['error_message']}"); bad += 1; continue
    lacking = [k for k in need if k not in r]
    if lacking:
        print(f"{name:<18} lacks {lacking}"); bad += 1; continue
    if min(r["forward_ms"], r["backward_ms"], r["optimizer_ms"], r["ops_forward"],
           r["ops_backward"], r["ops_optimizer"]) <= 0:
        print(f"{name:<18} a phase time or op count is not positive"); bad += 1
    step_ms = 1e3 * (r["real_time"] / 1e3 if r.get("time_unit") == "ms" else r["real_time"] / 1e9)
    ok, bars = True, []
    if name in jax:
        ratio = r["tokens_per_second"] / jax[name]
        bars.append(f"{ratio:.2f}x JAX-on-H200 (>= 1.0)"); ok &= ratio >= 1.0
    if name in mem_gib:
        gib = r["peak_gpu_mib"] / 1024
        bars.append(f"mem <= {mem_gib[name]:.1f} GiB"); ok &= gib <= mem_gib[name]
    if name in mfu_min:
        bars.append(f"MFU >= {mfu_min[name]}"); ok &= r["mfu"] >= mfu_min[name]
    verdict = "n/a (smoke)" if smoke else ("PASS" if ok else "BELOW")
    if not smoke and not ok: below += 1
    ops = f"{r['ops_forward']:.0f}/{r['ops_backward']:.0f}/{r['ops_optimizer']:.0f}"
    print(f"{name:<18} {r['tokens_per_second']:>10.0f} {r['mfu']:>6.3f} "
          f"{r['peak_gpu_mib'] / 1024:>6.2f} {step_ms:>8.1f} {r['forward_ms']:>7.1f} "
          f"{r['backward_ms']:>7.1f} {r['optimizer_ms']:>7.1f} {ops:>17}  "
          f"{'; '.join(bars) or '-'}: {verdict}")
print(f"MFU against: {runs[0].get('label', '').split('MFU vs ')[-1]}")
try:
    ab = json.load(open(sys.argv[2]))["benchmarks"]
except (OSError, ValueError, KeyError):
    ab = []
base = next((r for r in runs if r["name"].split("/")[1] == "t5_1_1_base" and "tokens_per_second" in r), None)
if ab and base:
    print("\nA/B on t5_1_1_base (tokens/s vs the default run above; device ms per phase):")
    for r in ab:
        if "tokens_per_second" not in r:
            print(f"  {r.get('label', r['name'])}: ERROR {r.get('error_message', '')}"); continue
        sw = r.get("label", "").split("]")[0].split("[")[-1]
        print(f"  {r['tokens_per_second'] / base['tokens_per_second']:>5.2f}x  "
              f"fwd {r['forward_ms']:.1f} bwd {r['backward_ms']:.1f} opt {r['optimizer_ms']:.1f}  [{sw}]")
sys.exit(1 if bad else (3 if below else 0))
EOF
rc=$?
if ((rc == 3)); then ((status == 0)) && status=3; elif ((rc != 0)); then status=1; fi
if [ "$smoke" = 1 ]; then
  # The smoke run must show that every part works: attention reported,
  # traces written (or why not), the A/B runs merged.
  grep -q " attention:" "$work/bench.log" || { log "bench printed no attention report"; status=1; }
  grep -q "by category" "$out/top_kernels.txt" || grep -q "not written:" "$out/top_kernels.txt" ||
    { log "no trace table and no reason"; status=1; }
  python3 -c 'import json,sys;sys.exit(0 if len(json.load(open(sys.argv[1]))["benchmarks"])==4 else 1)' \
    "$out/ab.json" || { log "ab.json lacks the 4 A/B runs"; status=1; }
fi
cat "$out/summary.txt"
cat "$out/top_kernels.txt"
log "done in $((SECONDS - t0))s: $([ $status = 0 ] && echo PASSED || ([ $status = 3 ] && echo 'PASSED, figures BELOW target' || echo FAILED)); results in $out"
exit $status
