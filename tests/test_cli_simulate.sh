#!/bin/sh
# test_cli_simulate.sh — `perfcast simulate` as a user runs it: answers that
# follow by hand (computation only: W / step time; one transfer of S bytes per
# step: B / S at every W, also over the steady window after the warm-up),
# the warm-up's fallback to the whole run, the --json document's shape, the fixtures in
# tests/data/simulate/, what-ifs, the cheapest setup, and invalid input: exit
# status 2 and one line on stderr naming the operation and the field.
# Ends with "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
BIN=${PERFCAST_BIN:-build/perfcast}
D=tests/data/simulate
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# expect NAME PATTERN CMD... — CMD exits 0 and its stdout has PATTERN
expect() {
    name=$1 pat=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    if [ "$got" != 0 ]; then bad "$name: exit $got: $(head -c 300 "$TMP/err")"; return; fi
    if ! grep -q -- "$pat" "$TMP/out"; then bad "$name: no \"$pat\" in: $(head -c 400 "$TMP/out")"; return; fi
    ok
}

# refuse NAME PATTERN CMD... — exit 2, one line on stderr with PATTERN
refuse() {
    name=$1 pat=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    if [ "$got" != 2 ]; then bad "$name: exit $got, want 2"; return; fi
    if [ "$(wc -l <"$TMP/err" | tr -d ' ')" != 1 ]; then bad "$name: stderr: $(cat "$TMP/err")"; return; fi
    if ! grep -q -- "$pat" "$TMP/err"; then bad "$name: no \"$pat\" in: $(cat "$TMP/err")"; return; fi
    ok
}

# 0.25 s of computation per step: W / 0.25 = 4, 8, 12 steps/s
cat >"$TMP/compute.json" <<'J'
{"batch_size": 10, "steps": [{"ops": [{"id": "fwd", "resource": "worker", "duration": 0.1},
  {"id": "bwd", "resource": "worker", "duration": 0.15, "deps": ["fwd"]}]}]}
J
expect "compute W=3" '"workers":3,"steps_per_s":{"mean":12.0' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3 --json
expect "samples/s" '"samples_per_s":{"mean":120.0' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3 --json
expect "text table" 'no saturation up to W = 3: throughput keeps growing' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3
# one value of W compares nothing: no saturation point, and no claim that throughput keeps growing
expect "one W" 'servers 1 (one value of W: saturation needs two or more)' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 3
# a mixed list: ranges and single counts; computation only, so W = 8 runs 8 x 4 steps/s
expect "mixed workers" '"workers":8,"steps_per_s":{"mean":32.0' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..2,8 --json
expect "mixed workers, no saturation" '"saturation_workers":null,"points":.*"no_saturation_up_to":8' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..2,8 --json
# the mixed list as a user types it: W = 32 runs 32 x 4 = 128 steps/s, and W = 4, 8, 32
# follow 1..3 in the answer
expect "mixed workers 1..4,8,32" '"workers":4,.*"workers":8,.*"workers":32,"steps_per_s":{"mean":128.0' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..4,8,32 --json
# the steady window: the 100 steps of each of 3 workers end in rounds of 3
# every 0.25 s; the 50th ends in round 17: (4.25, 25] holds 249 steps
expect "window" '"workers":3,.*"window":{"from_s":4.25,"to_s":25.0,"steps":249.0}' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3 --json
expect "warm-up echoed" '"steps_per_worker":100,"warmup_steps":7,' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3 --warmup 7 --json
expect "total steps: 4 per worker at W = 3" '"workers":3,.*"steps_per_worker":4,' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3 --total-steps 10 --json
expect "total steps in the text" '^10 steps over all workers: each of W runs 10/W, rounded up' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3 --total-steps 10
expect "warm-up 0: whole run" '"workers":2,.*"window":{"from_s":0.0,"to_s":25.0,"steps":200.0}' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3 --warmup 0 --json
expect "warm-up 0 in the text" 'steps/s over the whole run' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..3 --warmup 0
# 2 x 10 steps end by t_b: a warm-up of 20 leaves no window: whole run, window null, a note
expect "fallback" '"workers":2,"steps_per_s":{"mean":8.0,.*"window":null' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 2 --steps 10 --warmup 20 --json
expect "fallback note" '^note: servers 1, workers 2: the warm-up of 20 steps leaves no step' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 2 --steps 10 --warmup 20

# 125 MB per step at 10 Gbit/s (1.25e9 bytes/s): B / S = 10 steps/s at every W
cat >"$TMP/transfer.json" <<'J'
{"steps": [{"ops": [{"id": "params", "resource": "downlink", "bytes": 125000000}]}]}
J
expect "saturated W=4" '"workers":4,"steps_per_s":{"mean":\(10\.0\|9\.9999999999\)' \
    "$BIN" simulate "$TMP/transfer.json" --bandwidth 10Gbit --workers 1..4 --json
expect "saturated W=3 in the window" '"workers":3,"steps_per_s":{"mean":\(10\.0\|9\.9999999999\|10\.000000000\)' \
    "$BIN" simulate "$TMP/transfer.json" --bandwidth 10Gbit --workers 1..4 --json
expect "saturation point" '"saturation_workers":1' \
    "$BIN" simulate "$TMP/transfer.json" --bandwidth 10Gbit --workers 1..4 --json
expect "what-if bandwidth" '"bandwidth_bytes_per_s":125000000.0,"win_bytes":28000000.0,"flow_control":true,"results":\[{"servers":1,"saturation_workers":1,"points":\[{"workers":1,"steps_per_s":{"mean":1.0' \
    "$BIN" simulate "$TMP/transfer.json" --bandwidth 10Gbit --workers 1..2 --what-if bandwidth=1Gbit --json

expect "step graph fixture" '"servers":2' \
    "$BIN" simulate $D/stepgraph.json --bandwidth 1Gbit --workers 1..4 --servers 1,2 --json
expect "tensorflow fixture" 'servers 1' \
    "$BIN" simulate $D/tf_timeline.json --bandwidth 1Gbit --workers 1..4
expect "kineto fixture" 'servers 1' \
    "$BIN" simulate $D/kineto_ps.json --bandwidth 10Gbit --workers 1,2,4
# W = 3 reaches 100 samples/s (120) at 3 x 2 + 1 = 7 per hour
expect "cheapest" '"cheapest":{"target":100.0,"unit":"samples/s","setup":{"workers":3,"servers":1},"throughput":120.0' \
    "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..4 --target 100 \
    --price-worker 2 --price-server 1 --json

cat >"$TMP/cycle.json" <<'J'
{"steps": [{"ops": [{"id": "a", "resource": "worker", "duration": 1, "deps": ["b"]},
  {"id": "b", "resource": "worker", "duration": 1, "deps": ["a"]}]}]}
J
refuse "cycle" 'operation "a" of step 0, deps' "$BIN" simulate "$TMP/cycle.json" --bandwidth 1Gbit
cat >"$TMP/nosize.json" <<'J'
{"steps": [{"ops": [{"id": "t", "resource": "uplink"}]}]}
J
refuse "transfer without size" 'operation "t" of step 0, bytes' "$BIN" simulate "$TMP/nosize.json" --bandwidth 1Gbit
# a step of zero-duration computations only would take no time: refused, not 0 steps/s
cat >"$TMP/zero.json" <<'J'
{"steps": [{"ops": [{"id": "z", "resource": "worker", "duration": 0},
  {"id": "u", "resource": "ps", "duration": 0, "deps": ["z"]}]}]}
J
refuse "zero-duration step" 'operation "z" of step 0, duration: every operation of step 0 has duration 0' \
    "$BIN" simulate "$TMP/zero.json" --bandwidth 1Gbit
# a step's own fault names the step; a file that is not JSON, the byte
printf '{"steps": [{"ops": []}]}' >"$TMP/empty-step.json"
refuse "empty step" '^perfcast simulate: steps\[0\]\.ops: ' "$BIN" simulate "$TMP/empty-step.json" --bandwidth 1Gbit
printf '{"steps": [' >"$TMP/cut.json"
refuse "not JSON" '^perfcast simulate: body: invalid JSON at byte 11' "$BIN" simulate "$TMP/cut.json" --bandwidth 1Gbit
# numbers that are not finite are refused naming the option, never dropped for the default
refuse "NaN steps" '^perfcast simulate: steps: ' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --steps nan
refuse "infinite replications" '^perfcast simulate: replications: ' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --replications inf
refuse "NaN target" '^perfcast simulate: target_samples_per_s: ' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --target nan
refuse "NaN batch size" '^perfcast simulate: batch_size: ' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --batch-size nan
refuse "NaN alpha" '^perfcast simulate: overhead.alpha: ' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --alpha nan
refuse "steps beyond any integer" 'steps' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --steps 1e300
refuse "no bandwidth" 'bandwidth' "$BIN" simulate "$TMP/compute.json"
refuse "W = 0" 'workers' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 0..4
refuse "W absurd" 'workers' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --workers 1..5000
refuse "M = 0" 'servers' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --servers 0
refuse "bad bandwidth" 'bandwidth' "$BIN" simulate "$TMP/compute.json" --bandwidth fast
refuse "warm-up < 0" 'warmup_steps' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --warmup -1
refuse "warm-up not an integer" 'warmup_steps' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --warmup 2.5
refuse "steps and total steps" '^perfcast simulate: total_steps: give steps' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --steps 10 --total-steps 20
refuse "field named once" '^perfcast simulate: warmup_steps must be' "$BIN" simulate "$TMP/compute.json" --bandwidth 1Gbit --warmup -1

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
