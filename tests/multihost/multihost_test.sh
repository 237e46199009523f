#!/usr/bin/env bash
# The multi-host rig (issue 35): hosts made of Linux network namespaces on
# this machine -- each namespace its own network stack with one address in
# a private test range (10.213.N.0/24), its veth joined to a bridge the test
# makes -- sharing this machine's filesystem as hosts share MODEL_DIR. One
# `t5xx launch` per host with torchrun's multi-node flags.
#
#  - 2 hosts x 2 processes (2x2 mesh, ZeRO-3) give bitwise the losses
#    (metrics.jsonl) and the final checkpoint of the same mesh on one host;
#  - bad launches are named: two hosts with one --node_rank, hosts with
#    different --nnodes;
#  - a host that never joins is named within T5XX_JOIN_TIMEOUT.
#
# Traffic stays in the namespaces the test made; they are removed on every
# exit path. Not root, or no `ip netns`: prints SKIP and the reason and exits
# 77 (ctest's skip).
# Usage: multihost_test.sh /path/to/t5xx   (from the repository root)
set -u
T5XX="$(readlink -f "$1")"
work="$(mktemp -d)"
. "$(dirname "$0")/../cli/cli_lib.sh"
tag=$(($$ % 10000))
net="10.213.$((($$ % 200) + 20))"
hosts=(t5mh${tag}h0 t5mh${tag}h1 t5mh${tag}h2)
bridge=t5mh${tag}br
cleanup() {
  for h in "${hosts[@]}"; do
    for p in $(ip netns pids "$h" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$h" 2>/dev/null
  done
  ip link del "$bridge" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: making network namespaces needs root"
command -v ip >/dev/null || skip "no 'ip' command (iproute2)"
ip link add "$bridge" type bridge 2>"$work/ip.err" || skip "cannot make a bridge: $(cat "$work/ip.err")"
ip link set "$bridge" up
for i in 0 1 2; do
  h=${hosts[$i]}
  ip netns add "$h" || skip "cannot make network namespace $h"
  ip link add "${h}v" type veth peer name "${h}p" || skip "cannot make a veth pair"
  ip link set "${h}p" netns "$h"
  ip link set "${h}v" master "$bridge"
  ip link set "${h}v" up
  ip -n "$h" addr add "$net.$((i + 1))/24" dev "${h}p"
  ip -n "$h" link set "${h}p" up
  ip -n "$h" link set lo up
done
master="$net.1"
# A launch that goes wrong is named well within this (not 5 minutes).
export T5XX_JOIN_TIMEOUT=30

demo_corpus_or_exit
args=(--gin_file=configs/examples/t5_1_1_tiny_demo.gin --data_dir="$work/data"
      --gin.BATCH_SIZE=4 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}"
      --gin.network.T5Config.vocab_size=1152 --gin.EVAL_STEPS=1 --gin.train.stats_period=1
      --gin.utils.SaveCheckpointConfig.period=2 --gin.TRAIN_STEPS=4
      --gin.partitioning.PjitPartitioner.num_partitions=2
      --gin.partitioning.standard_logical_axis_rules.parameter_partitioning_dims=2)
# on_host I LOG ARGS...: host I's launch of `t5xx train ARGS`, 2 processes
# of a 2-host run (--nnodes, --node_rank I, host 0 the master).
on_host() {
  local i="$1" log="$2"; shift 2
  timeout 300 ip netns exec "${hosts[$i]}" "$T5XX" launch --nnodes=2 --node_rank="$i" \
    --nproc_per_node=2 --master_addr="$master" --master_port=29611 --stop_grace_seconds=5 \
    -- "$T5XX" train "${args[@]}" "$@" >"$log" 2>&1
}
# The loss of every train step, exactly as written.
losses() { grep -o '"loss":[^,]*' "$1/train/metrics.jsonl"; }

# The reference: the same 2x2 mesh, 4 processes of this host.
timeout 300 "$T5XX" launch --nproc_per_node=4 -- "$T5XX" train "${args[@]}" \
  --gin.MODEL_DIR="$work/one" >"$work/one.log" 2>&1
show="$work/one.log" check "one host, 2x2 ZeRO-3, trains" test -d "$work/one/checkpoint_4"

on_host 0 "$work/h0.log" --gin.MODEL_DIR="$work/two" & a=$!
on_host 1 "$work/h1.log" --gin.MODEL_DIR="$work/two" & b=$!
wait $a; ra=$?; wait $b; rb=$?
show="$work/h0.log $work/h1.log" check "2 hosts x 2 processes train and exit 0" \
  test "$ra$rb" = 00
show="$work/h1.log" check "host 1's processes bind Gloo to their route to the master" \
  grep -q "collectives over Gloo on $net.2 (interface ${hosts[1]}p)" "$work/h1.log"
check "the 2-host run logs the one-host run's losses, bitwise" \
  diff <(losses "$work/one") <(losses "$work/two")
check "and writes the one-host run's final checkpoint, bitwise" \
  diff -r "$work/one/checkpoint_4" "$work/two/checkpoint_4"

# Two hosts claiming one --node_rank: named, both sides stop.
on_host 0 "$work/dup0.log" --gin.MODEL_DIR="$work/dup" & a=$!
sleep 1
timeout 300 ip netns exec "${hosts[1]}" "$T5XX" launch --nnodes=2 --node_rank=0 \
  --nproc_per_node=2 --master_addr="$master" --master_port=29611 --stop_grace_seconds=5 \
  -- "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/dup" >"$work/dup1.log" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
show="$work/dup0.log $work/dup1.log" check "one --node_rank on two hosts stops both, naming it" \
  bash -c '[ "$0" != 0 ] && [ "$1" != 0 ] && grep -q "claimed by two processes" "$2" && grep -q "claimed by two processes" "$3"' \
  "$ra" "$rb" "$work/dup0.log" "$work/dup1.log"

# Hosts launched with different --nnodes: host 1's ranks 2 and 3 think the
# run has 8 processes.
on_host 0 "$work/nn0.log" --gin.MODEL_DIR="$work/nn" & a=$!
timeout 300 ip netns exec "${hosts[1]}" "$T5XX" launch --nnodes=4 --node_rank=1 \
  --nproc_per_node=2 --master_addr="$master" --master_port=29611 --stop_grace_seconds=5 \
  -- "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/nn" >"$work/nn1.log" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
show="$work/nn0.log $work/nn1.log" check "hosts launched for different numbers of processes are named on both" \
  bash -c '[ "$0" != 0 ] && [ "$1" != 0 ] && grep -q "rank 2 on host .* ('"$net"'.2) for 8.*same --nnodes and --nproc_per_node" "$2" && grep -q "same --nnodes and --nproc_per_node" "$3"' \
  "$ra" "$rb" "$work/nn0.log" "$work/nn1.log"
show="$work/nn0.log" check "and nothing is written to MODEL_DIR" \
  bash -c '! ls -d "$0"/checkpoint_* >/dev/null 2>&1' "$work/nn"

# A host that never joins: host 0's ranks name the missing ranks within
# T5XX_JOIN_TIMEOUT.
start=$SECONDS
T5XX_JOIN_TIMEOUT=10 on_host 0 "$work/alone.log" --gin.MODEL_DIR="$work/alone"
rc=$?
show="$work/alone.log" check "a host that never joins is named within the join timeout" \
  bash -c '[ "$0" != 0 ] && [ $(($1)) -lt 60 ] && grep -q "ranks 2, 3 of 4 did not join the run at '"$master"':29611 within 10 s" "$2"' \
  "$rc" "$((SECONDS - start))" "$work/alone.log"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
