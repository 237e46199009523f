#!/usr/bin/env bash
# `t5xx cache_tasks` end to end: bad flags give one clear error (exit 2); a
# gin-defined task with a CacheDatasetPlaceholder is cached in seqio's layout
# with hand-counted stats; a second run skips it, --overwrite rebuilds it;
# two worker processes write the same bytes as one process, and so does a
# re-run after a worker is killed with SIGKILL.
# Usage: cache_tasks_test.sh /path/to/t5xx
set -u
T5XX="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"

# Three source files: "s<s> line <l>", l = 1 .. 5 + 3s (5 + 8 + 11 = 24 lines).
for s in 0 1 2; do
  for l in $(seq 1 $((5 + 3 * s))); do echo "s$s line $l"; done >"$work/src-$s.txt"
done
cat >"$work/task.gin" <<GIN
from __gin__ import dynamic_registration
import seqio
from seqio import preprocessors

seqio.Task:
  name = 'cli_cached_lines'
  source = @seqio.TextLineDataSource()
  preprocessors = [
      @preprocessors.rekey,
      @preprocessors.tokenize,
      @seqio.CacheDatasetPlaceholder(),
      @preprocessors.append_eos,
  ]
  output_features = {'targets': @seqio.Feature()}
seqio.TextLineDataSource.split_to_filepattern = {'train': '$work/src-*.txt'}
preprocessors.rekey.key_map = {'targets': 'text'}
seqio.Feature.vocabulary = @seqio.ByteVocabulary()
t5xx.seqio.register.tasks = [@seqio.Task()]
GIN
task=(--gin_file="$work/task.gin" --data_dir="$work/nodata")

expect_error no_output_dir "--output_cache_dir=DIR is required" -- "$T5XX" cache_tasks "${task[@]}"
expect_error arrayrecord "--output_format=arrayrecord is not supported" -- \
  "$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/c" --output_format=arrayrecord
expect_error negative_min_shards "--min_shards must be an integer >= 0, got '-1'" -- \
  "$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/c" --min_shards=-1
expect_error bad_worker "--worker_index must be in [0, --num_workers = 2), got 2" -- \
  "$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/c" --worker_index=2 --num_workers=2
expect_error unknown_flag "unknown flag '--min_shard'" -- \
  "$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/c" --min_shard=3
expect_error bad_regex "--tasks: 'cli_(' is not a valid regular expression" -- \
  "$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/c" --tasks='cli_('

out="$work/one"
show="$work/one.log"
check run "$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$out" --min_shards=4 \
  --tasks='cli_.*' >"$work/one.log" 2>&1
dir="$out/cli_cached_lines"
check completed test -f "$dir/COMPLETED"
check no_work_dir test ! -e "$dir/.t5xx_cache_tasks"
for j in 0 1 2 3; do check "shard_$j" test -f "$dir/train.tfrecord-0000$j-of-00004"; done
# Tokens: the bytes of the 24 lines ("s<s> line <l>": 9 bytes, 10 for l = 10
# and 11 of file 2), EOS excluded: 24 * 9 + 2 = 218; the longest has 10.
printf '{\n  "examples": 24,\n  "targets_max_tokens": 10,\n  "targets_tokens": 218\n}\n' \
  >"$work/stats.want"
show="$dir/stats.train.json"
check stats cmp -s "$dir/stats.train.json" "$work/stats.want"
show="$work/one.log"
check report grep -q "cli_cached_lines train: examples 24, tokens 218, shards 4" "$work/one.log"

# A second run skips the cached task; --overwrite rebuilds it (same bytes).
cp -r "$dir" "$work/first"
"$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$out" --min_shards=4 >"$work/two.log" 2>&1
show="$work/two.log"
check skipped grep -q "skipped cli_cached_lines: it is cached in '$dir'" "$work/two.log"
"$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$out" --min_shards=4 --overwrite \
  >"$work/three.log" 2>&1
show="$work/three.log"
check overwrite grep -q "cli_cached_lines train: examples 24" "$work/three.log"
check overwrite_same_bytes diff -r "$work/first" "$dir"

# Two workers (processes), as a launcher would start them.
"$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/two" --min_shards=4 \
  --worker_index=1 --num_workers=2 >"$work/w1.log" 2>&1 &
w1=$!
"$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/two" --min_shards=4 \
  --worker_index=0 --num_workers=2 >"$work/w0.log" 2>&1
rc0=$?
wait "$w1"
rc1=$?
show="$work/w0.log $work/w1.log"
check workers_ok test "$rc0" = 0 -a "$rc1" = 0
check workers_same_bytes diff -r "$work/first" "$work/two/cli_cached_lines"

# kill -9: worker 0 of 2 publishes its map items (0 and 2), then waits for
# worker 1's; killed there, a single-worker re-run does the rest.
killed="$work/killed/cli_cached_lines/.t5xx_cache_tasks/train"
"$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/killed" --min_shards=4 \
  --worker_index=0 --num_workers=2 --wait_timeout_s=120 >"$work/k.log" 2>&1 &
k=$!
for _ in $(seq 300); do [ -d "$killed/map-00000" ] && [ -d "$killed/map-00002" ] && break; sleep 0.1; done
kill -9 "$k"; wait "$k" 2>/dev/null
check killed_left_maps test -d "$killed/map-00002" -a ! -e "$killed/map-00001"
"$T5XX" cache_tasks "${task[@]}" --output_cache_dir="$work/killed" --min_shards=4 \
  >"$work/k2.log" 2>&1
show="$work/k2.log"
check killed_rerun_same_bytes diff -r "$work/first" "$work/killed/cli_cached_lines"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
