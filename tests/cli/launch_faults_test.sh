#!/usr/bin/env bash
# `t5xx launch` with two launchers on 127.0.0.1 standing for two hosts
# (--nnodes=2, one process each), against the faults a new user's trial of
# public torchrun reports found (issue 50):
#  - a stray launcher given a --node_rank in use while the job runs is
#    refused alone, and the job still restarts after a kill -9 (t5x#832);
#  - a killed launcher, started again with its own command, takes its place
#    in the job's next round and the job finishes (pytorch#150916);
#  - SIGTERM to a rank under --max_restarts=2 stops both launchers with
#    status 143, without a restart (pytorch#147064);
#  - SIGTERM to host 0's rank while it starts stops host 1 promptly with
#    143 (pytorch#67742);
#  - SIGUSR1 to a launcher (Slurm's --signal warning) stops the job after a
#    saved step, status 138 there and 143 on the other host (pytorch#154849);
#  - SIGTERM to a launcher waiting for the others: status 143 and says so;
#  - a --master_port held by another program: one error line, no libtorch
#    log lines (pytorch#126510).
# Usage: launch_faults_test.sh /path/to/t5xx
set -u
T5XX="$1"
work="$(mktemp -d)"
trap 'kill -9 $(jobs -p) 2>/dev/null; pkill -9 -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
. "$(dirname "$0")/cli_lib.sh"

demo_corpus_or_exit
args=(--gin_file=configs/examples/t5_1_1_tiny_demo.gin --data_dir="$work/data"
      --gin.BATCH_SIZE=4 "--gin.TASK_FEATURE_LENGTHS={'inputs': 32, 'targets': 8}"
      --gin.network.T5Config.vocab_size=1152 --gin.EVAL_STEPS=1 --gin.train.eval_period=1000
      --gin.utils.SaveCheckpointConfig.period=10)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# host NAME K PORT MAX_RESTARTS STEPS: launcher K of job NAME in the
# background (its pid in NAME.pidK, its log NAME.lK.log, its status
# appended as "rc=N").
host() {
  local name="$1" k="$2" p="$3" r="$4" steps="$5"
  ( timeout 300 "$T5XX" launch --nnodes=2 --node_rank="$k" --nproc_per_node=1 --master_addr=127.0.0.1 \
      --master_port="$p" --max_restarts="$r" --stop_grace_seconds=10 -- "$T5XX" train "${args[@]}" \
      --gin.TRAIN_STEPS="$steps" --gin.MODEL_DIR="$work/$name" >"$work/$name.l$k.log" 2>&1 &
    echo $! >"$work/$name.pid$k"; wait $!; echo "rc=$?" >>"$work/$name.l$k.log" ) &
}
# NAME K: the launcher's pid (the child of its `timeout`), its train process.
launcher() { local t; t="$(cat "$work/$1.pid$2" 2>/dev/null)"; [ -n "$t" ] && pgrep -P "$t" | head -1; }
rank() { local l; l="$(launcher "$1" "$2")"; [ -n "$l" ] && pgrep -P "$l" | head -1; }
# kill_pid SIGNAL PID: only a real pid (an empty one would signal the group).
kill_pid() { [ -n "$2" ] && [ "$2" -gt 1 ] && kill "-$1" "$2"; }
until_step() {  # NAME STEP: waits (120 s at most) for checkpoint_STEP
  for _ in $(seq 1200); do [ -e "$work/$1/checkpoint_$2/checkpoint" ] && return 0; sleep 0.1; done; return 1
}
rc_of() { grep -o '^rc=[0-9]*' "$work/$1.l$2.log" | tail -1 | cut -d= -f2; }
ended() {  # NAME: waits (180 s at most) until both launchers ended
  for _ in $(seq 1800); do [ -n "$(rc_of "$1" 0)" ] && [ -n "$(rc_of "$1" 1)" ] && return 0; sleep 0.1; done; return 1
}

# 1. A stray launcher while the job runs; then a kill -9 and a restart.
p=$(port); host stray 0 "$p" 1 300; host stray 1 "$p" 1 300
until_step stray 10
timeout 60 "$T5XX" launch --nnodes=2 --node_rank=1 --nproc_per_node=1 --master_addr=127.0.0.1 \
  --master_port="$p" -- sh -c 'echo stray' >"$work/stray.x.log" 2>&1
src=$?
kill_pid 9 "$(rank stray 1)"
ended stray
show="$work/stray.x.log" check "a stray launcher with a --node_rank in use is refused alone" \
  bash -c '[ "$0" = 2 ] && grep -q "^t5xx: error: t5xx launch: --node_rank=1 was given to two hosts, .*; the job of .* goes on$" "$1"' "$src" "$work/stray.x.log"
show="$work/stray.l0.log $work/stray.l1.log" check "and the job restarts after a kill -9 and finishes" \
  bash -c '[ "$(grep -o "^rc=.*" "$0" "$1" | cut -d= -f2 | tr -d "\n")" = 00 ] && [ -e "$2/checkpoint_300/checkpoint" ] &&
           grep -q "restarting every process of this host, restart 1" "$0"' \
  "$work/stray.l0.log" "$work/stray.l1.log" "$work/stray"

# 2. A killed launcher started again with its own command.
p=$(port); host repl 0 "$p" 2 300; host repl 1 "$p" 2 300
until_step repl 10
kill_pid 9 "$(launcher repl 1)"
sleep 1
host repl 1 "$p" 2 300
ended repl
show="$work/repl.l0.log $work/repl.l1.log" check "a killed launcher started again takes its place and the job finishes" \
  bash -c '[ "$(grep -o "^rc=.*" "$0" "$1" | cut -d= -f2 | tr -d "\n")" = 00 ] && [ -e "$2/checkpoint_300/checkpoint" ]' \
  "$work/repl.l0.log" "$work/repl.l1.log" "$work/repl"

# 3. SIGTERM to a rank under --max_restarts=2: the job stops, no restart.
p=$(port); host term 0 "$p" 2 100000; host term 1 "$p" 2 100000
until_step term 10
kill_pid TERM "$(rank term 1)"
ended term
show="$work/term.l0.log $work/term.l1.log" check "SIGTERM to a rank under --max_restarts stops both with 143, no restart" \
  bash -c '[ "$(grep -o "^rc=.*" "$0" "$1" | cut -d= -f2 | tr "\n" " ")" = "143 143 " ] && ! grep -q restarting "$0" "$1" &&
           grep -q "^\[stopped\] SIGTERM after step" "$1" && grep -q "^\[stopped\] a stop signal to another process" "$0"' \
  "$work/term.l0.log" "$work/term.l1.log"

# 4. SIGTERM to host 0's rank while it starts: host 1 ends promptly.
p=$(port); T5XX_JOIN_TIMEOUT=60 host early 0 "$p" 0 1000; sleep 0.3; T5XX_JOIN_TIMEOUT=60 host early 1 "$p" 0 1000
for _ in $(seq 200); do r=$(rank early 0 2>/dev/null); [ -n "$r" ] && break; sleep 0.05; done
kill_pid TERM "$r"
start=$SECONDS
ended early
show="$work/early.l0.log $work/early.l1.log" check "SIGTERM to a starting rank ends both hosts with 143 within 20 s ($((SECONDS - start)) s)" \
  bash -c '[ "$(grep -o "^rc=.*" "$0" "$1" | cut -d= -f2 | tr "\n" " ")" = "143 143 " ] && [ "$2" -lt 20 ]' \
  "$work/early.l0.log" "$work/early.l1.log" "$((SECONDS - start))"

# 5. SIGUSR1 to a launcher: forwarded, the job stops after a saved step.
p=$(port); host usr 0 "$p" 0 100000; host usr 1 "$p" 0 100000
until_step usr 10
kill_pid USR1 "$(launcher usr 1)"
ended usr
n=$(grep -ohE '^\[stopped\] .* after step [0-9]+' "$work/usr.l0.log" "$work/usr.l1.log" | grep -oE '[0-9]+$' | sort -u)
# (Host 1, whose process got SIGUSR1, ends 138; host 0's, stopped by
# another's signal, 143.)
show="$work/usr.l0.log $work/usr.l1.log" check "SIGUSR1 to a launcher stops the job after one saved step ($n), status 138 there" \
  bash -c '[ "$(grep -o "^rc=.*" "$0" "$1" | cut -d= -f2 | tr "\n" " ")" = "143 138 " ] && [ "$(echo "$2" | wc -w)" = 1 ] && [ -e "$3/checkpoint_$2/checkpoint" ]' \
  "$work/usr.l0.log" "$work/usr.l1.log" "$n" "$work/usr"

# 6. SIGTERM to a launcher waiting for the others.
p=$(port)
"$T5XX" launch --nnodes=2 --node_rank=1 --nproc_per_node=1 --master_addr=127.0.0.1 --master_port="$p" \
  -- sh -c 'echo hi' >"$work/wait.log" 2>&1 & w=$!
sleep 2; kill -TERM $w; wait $w; rc=$?
show="$work/wait.log" check "SIGTERM to a launcher waiting for the rendezvous: 143, and says so" \
  bash -c '[ "$0" = 143 ] && grep -q "^t5xx launch: stopped by SIGTERM while" "$1"' "$rc" "$work/wait.log"

# 7. The master port held by another program: one line.
p=$(port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$p" & squatter=$!
sleep 0.5
"$T5XX" launch --nproc_per_node=1 --master_port="$p" -- sh -c 'echo hi' >"$work/busy.log" 2>&1; rc=$?
kill $squatter 2>/dev/null
show="$work/busy.log" check "a --master_port in use: exit 2 and one line naming the port and the fix" \
  bash -c '[ "$0" = 2 ] && [ "$(wc -l <"$1")" = 1 ] && grep -q "^t5xx: error: t5xx launch: cannot serve the launch rendezvous at 127.0.0.1:'"$p"': .*choose another --master_port" "$1"' "$rc" "$work/busy.log"

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
