#!/usr/bin/env bash
# The multi-host rig (issue 35): hosts made of Linux network namespaces on
# this machine -- each namespace its own network stack with one address in
# a private test range (10.213.N.0/24), its veth joined to a bridge the test
# makes -- sharing this machine's filesystem as hosts share MODEL_DIR. One
# `t5xx launch` per host with torchrun's multi-node flags.
#
#  - 2 hosts x 2 processes (2x2 mesh, ZeRO-3) give bitwise the losses
#    (metrics.jsonl) and the final checkpoint of the same mesh on one host;
#  - so do they over a link with 100 ms latency and 1% loss each way (tc
#    netem where the kernel has it, else link_emulator.py: two TUN devices
#    and a relay);
#  - a cut link and a killed host stop every surviving rank within the
#    timeouts, naming the ranks and the host, and the checkpoints committed
#    before stay restorable;
#  - --max_restarts=1: a rank killed mid-run on host 1 restarts the job on
#    both hosts -- every launcher joins the same new round, however soon it
#    notices (issue 50) -- and the final checkpoint equals the
#    uninterrupted run's, bitwise; twice, the second time killing the rank
#    the moment its host's restart would race the other host's;
#  - SIGTERM to one rank of host 1 (a preempted node) stops every rank of
#    both hosts after the same step, saved together in one checkpoint, well
#    within 60 s, and the same command resumes to the uninterrupted run's
#    final checkpoint, bitwise;
#  - bad launches are named as what they are, on every host: --node_rank=0
#    on two hosts, one --node_rank on two of three hosts, different
#    --nnodes, different --nproc_per_node, the master's port in use, an
#    unreachable --master_addr;
#  - a host that never joins is named within T5XX_JOIN_TIMEOUT.
# Each run's mean steps/s is printed (the closing note's step times).
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
  [ -n "${relay:-}" ] && kill -9 "$relay" 2>/dev/null
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
# A launch that goes wrong, or a link that is cut, is named well within
# these (not in 5 and 30 minutes).
export T5XX_JOIN_TIMEOUT=30 T5XX_COLLECTIVE_TIMEOUT=10

# Time spent so far, after each part (for CI's budget).
t0=$SECONDS
took() { echo "[$((SECONDS - t0)) s] $*"; }
demo_corpus_or_exit
args=(--gin_file=configs/examples/t5_1_1_tiny_demo.gin --data_dir="$work/data"
      --gin.BATCH_SIZE=4 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}"
      --gin.network.T5Config.vocab_size=1152 --gin.EVAL_STEPS=1 --gin.train.stats_period=1
      --gin.utils.SaveCheckpointConfig.period=4
      --gin.partitioning.PjitPartitioner.num_partitions=2
      --gin.partitioning.standard_logical_axis_rules.parameter_partitioning_dims=2)
# on_host I LOG ARGS...: host I's launch of `t5xx train ARGS`, 2 processes
# of a 2-host run (--nnodes, --node_rank I, host 0 the master at
# $master; $launch_flags added).
on_host() {
  local i="$1" log="$2"; shift 2
  timeout 300 ip netns exec "${hosts[$i]}" "$T5XX" launch --nnodes=2 --node_rank="$i" \
    --nproc_per_node=2 --master_addr="$master" --master_port=29611 --stop_grace_seconds=5 \
    ${launch_flags:-} -- "$T5XX" train "${args[@]}" "$@" >"$log" 2>&1
}
# both_hosts NAME ARGS...: hosts 0 and 1 train into $work/NAME (logs
# NAME.h0.log, NAME.h1.log; exit statuses "rc0 rc1" in NAME.rc).
both_hosts() {
  local name="$1"; shift
  on_host 0 "$work/$name.h0.log" --gin.MODEL_DIR="$work/$name" "$@" & local a=$!
  on_host 1 "$work/$name.h1.log" --gin.MODEL_DIR="$work/$name" "$@" & local b=$!
  local r0 r1
  wait $a; r0=$?; wait $b; r1=$?
  echo "$r0 $r1" >"$work/$name.rc"
}
# statuses NAME: sets rc0, rc1 from NAME.rc.
statuses() { read -r rc0 rc1 <"$work/$1.rc"; }
# The loss of every train step, exactly as written.
losses() { grep -o '"loss":[^,]*' "$1/train/metrics.jsonl"; }
# Mean steps/s after the first step.
speed() {
  grep -o '"timing/steps_per_second":[0-9.e+-]*' "$1/train/metrics.jsonl" | tail -n +2 |
    awk -F: '{ s += $2; n++ } END { printf "%.3f steps/s", n ? s / n : 0 }'
}
# until_committed DIR STEP: waits (at most 120 s) for DIR/checkpoint_STEP.
until_committed() {
  for _ in $(seq 6000); do [ -e "$1/checkpoint_$2/checkpoint" ] && return 0; sleep 0.02; done
  return 1
}

# The reference: the same 2x2 mesh, 4 processes of this host.
timeout 300 "$T5XX" launch --nproc_per_node=4 -- "$T5XX" train "${args[@]}" \
  --gin.TRAIN_STEPS=24 --gin.MODEL_DIR="$work/one" >"$work/one.log" 2>&1
show="$work/one.log" check "one host, 2x2 ZeRO-3, trains" test -d "$work/one/checkpoint_24"

both_hosts two --gin.TRAIN_STEPS=24; statuses two
show="$work/two.h0.log $work/two.h1.log" check "2 hosts x 2 processes train and exit 0" \
  test "$rc0$rc1" = 00
show="$work/two.h1.log" check "host 1's processes bind Gloo to their route to the master" \
  grep -q "collectives over Gloo on $net.2 (interface ${hosts[1]}p)" "$work/two.h1.log"
check "the 2-host run logs the one-host run's losses, bitwise" \
  diff <(losses "$work/one") <(losses "$work/two")
check "and writes the one-host run's final checkpoint, bitwise" \
  diff -r "$work/one/checkpoint_24" "$work/two/checkpoint_24"
echo "step time: one host $(speed "$work/one"); 2 hosts $(speed "$work/two")"

took "clean runs done"
# --max_restarts: a rank of host 1 killed after checkpoint_4; both hosts
# restart their processes, which resume from the latest checkpoint.
launch_flags=--max_restarts=1 both_hosts restart --gin.TRAIN_STEPS=24 & job=$!
until_committed "$work/restart" 4
# (a rank: argv "$T5XX train ...", not the launcher or `timeout` above it)
victim=$(for p in $(ip netns pids "${hosts[1]}"); do
  tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q "^$T5XX train " && echo "$p"; done | head -1)
kill -9 "$victim"
wait $job
show="$work/restart.h0.log $work/restart.h1.log" check "a rank killed on host 1 restarts the job on both hosts" \
  bash -c 'grep -q "restarting every process of this host, restart 1 of at most 1" "$0" && grep -q "restarting every process of this host, restart 1 of at most 1" "$1" && grep -q "^\[setup\] restart 1 of the job, after: host [^ ]* ($2.2): rank [23] (pid [0-9]*) was killed by signal 9" "$0"' \
  "$work/restart.h0.log" "$work/restart.h1.log" "$net"
show="$work/restart.h0.log" check "the restarted job's final checkpoint equals the uninterrupted run's, bitwise" \
  diff -r "$work/one/checkpoint_24" "$work/restart/checkpoint_24"
check "the restart is in the TensorBoard metrics" grep -q '"restarts":1' "$work/restart/train/metrics.jsonl"

# Again with the race of issue 50: host 1's launcher restarts at once while
# host 0's ranks still run the previous attempt (their collective timeout is
# 10 s): the new round waits for host 0's launcher, which stops its ranks
# within a poll of the round's failure.
launch_flags=--max_restarts=1 both_hosts race --gin.TRAIN_STEPS=24 & job=$!
until_committed "$work/race" 8
victim=$(for p in $(ip netns pids "${hosts[1]}"); do
  tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q "^$T5XX train " && echo "$p"; done | tail -1)
start=$SECONDS
kill -9 "$victim"
wait $job
statuses race
show="$work/race.h0.log $work/race.h1.log" check "the racing restart recovers on both hosts ($((SECONDS - start)) s)" \
  bash -c '[ "$0$1" = 00 ] && grep -q "round of .* failed\|restarting every process of this host, restart 1" "$2"' \
  "$rc0" "$rc1" "$work/race.h0.log"
show="$work/race.h0.log" check "and ends with the uninterrupted run's final checkpoint, bitwise" \
  diff -r "$work/one/checkpoint_24" "$work/race/checkpoint_24"

took "restart done"
# SIGTERM to one rank of host 1 (what a scheduler sends a preempted node):
# every rank of both hosts stops after the same step and saves it.
both_hosts term --gin.TRAIN_STEPS=24 & job=$!
until_committed "$work/term" 4
victim=$(for p in $(ip netns pids "${hosts[1]}"); do
  tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q "^$T5XX train " && echo "$p"; done | head -1)
start=$SECONDS
kill -TERM "$victim"
wait $job
took=$((SECONDS - start))
statuses term
n=$(grep -ohE '^\[stopped\] .* after step [0-9]+' "$work/term.h0.log" "$work/term.h1.log" | grep -oE '[0-9]+$' | sort -u)
show="$work/term.h0.log $work/term.h1.log" check "SIGTERM to one rank stops both hosts within 60 s ($took s) after one agreed step ($n)" \
  bash -c '[ "$0" -lt 60 ] && [ "$(echo "$1" | wc -w)" = 1 ] && [ "$(grep -c "^\[stopped\] " "$2" "$3" | awk -F: "{ s += \$2 } END { print s }")" = 4 ] &&
           grep -q "^\[stopped\] SIGTERM after step $1" "$3" && grep -q "^\[stopped\] a stop signal to another process of the run after step $1" "$2" &&
           [ -e "$4/checkpoint_$1/checkpoint" ] && [ "$5" = 143 ] && [ "$6" = 143 ]' \
  "$took" "$n" "$work/term.h0.log" "$work/term.h1.log" "$work/term" "$rc0" "$rc1"
both_hosts term --gin.TRAIN_STEPS=24; statuses term
show="$work/term.h0.log" check "the same command resumes from it to the uninterrupted run's checkpoint, bitwise" \
  bash -c '[ "$0$1" = 00 ] && diff -r "$2" "$3"' "$rc0" "$rc1" "$work/one/checkpoint_24" "$work/term/checkpoint_24"

took "stop signal done"
# A link with 100 ms latency and 1% loss each way: the same results.
if ip netns exec "${hosts[0]}" tc qdisc add dev "${hosts[0]}p" root netem delay 100ms loss 1% 2>/dev/null &&
   ip netns exec "${hosts[1]}" tc qdisc add dev "${hosts[1]}p" root netem delay 100ms loss 1% 2>/dev/null; then
  slow_master="$master"; how="tc netem"
else
  # No sch_netem: a TUN link of its own subnet, relayed in user space.
  python3 "$(dirname "$0")/link_emulator.py" t5mh${tag}t0 t5mh${tag}t1 --delay_ms 100 --loss 0.01 \
    >"$work/relay.log" 2>&1 & relay=$!
  for _ in $(seq 100); do grep -q ready "$work/relay.log" && break; sleep 0.05; done
  for i in 0 1; do
    ip link set "t5mh${tag}t$i" netns "${hosts[$i]}"
    ip -n "${hosts[$i]}" addr add "10.214.${net##*.}.$((i + 1))/24" dev "t5mh${tag}t$i"
    ip -n "${hosts[$i]}" link set "t5mh${tag}t$i" up
  done
  slow_master="10.214.${net##*.}.1"; how="link_emulator.py (this kernel has no sch_netem)"
fi
master="$slow_master" both_hosts slow --gin.TRAIN_STEPS=2; statuses slow
show="$work/slow.h0.log $work/slow.h1.log" check "over 100 ms latency and 1% loss ($how) the run finishes" \
  test "$rc0$rc1" = 00
timeout 300 "$T5XX" launch --nproc_per_node=4 -- "$T5XX" train "${args[@]}" \
  --gin.TRAIN_STEPS=2 --gin.MODEL_DIR="$work/one2" >"$work/one2.log" 2>&1
check "with the one-host run's losses, bitwise" diff <(losses "$work/one2") <(losses "$work/slow")
check "and its checkpoint, bitwise" diff -r "$work/one2/checkpoint_2" "$work/slow/checkpoint_2"
echo "step time over 100 ms latency and 1% loss ($how): $(speed "$work/slow")"
[ -n "${relay:-}" ] && kill -9 "$relay" && wait "$relay" 2>/dev/null; relay=

took "latency done"
# A cut link: after checkpoint_4, host 1's cable is pulled.
both_hosts cut --gin.TRAIN_STEPS=100000 & job=$!
until_committed "$work/cut" 4
ip link set "${hosts[1]}v" down
start=$SECONDS
wait $job
took=$((SECONDS - start))
statuses cut
ip link set "${hosts[1]}v" up
show="$work/cut.h0.log $work/cut.h1.log" check "a cut link stops both hosts within the timeouts ($took s)" \
  bash -c '[ "$0" != 0 ] && [ "$1" != 0 ] && [ "$2" -lt 120 ]' "$rc0" "$rc1" "$took"
show="$work/cut.h0.log" check "host 0 names host 1's ranks" \
  grep -q "ranks 2, 3 of the run stopped (on host [^ ]* ($net.2)" "$work/cut.h0.log"
show="$work/cut.h1.log" check "host 1 names the master's host" \
  grep -qE "(rank 0 of the run stopped, or the network to its host [^ ]* \($net.1\) is cut|ranks 0, 1 of the run stopped \(on host [^ ]* \($net.1\))" "$work/cut.h1.log"
last=$(ls -d "$work/cut"/checkpoint_* | sed 's/.*_//' | sort -n | tail -1)
timeout 300 "$T5XX" launch --nproc_per_node=4 -- "$T5XX" train "${args[@]}" \
  --gin.TRAIN_STEPS=$((last + 1)) --gin.MODEL_DIR="$work/cut" >"$work/cut_resume.log" 2>&1
show="$work/cut_resume.log" check "the last checkpoint before the cut ($last) restores and trains on" \
  bash -c 'grep -q "^\[restore\].*step $1" "$0" && test -d "$2/checkpoint_$(($1 + 1))"' \
  "$work/cut_resume.log" "$last" "$work/cut"

took "cut link done"
# A killed host: every process of host 1 killed after checkpoint_4.
both_hosts dead --gin.TRAIN_STEPS=100000 & job=$!
until_committed "$work/dead" 4
for p in $(ip netns pids "${hosts[1]}"); do kill -9 "$p" 2>/dev/null; done
start=$SECONDS
wait $job
took=$((SECONDS - start))
statuses dead
show="$work/dead.h0.log" check "a killed host stops host 0 within the timeouts ($took s), naming its ranks and host" \
  bash -c '[ "$0" != 0 ] && [ "$1" -lt 120 ] && grep -qE "ranks? [23](, 3)? of the run stopped \(on host [^ ]* \($2.2\)" "$3"' \
  "$rc0" "$took" "$net" "$work/dead.h0.log"

took "killed host done"
# Two hosts claiming one --node_rank: named, both sides stop.
on_host 0 "$work/dup0.log" --gin.TRAIN_STEPS=4 --gin.MODEL_DIR="$work/dup" & a=$!
sleep 1
timeout 300 ip netns exec "${hosts[1]}" "$T5XX" launch --nnodes=2 --node_rank=0 \
  --nproc_per_node=2 --master_addr="$master" --master_port=29611 --stop_grace_seconds=5 \
  -- "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/dup" >"$work/dup1.log" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
show="$work/dup0.log $work/dup1.log" check "--node_rank=0 on two hosts stops both, naming it and both hosts" \
  bash -c '[ "$0" != 0 ] && [ "$1" != 0 ] && grep -q "^t5xx: error: t5xx launch: --node_rank=0 was given to two hosts, host [^ ]* ($4.1) and host [^ ]* ($4.2): give each host its own --node_rank" "$2" && grep -q "^t5xx: error: t5xx launch: --node_rank=0 was given to two hosts" "$3"' \
  "$ra" "$rb" "$work/dup0.log" "$work/dup1.log" "$net"

# Three hosts, two of them given --node_rank=1: named on all three.
on3() {  # I NODE_RANK LOG
  timeout 300 ip netns exec "${hosts[$1]}" "$T5XX" launch --nnodes=3 --node_rank="$2" \
    --nproc_per_node=2 --master_addr="$master" --master_port=29611 --stop_grace_seconds=5 \
    -- "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/dup3" >"$3" 2>&1
}
T5XX_JOIN_TIMEOUT=20 on3 0 0 "$work/d30.log" & a=$!
T5XX_JOIN_TIMEOUT=20 on3 1 1 "$work/d31.log" & b=$!
T5XX_JOIN_TIMEOUT=20 on3 2 1 "$work/d32.log" & c=$!
wait $a; ra=$?; wait $b; rb=$?; wait $c; rc=$?
show="$work/d30.log $work/d31.log $work/d32.log" check "one --node_rank on two of three hosts is named on all three" \
  bash -c '[ "$0" != 0 ] && [ "$1" != 0 ] && [ "$2" != 0 ] && for f in "$3" "$4" "$5"; do grep -q "^t5xx: error: t5xx launch: --node_rank=1 was given to two hosts, host [^ ]* (.*) and host [^ ]* (.*): give each host its own --node_rank" "$f" || exit 1; done' \
  "$ra" "$rb" "$rc" "$work/d30.log" "$work/d31.log" "$work/d32.log"

# Hosts launched with different --nnodes: host 1's ranks 2 and 3 think the
# run has 8 processes.
on_host 0 "$work/nn0.log" --gin.TRAIN_STEPS=4 --gin.MODEL_DIR="$work/nn" & a=$!
timeout 300 ip netns exec "${hosts[1]}" "$T5XX" launch --nnodes=4 --node_rank=1 \
  --nproc_per_node=2 --master_addr="$master" --master_port=29611 --stop_grace_seconds=5 \
  -- "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/nn" >"$work/nn1.log" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
show="$work/nn0.log $work/nn1.log" check "hosts launched with different --nnodes are named on both" \
  bash -c 'for f in "$2" "$3"; do grep -q "^t5xx: error: t5xx launch: the hosts were launched differently: host [^ ]* ('"$net"'.1) (--node_rank=0): --nnodes=2 --nproc_per_node=2; host [^ ]* ('"$net"'.2) (--node_rank=1): --nnodes=4 --nproc_per_node=2: give every host the same --nnodes and --nproc_per_node" "$f" || exit 1; done; [ "$0" != 0 ] && [ "$1" != 0 ]' \
  "$ra" "$rb" "$work/nn0.log" "$work/nn1.log"

# Hosts launched with different --nproc_per_node (not a duplicated rank).
on_host 0 "$work/np0.log" --gin.TRAIN_STEPS=4 --gin.MODEL_DIR="$work/np" & a=$!
timeout 300 ip netns exec "${hosts[1]}" "$T5XX" launch --nnodes=2 --node_rank=1 \
  --nproc_per_node=1 --master_addr="$master" --master_port=29611 --stop_grace_seconds=5 \
  -- "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/np" >"$work/np1.log" 2>&1 & b=$!
wait $a; ra=$?; wait $b; rb=$?
show="$work/np0.log $work/np1.log" check "hosts launched with different --nproc_per_node are named on both" \
  bash -c 'for f in "$2" "$3"; do grep -q "^t5xx: error: t5xx launch: the hosts were launched differently: .*(--node_rank=1): --nnodes=2 --nproc_per_node=1: give every host the same" "$f" || exit 1; ! grep -q "given to two hosts" "$f" || exit 1; done; [ "$0" != 0 ] && [ "$1" != 0 ]' \
  "$ra" "$rb" "$work/np0.log" "$work/np1.log"
show="$work/nn0.log" check "and nothing is written to MODEL_DIR" \
  bash -c '! ls -d "$0"/checkpoint_* >/dev/null 2>&1' "$work/nn"

# A host that never joins: host 0's ranks name the missing ranks within
# T5XX_JOIN_TIMEOUT.
start=$SECONDS
T5XX_JOIN_TIMEOUT=10 on_host 0 "$work/alone.log" --gin.TRAIN_STEPS=4 --gin.MODEL_DIR="$work/alone"
rc=$?
show="$work/alone.log" check "a host that never joins is named within the join timeout" \
  bash -c '[ "$0" != 0 ] && [ $(($1)) -lt 60 ] && grep -q "the launch with --node_rank 1 did not join the job at '"$master"':29611 within 10 s" "$2"' \
  "$rc" "$((SECONDS - start))" "$work/alone.log"

# The master's port already taken on its host: rank 0 names the port and
# the flag; host 1's ranks, which reach only the other program there, say
# that no rendezvous answers; nothing is written to MODEL_DIR.
ip netns exec "${hosts[0]}" python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 29611)); s.listen(); time.sleep(60)' "$master" & squatter=$!
sleep 0.5
T5XX_JOIN_TIMEOUT=5 both_hosts inuse --gin.TRAIN_STEPS=4
kill $squatter 2>/dev/null; wait $squatter 2>/dev/null
statuses inuse
show="$work/inuse.h0.log $work/inuse.h1.log" check "a port in use on the master's host is named with --master_port" \
  bash -c '[ "$0" = 2 ] && [ "$1" != 0 ] && grep -q "^t5xx: error: t5xx launch: cannot serve the launch rendezvous at '"$master"':29611: .*Address already in use.*choose another --master_port" "$2" &&
           grep -q "^t5xx: error: reached '"$master"':29611 but no rendezvous answered there within 5 s: another program listens on that port" "$3" && [ ! -e "$4" ]' \
  "$rc0" "$rc1" "$work/inuse.h0.log" "$work/inuse.h1.log" "$work/inuse"

# An unreachable --master_addr (no host has it): host 1's ranks name it and
# the flags within the join timeout.
start=$SECONDS
T5XX_JOIN_TIMEOUT=5 timeout 300 ip netns exec "${hosts[1]}" "$T5XX" launch --nnodes=2 --node_rank=1 \
  --nproc_per_node=2 --master_addr="$net.99" --master_port=29611 --stop_grace_seconds=5 \
  -- "$T5XX" train "${args[@]}" --gin.MODEL_DIR="$work/nomaster" >"$work/nomaster.log" 2>&1
rc=$?
show="$work/nomaster.log" check "an unreachable --master_addr is named within the join timeout" \
  bash -c '[ "$0" = 2 ] && [ $(($1)) -lt 40 ] && grep -q "^t5xx: error: t5xx launch: cannot reach the launch rendezvous at '"$net"'.99:29611 within 5 s: .*are --master_addr and --master_port right" "$2" && [ ! -e "$3" ]' \
  "$rc" "$((SECONDS - start))" "$work/nomaster.log" "$work/nomaster"

took "bad launches done"
echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
