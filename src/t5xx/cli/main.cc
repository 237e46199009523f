// The t5xx command line: `t5xx train`, `t5xx config`, `t5xx model_info`,
// `t5xx data
// show|stats|score`, `t5xx build_corpus` (the usage text below).
//
// User errors (t5xx::Error) print one line "t5xx: error: ..." and exit 2.

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <algorithm>
#include <vector>

#include "t5xx/cli/commands.h"
#include "t5xx/device/cpu_runtime.h"
#include "t5xx/device/openmp_wait.h"
#include "t5xx/partitioning/launch/process_environment.h"
#include "t5xx/util/error.h"
#include "t5xx/util/system/stop_signals.h"
#include "t5xx/util/system/host_name.h"
#include "t5xx/util/utf8.h"

namespace {

constexpr char kUsage[] =
    "usage: t5xx <command> [flags]\n"
    "\n"
    "commands:\n"
    "  train         train a model from gin files, as t5x's train.py:\n"
    "                  t5xx train --gin_file=FILE [--gin_file=...]\n"
    "                    [--gin.NAME=VALUE] [--gin_bindings='fn.p = v']\n"
    "                    [--gin_search_paths=a,b] [--data_dir=DIR]\n"
    "                    [--skip_bad_records=true]\n"
    "                    [--device=auto|cpu|cuda|cuda:N] [--allow_tf32=true]\n"
    "                    [--cache_dir=DIR ...] [--seqio_additional_cache_dirs=D1,D2]\n"
    "                    [--peak_flops_per_s=X]\n"
    "                (--device: default auto, a GPU when there is one, else the\n"
    "                CPU; under a launcher, LOCAL_RANK's GPU; infer and eval too;\n"
    "                --allow_tf32: float32 matmuls on a GPU's TF32 tensor cores, as\n"
    "                JAX's default precision there; false: full float32;\n"
    "                the cache directories: see below; --peak_flops_per_s: the\n"
    "                FLOP/s of one process's device timing/mfu divides by, e.g.\n"
    "                1.8e11; default a GPU's data-sheet peak, else the best matmul\n"
    "                peak measured, kept in $T5XX_CACHE_DIR/matmul_peak.json, else\n"
    "                $XDG_CACHE_HOME/t5xx/, else ~/.cache/t5xx/)\n"
    "  infer         decode or score a task with a checkpoint, as t5x's infer.py\n"
    "                (runs/infer.gin: infer.mode = 'predict' | 'score' |\n"
    "                'predict_with_aux'); writes <task>-<mode>.jsonl-NNNNN-of-NNNNN\n"
    "                in resumable chunks; takes train's gin flags:\n"
    "                  t5xx infer --gin_file=MODEL.gin --gin_file=runs/infer.gin\n"
    "                    --gin.CHECKPOINT_PATH=\"'DIR/checkpoint_N'\"\n"
    "                    --gin.INFER_OUTPUT_DIR=\"'OUT'\" --gin.MIXTURE_OR_TASK_NAME=...\n"
    "  eval          decode a task's split and compute its metric_fns, as t5x's\n"
    "                eval.py (runs/eval.gin; seqio's Evaluator): one checkpoint,\n"
    "                or every checkpoint of a directory with\n"
    "                utils.RestoreCheckpointConfig.mode = 'all' (done ones skipped);\n"
    "                writes EVAL_OUTPUT_DIR/inference_eval/<task>-metrics.jsonl\n"
    "                and TensorBoard events\n"
    "  config        validate a train configuration without running it and\n"
    "                print the operative config (what train writes to\n"
    "                MODEL_DIR/config.gin); takes train's gin flags\n"
    "  data show     print a task's examples as JSON lines, ids and decoded text:\n"
    "                  t5xx data show --task=NAME [--split=train] [--n=5]\n"
    "                    [--lengths=inputs=128,targets=32] [--seed=0]\n"
    "                    [--feature_converter=EncDecFeatureConverter --pack=true]\n"
    "                    (or LM-, PrefixLM-, Decoder-, PassThroughFeatureConverter)\n"
    "  data stats    count examples, empty examples (blank lines) and tokens\n"
    "                (padding fraction with a converter):\n"
    "                  t5xx data stats --task=NAME [--split=validation]\n"
    "                    [--max_examples=1000] [--lengths=...] [--feature_converter=...]\n"
    "                    (reports skipped_records with --skip_bad_records=true)\n"
    "  data score    score predictions (one per line) with the task's\n"
    "                postprocess_fn and metric_fns, as seqio's Evaluator:\n"
    "                  t5xx data score --task=NAME --predictions=FILE\n"
    "                    [--split=validation] [--lengths=...]\n"
    "                all take --gin_file/--gin.X/--gin_bindings for tasks and\n"
    "                mixtures defined in gin (t5xx.seqio.register; docs/gin.md),\n"
    "                --module_import=t5.data.mixtures for t5's task catalog,\n"
    "                and --skip_bad_records=true to skip and count malformed\n"
    "                JSON lines and TFRecords instead of failing;\n"
    "                --use_cached=true reads each task's cache (seqio's\n"
    "                use_cached) from the cache directories (see below)\n"
    "  build_corpus  build the demo corpus (C4 format) and its SentencePiece\n"
    "                model from Debian's fortunes and dict-gcide:\n"
    "                  t5xx build_corpus [--data_dir=DIR] [--vocab_size=8000]\n"
    "                    [--max_documents=N (0 = all)] [--overwrite=true]\n"
    "                    [--freedict=true|false]\n"
    "                and, from Debian's dict-freedict-eng-deu, the English-German\n"
    "                pairs of the demo task freedict_en_de_translate\n"
    "                reuses a complete corpus built with the same options,\n"
    "                rebuilds a damaged one, and replaces one built with\n"
    "                other options only with --overwrite=true\n"
    "  cache_tasks   write the offline caches of tasks with a\n"
    "                CacheDatasetPlaceholder, as seqio_cache_tasks (seqio's layout):\n"
    "                  t5xx cache_tasks --output_cache_dir=DIR [--tasks=RE1,RE2]\n"
    "                    [--excluded_tasks=RE,...] [--min_shards=64] [--max_shards=0]\n"
    "                    [--base_seed=N] [--overwrite=true] [--num_threads=1]\n"
    "                    [--worker_index=W --num_workers=N] [--wait_timeout_s=3600]\n"
    "                    [--tasks_additional_cache_dirs=D1,D2] and the gin flags\n"
    "                    [--module_import=t5.data.mixtures] [--tfds_data_dir=DIR]\n"
    "                workers default to the launcher's rank and world size; a\n"
    "                re-run after a kill does only what is missing\n"
    "  export        write a checkpoint as a Hugging Face Transformers model\n"
    "                directory (config.json, model.safetensors, tokenizer files);\n"
    "                the gin flags give the model it was trained with:\n"
    "                  t5xx export --gin_file=MODEL.gin --checkpoint_path=DIR/checkpoint_N\n"
    "                    --output_dir=NEW_DIR [--data_dir=DIR]\n"
    "  import        read a Transformers T5/mT5/ByT5 directory (safetensors, sharded\n"
    "                or not, or pytorch_model.bin) into NEW_DIR/checkpoint_0,\n"
    "                NEW_DIR/model.gin and NEW_DIR/spiece.model:\n"
    "                  t5xx import --hf_model_dir=DIR --output_dir=NEW_DIR\n"
    "                (both: NEW_DIR new or empty, nothing written on an error;\n"
    "                t5xx export --help, t5xx import --help)\n"
    "  convert_checkpoint  a scalable_t5 (umT5) checkpoint's parameters between t5x's\n"
    "                scanned layout and one array per layer (optimizer state dropped):\n"
    "                  t5xx convert_checkpoint --checkpoint_path=DIR/checkpoint_N\n"
    "                    --output_dir=MODEL_DIR --scan_layers=true|false [--param_scan_axis=1]\n"
    "  launch        start N processes of a command on this host, as torchrun:\n"
    "                  t5xx launch --nproc_per_node=N [--master_port=P]\n"
    "                    [--nnodes=M --node_rank=K --master_addr=HOST]\n"
    "                    [--max_restarts=0]\n"
    "                    [--stop_grace_seconds=30] -- t5xx train ...\n"
    "                several hosts: one launch per host, each its --node_rank,\n"
    "                all the same --master_addr/--master_port (host 0's);\n"
    "                one that fails stops the others (SIGTERM, then SIGKILL\n"
    "                after the grace period); the exit status is its own\n"
    "\n"
    "--data_dir defaults to $T5XX_DATA_DIR, else $XDG_CACHE_HOME/t5xx, else\n"
    "~/.cache/t5xx. configs/ of the source tree is on the gin search path.\n"
    "train, infer, eval, config and data take the task cache directories:\n"
    "--seqio_additional_cache_dirs=DIR1,DIR2 (t5x's flag) and --cache_dir=DIR\n"
    "(repeatable) add directories searched, in order, for the caches that\n"
    "`t5xx cache_tasks --tasks=NAME --output_cache_dir=DIR` writes, read when\n"
    "USE_CACHED_TASKS = True (utils.DatasetConfig.use_cached) or --use_cached=true.\n"
    "They take --tfds_data_dir=DIR (t5x's flag) too: the directory every\n"
    "seqio.TfdsDataSource reads TFDS-prepared data from (before the source's\n"
    "tfds_data_dir, $TFDS_DATA_DIR and ~/tensorflow_datasets).\n"
    "$T5XX_DATA_THREADS sets the input pipeline's threads (default: the\n"
    "hardware threads, at most 8); every value reads the same batches.\n"
    "--intra_op_threads=N (any command) sets libtorch's intra-op threads (default:\n"
    "OMP_NUM_THREADS when set, else the cores this process may use -- its affinity\n"
    "mask and cgroup CPU quota -- shared among a launcher's processes on the host).\n"
    "$T5XX_CPU_CACHE_MIB caps the freed CPU tensor memory kept for reuse (default a\n"
    "quarter of the physical memory; 0 turns the cache off).\n"
    "$T5XX_BF16_MATMUL=auto|emulated|native picks the CPU's bfloat16 matmul\n"
    "(auto: native where the CPU has bfloat16 instructions and it accumulates\n"
    "in float32, else float32 on widened operands).\n";

}  // namespace

int main(int argc, char** argv) {
  // OpenMP threads that sleep soon when another thread is descheduled
  // (device/openmp_wait.h); may restart the process once, before any work.
  t5xx::device::ApplyOpenMpWaitDefaults(argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  // The CPU side of libtorch (device/cpu_runtime.h): intra-op threads from
  // the cores this process may use (affinity mask, cgroup quota), shared out
  // among the processes a launcher started on this host (more threads than
  // cores makes every process wait on the others; torchrun sets
  // OMP_NUM_THREADS=1 for the same reason), unless --intra_op_threads=N or
  // OMP_NUM_THREADS says; and the caching CPU allocator.
  try {
    t5xx::device::CpuRuntimeOptions cpu;
    cpu.intra_op_threads = t5xx::device::TakeIntraOpThreadsFlag(args);
    try {
      if (const auto env = t5xx::partitioning::DetectProcessEnvironment()) {
        cpu.processes_per_host = std::max(1, env->local_world_size);
      }
    } catch (const std::exception&) {
      // A malformed launcher environment: `train` reports it.
    }
    t5xx::device::ConfigureCpuRuntime(cpu);
  } catch (const t5xx::Error& e) {
    std::cerr << "t5xx: " << e.what() << std::endl;
    return 2;
  }
  if (args.empty()) {
    std::cout << kUsage;
    return 2;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  // A rank of a launched run says which one it is: "rank 2 of 4 on host h: ".
  const auto RankOfRun = [](const std::string& command) -> std::string {
    if (command != "train" && command != "infer" && command != "eval") return "";
    try {
      const auto env = t5xx::partitioning::DetectProcessEnvironment();
      if (!env || env->world_size == 1) return "";
      return "rank " + std::to_string(env->rank) + " of " + std::to_string(env->world_size) +
             " on host " + t5xx::HostName() + ": ";
    } catch (const std::exception&) {
      return "";  // the malformed environment is the error reported
    }
  };
  try {
    if (command == "train") return t5xx::cli::TrainCommand(args);
    if (command == "config") return t5xx::cli::ConfigCommand(args);
    if (command == "infer") return t5xx::cli::InferCommand(args);
    if (command == "eval") return t5xx::cli::EvalCommand(args);
    if (command == "model_info") return t5xx::cli::ModelInfoCommand(args);
    if (command == "data") return t5xx::cli::DataCommand(args);
    if (command == "build_corpus") return t5xx::cli::BuildCorpusCommand(args);
    if (command == "launch") return t5xx::cli::LaunchCommand(args);
    if (command == "cache_tasks") return t5xx::cli::CacheTasksCommand(args);
    if (command == "export") return t5xx::cli::ExportCommand(args);
    if (command == "import") return t5xx::cli::ImportCommand(args);
    if (command == "convert_checkpoint") return t5xx::cli::ConvertCheckpointCommand(args);
    throw t5xx::Error("unknown command '" + command +
                      "' (commands: train, infer, eval, config, model_info, data, build_corpus, "
                      "cache_tasks, launch, export, import, convert_checkpoint; see t5xx --help)");
  } catch (const t5xx::StopRequested& e) {
    std::cerr << "t5xx: " + RankOfRun(command) + "stopped by " +
                     t5xx::StopSignalName(e.signal) + " " + e.what() + "\n"
              << std::flush;
    return 128 + e.signal;
  } catch (const t5xx::Error& e) {
    // Bytes that are not UTF-8 (from a flag, a file name, a gin file) are
    // shown as \xNN, never written raw to the terminal.
    // One write, so that the ranks of a launch sharing a terminal do not
    // interleave their lines.
    std::cerr << "t5xx: error: " + RankOfRun(command) + t5xx::EscapeInvalidUtf8(e.what()) + "\n"
              << std::flush;
    return 2;
  } catch (const std::exception& e) {
    // One line: libtorch appends a C++ backtrace to its messages.
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    std::cerr << "t5xx: internal error: " + t5xx::EscapeInvalidUtf8(what) + "\n" << std::flush;
    return 1;
  }
}
