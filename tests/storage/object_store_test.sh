#!/usr/bin/env bash
# The gs:// and s3:// drivers against real servers on 127.0.0.1 started
# here: moto's S3 server and gcp-storage-emulator (both from PyPI, in the
# test venv scripts/setup.sh --test makes), each directly and behind
# fault_proxy.py (100 ms latency, 5% of connections dropped mid-body, bursts
# of 503); then boto3 reads what t5xx wrote and t5xx reads what boto3 wrote;
# then a store that stays down stops a read with the URL named.
# Exits 77 (skip) with the reason when the venv lacks the servers.
# Usage: object_store_test.sh /path/to/storage_object_store_test
set -uo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
. "$here/stores_lib.sh"  # $py, $s3, $gcs; skips without the venv
failures=0
check() { local name="$1"; shift; if "$@" >"$work/out" 2>&1; then echo "PASS $name"; else echo "FAIL $name"; tail -30 "$work/out"; failures=$((failures + 1)); fi; }

filter=
run() {  # NAME S3_ENDPOINT GCS_HOST: the gtest binary against both stores
  check "$1: s3://" env AWS_ENDPOINT_URL="http://127.0.0.1:$2" T5XX_TEST_STORE_ROOT="s3://t5xx-test/$1" "$bin" $filter
  check "$1: gs://" env STORAGE_EMULATOR_HOST="http://127.0.0.1:$3" T5XX_TEST_STORE_ROOT="gs://t5xx-test/$1" "$bin" $filter
}
run direct "$s3" "$gcs"

# Through the fault proxy (fast retries: the budget stays the default).
ps3=$(port); pgcs=$(port)
faults=(--latency-ms 100 --drop 0.05 --burst-every 20 --burst-length 3 --seed 1)
"$py" "$here/fault_proxy.py" --listen "$ps3" --upstream "127.0.0.1:$s3" "${faults[@]}" --stats "$work/ps3.json" &
p1=$!
"$py" "$here/fault_proxy.py" --listen "$pgcs" --upstream "127.0.0.1:$gcs" "${faults[@]}" --stats "$work/pgcs.json" &
p2=$!
wait_port "$ps3" && wait_port "$pgcs"
filter=--gtest_filter=-*ManyObjects*  # (1,005 objects at 100 ms each: the direct run lists them)
run faults "$ps3" "$pgcs"
kill -TERM $p1 $p2; wait $p1 $p2 2>/dev/null
check "the proxy injected drops and 503 bursts (s3: $(cat "$work/ps3.json"), gs: $(cat "$work/pgcs.json"))" \
  "$py" -c 'import json, sys
for f in sys.argv[1:]:
  s = json.load(open(f)); assert s["dropped"] >= 1 and s["status_503"] >= 3, s' "$work/ps3.json" "$work/pgcs.json"

# boto3 reads what t5xx wrote; t5xx reads what boto3 wrote.
check "boto3 reads t5xx's objects" "$py" -c "
import boto3
c = boto3.client('s3', endpoint_url='http://127.0.0.1:$s3')
assert c.get_object(Bucket='t5xx-test', Key='direct/WriteReadStatListGlobDelete/checkpoint_4/checkpoint')['Body'].read() == b'index'
assert c.head_object(Bucket='t5xx-test', Key='direct/LargeObjectsMoveInParallelParts/big.bin')['ContentLength'] == (40 << 20) + 3
c.put_object(Bucket='t5xx-test', Key='from_boto3/a b.txt', Body=b'written by boto3')"
check "t5xx reads boto3's objects" env AWS_ENDPOINT_URL="http://127.0.0.1:$s3" \
  T5XX_TEST_STORE_ROOT="s3://t5xx-test/from_boto3" "$bin" --gtest_filter='*ReadsForeignObject*'

# A store that stays down: the read stops with the URL named, after the
# retry budget.
pdown=$(port)
"$py" "$here/fault_proxy.py" --listen "$pdown" --upstream "127.0.0.1:$s3" --down-after 0 &
wait_port "$pdown"
start=$SECONDS
env AWS_ENDPOINT_URL="http://127.0.0.1:$pdown" T5XX_STORAGE_RETRY_SECONDS=3 \
  T5XX_TEST_STORE_ROOT="s3://t5xx-test/down" "$bin" --gtest_filter='*StoreDown*' >"$work/down.log" 2>&1
check "a store that stays down is named after the retry budget ($((SECONDS - start)) s)" \
  grep -q "GET s3://t5xx-test/down/x failed at 127.0.0.1:$pdown after .* attempts in [0-9]* s: HTTP 503 (the store is down" "$work/down.log"

# TLS spoken to the plain-HTTP server (an https:// endpoint for an http://
# one) fails at once, not after the retry budget.
start=$SECONDS
env AWS_ENDPOINT_URL="https://127.0.0.1:$s3" T5XX_STORAGE_RETRY_SECONDS=60 \
  T5XX_TEST_STORE_ROOT="s3://t5xx-test/down" "$bin" --gtest_filter='*StoreDown*' >"$work/tls.log" 2>&1
elapsed=$((SECONDS - start))
check "an https:// endpoint for an http:// server fails at once, named ($elapsed s)" \
  bash -c '[ "$0" -lt 10 ] && grep -q "cannot reach 127.0.0.1:[0-9]* over TLS: .*wrong version number.*check the endpoint.s scheme" "$1"' \
  "$elapsed" "$work/tls.log"

echo "$failures failed"
[ "$failures" = 0 ]
