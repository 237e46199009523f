// Where a train step's time goes: a per-op wall-clock profile of full
// training steps (forward, loss, backward, Adafactor update; the
// Trainer::TrainStep t5xx_train_bench times) on bench_models.h's models.
//
//   build/bin/t5xx_step_profile [--config=tiny|small|base] [--dtype=float32|bfloat16]
//       [--batch=N] [--lengths=INPUTS,TARGETS | --lengths=TARGETS]
//       [--warmup=N] [--steps=N] [--top=N] [--decode=greedy|beam4] [--json_out=FILE]
//       [--intra_op_threads=N] [--int8]
//
// Defaults: --config=tiny, --dtype=float32, the config's BenchConfigs shape
// (tiny 32 x (128 + 32), small 8 x (128 + 32), base 2 x 512; --lengths takes
// one number, the targets, for the decoder-only base), --warmup=1,
// --steps=3, --top=30. It runs the warm-up steps, then --steps steps
// recorded by op_profiler.h (every ATen op, autograd node and user scope,
// timed through at::RecordFunction global callbacks), each after an
// unrecorded one (the reference step time), and prints
//   - the step wall time recorded and not (the recording's cost; each step
//     too, so that one slowed by another process stands out);
//   - the --top rows by self time: label (the op; "<node> > <op>" inside a
//     backward node), phase (the train step's user scopes,
//     trainer/step_scopes.h), calls, self and inclusive ms per step, % of
//     the recorded step, and the op's category;
//   - per phase and in total: the self time of ops (autograd nodes and the
//     engine included) and the phase's time outside any op, against the
//     step wall time (coverage: what share of the step the ops' self times
//     account for);
//   - per category: matmul (aten::mm, bmm, addmm, matmul, ...), elementwise
//     and reductions (the other compute ops), copies and casts (aten::copy_,
//     to, contiguous, clone, ...), memory (empty, zeros, fill_, ...), views
//     (metadata only: view, reshape, transpose, ...), autograd bookkeeping
//     (nodes' and the engine's own time), outside ops.
// The CPU is set up as the t5xx binary sets it (device/openmp_wait.h,
// device/cpu_runtime.h; the first output line says how). Times are wall
// clock; on a shared machine they move from run to run.
// --decode=greedy|beam4 profiles decoding instead (T5.1.1 only): a "step"
// is one predict_batch_with_aux of the batch (the encoder, then TARGETS
// cached decoder steps, greedy temperature_sample or beam_search with 4
// beams), with the same report; --int8 decodes with int8 kernels
// (`t5xx infer --int8_weights`, models/networks/int8_weights.h). At most 8
// rows store the decode step's kernels transposed, as `t5xx infer` does.
// --json_out=FILE writes the same figures (all rows, not only --top) as JSON.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench_flags.h"
#include "bench_models.h"
#include "bench_schedule.h"
#include "op_profiler.h"
#include "t5xx/device/cpu_runtime.h"
#include "t5xx/decoding/decoding.h"
#include "t5xx/models/networks/int8_weights.h"
#include "t5xx/models/few_row_decoder.h"
#include "t5xx/kernels/skinny_matmul.h"
#include "t5xx/device/openmp_wait.h"
#include "t5xx/optim/adafactor.h"
#include "t5xx/partitioning/pjit_partitioner.h"
#include "t5xx/trainer/trainer.h"
#include "t5xx/util/error.h"

namespace {

using t5xx::bench::OpRow;
using t5xx::bench::RowKind;
using t5xx::bench::StepPhase;

// The category of a row (see the header comment); ops by their ATen name.
std::string Category(const OpRow& row) {
  switch (row.kind) {
    case RowKind::kNode:
    case RowKind::kEngine: return "autograd bookkeeping";
    case RowKind::kPhaseScope:
    case RowKind::kOtherScope: return "outside ops";
    case RowKind::kOp: break;
  }
  static const std::set<std::string> matmul = {
      "aten::mm",     "aten::bmm",     "aten::addmm",  "aten::matmul", "aten::baddbmm",
      "aten::addbmm", "aten::mv",      "aten::addmv",  "aten::dot",    "aten::linear",
      "aten::einsum", "aten::tensordot"};
  static const std::set<std::string> copies = {
      "aten::copy_", "aten::to",        "aten::_to_copy", "aten::contiguous",
      "aten::clone", "aten::_copy_from", "aten::_copy_from_and_resize", "aten::type_as",
      "aten::copy"};
  static const std::set<std::string> memory = {
      "aten::empty",      "aten::empty_strided", "aten::empty_like",    "aten::zeros",
      "aten::zeros_like", "aten::ones",          "aten::ones_like",     "aten::full",
      "aten::full_like",  "aten::zero_",         "aten::fill_",         "aten::new_empty",
      "aten::new_empty_strided", "aten::new_zeros", "aten::new_ones",   "aten::new_full",
      "aten::resize_",    "aten::scalar_tensor", "aten::lift_fresh"};
  static const std::set<std::string> views = {
      "aten::view",       "aten::reshape",   "aten::_reshape_alias", "aten::_unsafe_view",
      "aten::transpose",  "aten::t",         "aten::permute",        "aten::expand",
      "aten::expand_as",  "aten::slice",     "aten::select",         "aten::narrow",
      "aten::as_strided", "aten::unsqueeze", "aten::squeeze",        "aten::split",
      "aten::split_with_sizes", "aten::chunk", "aten::unbind",       "aten::detach",
      "aten::detach_",    "aten::alias",     "aten::view_as",        "aten::unflatten",
      "aten::flatten",    "aten::diagonal",  "aten::movedim",        "aten::numpy_T",
      "aten::_unsafe_split", "aten::lift",   "aten::broadcast_to",   "aten::unfold"};
  if (matmul.count(row.op)) return "matmul";
  if (copies.count(row.op)) return "copies/casts";
  if (memory.count(row.op)) return "memory";
  if (views.count(row.op)) return "views";
  if (row.op.rfind("aten::", 0) == 0) return "elementwise/reductions";
  return "other ops";
}

// The categories in the order the summary prints them.
const std::vector<std::string>& Categories() {
  static const std::vector<std::string> all = {
      "matmul",      "elementwise/reductions", "copies/casts", "memory",
      "views",       "autograd bookkeeping",   "other ops",    "outside ops"};
  return all;
}

[[noreturn]] void Fail(const std::string& message) {
  std::cerr << "t5xx_step_profile: " << message << std::endl;
  std::exit(2);
}

// "--lengths=128,32" (encoder-decoder: inputs, targets) or "--lengths=512"
// (decoder-only: targets) into in_len, tg_len.
void ParseLengths(const std::string& v, bool decoder_only, int64_t* in_len, int64_t* tg_len) {
  std::vector<int64_t> n;
  std::stringstream ss(v);
  for (std::string part; std::getline(ss, part, ',');) {
    char* end = nullptr;
    const long long x = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || x < 1) {
      Fail("--lengths='" + v + "': '" + part + "' is not a whole number >= 1");
    }
    n.push_back(x);
  }
  if (decoder_only) {
    if (n.size() != 1) Fail("--lengths='" + v + "': the decoder-only base takes one length, "
                            "the targets (e.g. --lengths=512)");
    *in_len = 0;
    *tg_len = n[0];
  } else {
    if (n.size() != 2) Fail("--lengths='" + v + "': T5.1.1 takes two lengths, inputs,targets "
                            "(e.g. --lengths=128,32)");
    *in_len = n[0];
    *tg_len = n[1];
  }
}

double StepSeconds(const std::function<void()>& step) {
  const auto t0 = std::chrono::steady_clock::now();
  step();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Sums {
  double op_self_s = 0;       // ops, nodes and the engine (main thread)
  double outside_ops_s = 0;   // user scopes' own time (main thread)
  int64_t op_calls = 0;
};

int Run(std::vector<std::string> args) {
  t5xx::device::CpuRuntimeOptions cpu;
  cpu.intra_op_threads = t5xx::device::TakeIntraOpThreadsFlag(args);
  const std::string cpu_line = t5xx::device::ConfigureCpuRuntime(cpu);
  std::string config = "tiny", dtype = "float32", lengths, json_out, decode;
  int batch = 0, warmup = 1, steps = 3, top = 30;
  bool int8 = false;
  for (const std::string& a : args) {
    if (a == "--int8") {
      int8 = true;
    } else if (a.rfind("--config=", 0) == 0) {
      config = a.substr(9);
    } else if (a.rfind("--dtype=", 0) == 0) {
      dtype = a.substr(8);
    } else if (a.rfind("--batch=", 0) == 0) {
      batch = t5xx::bench::IntFlag(a, "--batch", batch);
    } else if (a.rfind("--lengths=", 0) == 0) {
      lengths = a.substr(10);
    } else if (a.rfind("--warmup=", 0) == 0) {
      warmup = t5xx::bench::IntFlag(a, "--warmup", warmup, 0);
    } else if (a.rfind("--steps=", 0) == 0) {
      steps = t5xx::bench::IntFlag(a, "--steps", steps);
    } else if (a.rfind("--top=", 0) == 0) {
      top = t5xx::bench::IntFlag(a, "--top", top);
    } else if (a.rfind("--decode=", 0) == 0) {
      decode = a.substr(9);
      if (decode != "greedy" && decode != "beam4") Fail("--decode='" + decode + "' is not greedy or beam4");
    } else if (a.rfind("--json_out=", 0) == 0) {
      json_out = a.substr(11);
      if (json_out.empty()) Fail("--json_out= needs a file name");
    } else {
      Fail("unknown argument '" + a + "' (flags: --config=tiny|small|base "
           "--dtype=float32|bfloat16 --batch=N --lengths=INPUTS,TARGETS --warmup=N --steps=N "
           "--top=N --decode=greedy|beam4 --int8 --json_out=FILE --intra_op_threads=N)");
    }
  }
  const t5xx::bench::BenchConfig* found = t5xx::bench::FindBenchConfig(config);
  if (!found) {
    Fail("--config='" + config + "' is not one of " + t5xx::bench::BenchConfigNames());
  }
  if (dtype != "float32" && dtype != "bfloat16") {
    Fail("--dtype='" + dtype + "' is not float32 or bfloat16");
  }
  t5xx::bench::BenchConfig c = *found;
  if (batch > 0) c.batch = batch;
  if (!lengths.empty()) ParseLengths(lengths, c.in_len == 0, &c.in_len, &c.tg_len);

  t5xx::bench::BenchModel bm = t5xx::bench::MakeBenchModel(c.which, dtype);
  t5xx::partitioning::PjitPartitioner partitioner(1,
                                                  t5xx::partitioning::StandardLogicalAxisRules());
  t5xx::models::FeatureBatch b = t5xx::bench::RandomBenchBatch(c.batch, c.in_len, c.tg_len);
  std::function<void()> step;
  std::unique_ptr<t5xx::trainer::Trainer> trainer;
  t5xx::models::ParamStore decode_params;
  std::unique_ptr<t5xx::models::Int8Weights> int8_weights;
  std::unique_ptr<t5xx::models::Int8WeightsScope> int8_scope;
  if (int8 && decode.empty()) Fail("--int8 is for --decode=greedy|beam4");
  if (decode.empty()) {
    trainer = std::make_unique<t5xx::trainer::Trainer>(
        *bm.model, bm.model->InitParams(0), t5xx::optim::Adafactor({}),
        t5xx::bench::PretrainSchedule(), partitioner);
    step = [&] { trainer->TrainStep(b); };
  } else {
    // One "step": a whole decode of the batch (t5x's predict_batch_with_aux:
    // the encoder, then tg_len cached decoder steps; random weights rarely
    // reach EOS, so every row decodes them all).
    t5xx::decoding::DecodeFnConfig fn;
    fn.kind = decode == "beam4" ? t5xx::decoding::DecodeFnConfig::Kind::kBeamSearch
                                : t5xx::decoding::DecodeFnConfig::Kind::kTemperatureSample;
    bm.model->set_decode_fn(fn);
    decode_params = bm.model->InitParams(0);
    decode_params.SetRequiresGrad(false);
    if (c.batch * (decode == "beam4" ? 4 : 1) <= t5xx::models::kSkinnyMatmulMaxRows) {
      // As `t5xx infer|eval` lays out a few-row decode's kernels
      // (run/inference/inference.h's LoadInferenceModel).
      t5xx::models::StoreKernelsTransposed(decode_params, t5xx::models::DecodeStepKernel);
    }
    if (int8) {
      int8_weights = std::make_unique<t5xx::models::Int8Weights>(decode_params);
      int8_scope = std::make_unique<t5xx::models::Int8WeightsScope>(int8_weights.get());
    }
    b["decoder_input_tokens"] = at::zeros_like(b["decoder_input_tokens"]);
    step = [&] {
      bm.model->PredictBatchWithAux(decode_params, b, nullptr, false, decode == "beam4" ? 4 : 1);
    };
  }
  const std::string shape = "batch " + std::to_string(c.batch) +
                            (c.in_len > 0 ? " inputs " + std::to_string(c.in_len) : "") +
                            " targets " + std::to_string(c.tg_len);
  std::printf("%s %s %s%s; CPU: %s\n", bm.name.c_str(), dtype.c_str(), shape.c_str(),
              decode.empty() ? "" : (" decode " + decode + (int8 ? " int8" : "")).c_str(), cpu_line.c_str());
  std::fflush(stdout);

  for (int i = 0; i < warmup; ++i) step();
  // Unrecorded and recorded steps alternate, so that a change in the
  // machine's load falls on both alike.
  t5xx::bench::OpProfiler profiler;
  std::vector<double> plain, recorded;  // seconds per step
  for (int i = 0; i < steps; ++i) {
    plain.push_back(StepSeconds(step));
    profiler.Start();
    recorded.push_back(StepSeconds(step));
    profiler.Stop();
  }
  double plain_s = 0, step_s = 0;  // means
  for (int i = 0; i < steps; ++i) {
    plain_s += plain[i] / steps;
    step_s += recorded[i] / steps;
  }
  std::vector<OpRow> rows = profiler.Rows();
  std::sort(rows.begin(), rows.end(),
            [](const OpRow& x, const OpRow& y) { return x.self_s > y.self_s; });

  const double n = steps;
  const double step_ms = step_s * 1e3;
  auto per_step_ms = [&](double total_s) { return total_s * 1e3 / n; };
  auto pct = [&](double total_s) { return 100.0 * total_s / n / step_s; };

  std::printf("%d warm-up steps, then %d unrecorded and %d recorded ones alternating; mean step "
              "wall %.1f ms recorded, %.1f ms unrecorded (recording adds %.1f%%)\n",
              warmup, steps, steps, step_ms, plain_s * 1e3, 100.0 * (step_s / plain_s - 1.0));
  // Each step, so that a step slowed by another process stands out.
  auto list = [](const std::vector<double>& v) {
    std::string out;
    for (double x : v) out += (out.empty() ? "" : " ") + std::to_string(std::lround(x * 1e3));
    return out;
  };
  std::printf("steps (ms): recorded %s; unrecorded %s\n\n", list(recorded).c_str(),
              list(plain).c_str());

  // The top rows (main thread; other threads' time overlaps it).
  std::printf("%-56s %-9s %9s %11s %7s %11s  %s\n", "op (backward: node > op)", "phase",
              "calls", "self ms", "% step", "incl ms", "category");
  int shown = 0;
  for (const OpRow& r : rows) {
    if (!r.main_thread) continue;
    if (shown++ >= top) break;
    std::printf("%-56s %-9s %9.1f %11.3f %6.1f%% %11.3f  %s\n", r.label.c_str(),
                t5xx::bench::PhaseName(r.phase), r.calls / n, per_step_ms(r.self_s),
                pct(r.self_s), per_step_ms(r.inclusive_s), Category(r).c_str());
  }
  std::printf("(calls and ms per step)\n\n");

  std::map<StepPhase, Sums> phases;
  std::map<std::string, double> categories;
  Sums total, workers;
  for (const OpRow& r : rows) {
    Sums& s = r.main_thread ? phases[r.phase] : workers;
    const bool outside = r.kind == RowKind::kPhaseScope || r.kind == RowKind::kOtherScope;
    (outside ? s.outside_ops_s : s.op_self_s) += r.self_s;
    if (!outside) s.op_calls += r.calls;
    if (r.main_thread) {
      (outside ? total.outside_ops_s : total.op_self_s) += r.self_s;
      if (!outside) total.op_calls += r.calls;
      categories[Category(r)] += r.self_s;
    }
  }
  const double untracked_s = step_s * n - total.op_self_s - total.outside_ops_s;
  std::printf("%-10s %12s %9s %16s %9s %11s\n", "phase", "op self ms", "% step",
              "outside ops ms", "% step", "op calls");
  for (const auto& [phase, s] : phases) {
    std::printf("%-10s %12.2f %8.1f%% %16.2f %8.1f%% %11.1f\n", t5xx::bench::PhaseName(phase),
                per_step_ms(s.op_self_s), pct(s.op_self_s), per_step_ms(s.outside_ops_s),
                pct(s.outside_ops_s), s.op_calls / n);
  }
  std::printf("%-10s %12.2f %8.1f%% %16.2f %8.1f%% %11.1f\n", "total", per_step_ms(total.op_self_s),
              pct(total.op_self_s), per_step_ms(total.outside_ops_s), pct(total.outside_ops_s),
              total.op_calls / n);
  std::printf("step wall %.2f ms: ops' self times cover %.1f%% of it; outside any recorded op "
              "or user scope %.2f ms (%.1f%%)\n",
              step_ms, pct(total.op_self_s), per_step_ms(untracked_s), pct(untracked_s));
  if (workers.op_calls > 0 || workers.op_self_s > 0) {
    std::printf("other threads: %.1f op calls, %.2f ms self per step (overlapping the main "
                "thread's ops; not in the sums)\n",
                workers.op_calls / n, per_step_ms(workers.op_self_s));
  }
  if (profiler.UnmatchedEnds() > 0) {
    std::printf("warning: %lld record ends did not match their thread's innermost record\n",
                static_cast<long long>(profiler.UnmatchedEnds()));
  }
  std::printf("\n%-24s %12s %9s\n", "category", "self ms", "% step");
  for (const std::string& cat : Categories()) {
    std::printf("%-24s %12.2f %8.1f%%\n", cat.c_str(), per_step_ms(categories[cat]),
                pct(categories[cat]));
  }

  if (!json_out.empty()) {
    nlohmann::json j;
    j["model"] = bm.name;
    j["config"] = c.name;
    j["dtype"] = dtype;
    j["batch"] = c.batch;
    j["inputs_length"] = c.in_len;
    j["targets_length"] = c.tg_len;
    j["intra_op_threads"] = at::get_num_threads();
    j["warmup_steps"] = warmup;
    j["steps"] = steps;
    j["step_ms_recorded"] = step_ms;
    j["step_ms_unrecorded"] = plain_s * 1e3;
    nlohmann::json jsteps = {{"recorded", nlohmann::json::array()},
                             {"unrecorded", nlohmann::json::array()}};
    for (int i = 0; i < steps; ++i) {
      jsteps["recorded"].push_back(recorded[i] * 1e3);
      jsteps["unrecorded"].push_back(plain[i] * 1e3);
    }
    j["each_step_ms"] = jsteps;
    j["op_self_ms_per_step"] = per_step_ms(total.op_self_s);
    j["outside_ops_ms_per_step"] = per_step_ms(total.outside_ops_s);
    j["coverage"] = total.op_self_s / n / step_s;
    nlohmann::json jr = nlohmann::json::array();
    for (const OpRow& r : rows) {
      jr.push_back({{"label", r.label},
                    {"op", r.op},
                    {"phase", t5xx::bench::PhaseName(r.phase)},
                    {"category", Category(r)},
                    {"main_thread", r.main_thread},
                    {"calls_per_step", r.calls / n},
                    {"self_ms_per_step", per_step_ms(r.self_s)},
                    {"inclusive_ms_per_step", per_step_ms(r.inclusive_s)},
                    {"percent_of_step", pct(r.self_s)}});
    }
    j["rows"] = jr;
    nlohmann::json jp = nlohmann::json::object();
    for (const auto& [phase, s] : phases) {
      jp[t5xx::bench::PhaseName(phase)] = {{"op_self_ms_per_step", per_step_ms(s.op_self_s)},
                                           {"outside_ops_ms_per_step", per_step_ms(s.outside_ops_s)},
                                           {"op_calls_per_step", s.op_calls / n}};
    }
    j["phases"] = jp;
    nlohmann::json jc = nlohmann::json::object();
    for (const std::string& cat : Categories()) jc[cat] = per_step_ms(categories[cat]);
    j["categories_self_ms_per_step"] = jc;
    std::ofstream out(json_out);
    out << j.dump(1) << "\n";
    if (!out) Fail("--json_out='" + json_out + "': cannot write the file");
    std::printf("\nwrote %s\n", json_out.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  t5xx::device::ApplyOpenMpWaitDefaults(argv);  // as the t5xx binary (openmp_wait.h)
  try {
    return Run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const t5xx::Error& e) {
    std::cerr << "t5xx_step_profile: " << e.what() << std::endl;
    return 2;
  }
}
