#!/bin/sh
# test_cli_model_warnings.sh — `perfcast model` says how far to trust its
# models and predictions: the robust modeler is the default; Extra-P's
# strong_scaling/one_parameter_1.txt (725 .. 82 s at x = 20..60) predicts a
# negative time at x = 120, printed with its interval and warned on stderr
# (negative_prediction, implausible_extrapolation) and in --json objects;
# x = 40 carries none; --strict exits 3 with the warnings, 0 without; an
# unknown modeler, option or --predict parameter exits 2 naming it;
# --diagnostics prints the measured range and distinct values. Ends with
# "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
BIN=${PERFCAST_BIN:-build/perfcast}
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
F=tests/data/extrap-audit/strong_scaling/one_parameter_1.txt
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# expect NAME STATUS PATTERN(stdout+stderr) CMD...
expect() {
    name=$1 want=$2 pat=$3
    shift 3
    "$@" >"$TMP/out" 2>&1
    got=$?
    if [ "$got" != "$want" ]; then bad "$name: exit $got, want $want: $(head -c 300 "$TMP/out")"; return; fi
    if ! grep -q -- "$pat" "$TMP/out"; then bad "$name: no \"$pat\" in: $(head -c 300 "$TMP/out")"; return; fi
    ok
}

expect "default modeler is robust" 0 '"modeler":"robust"' "$BIN" model --json "$F"
expect "x=120 answered" 0 '^compute;time;x=120;-' "$BIN" model --modeler extrap "$F" --predict x:120
expect "negative_prediction on stderr" 0 \
    'warning: compute;time at x=120: negative_prediction: ' "$BIN" model --modeler extrap "$F" --predict x:120
expect "implausible_extrapolation on stderr" 0 \
    'warning: compute;time at x=120: implausible_extrapolation: ' "$BIN" model --modeler extrap "$F" --predict x:120
expect "objects in --json" 0 '"warnings":\[{"code":"negative_prediction","message":' \
    "$BIN" model --modeler extrap --json "$F" --predict x:120
expect "--strict with warnings exits 3" 3 'strict: 2 warnings' "$BIN" model --modeler extrap "$F" --predict x:120 --strict
expect "--strict without warnings exits 0" 0 '^compute;time;x=40;' "$BIN" model --modeler extrap "$F" --predict x=40 --strict
# the robust modeler keeps its predictions positive up to 8x the data
expect "robust: x=120 positive" 0 '^compute;time;x=120;[0-9]' "$BIN" model "$F" --predict x:120
"$BIN" model --modeler extrap "$F" --predict x:40 >"$TMP/out" 2>"$TMP/err"
if [ ! -s "$TMP/err" ]; then ok; else bad "x=40: warnings: $(cat "$TMP/err")"; fi
expect "far" 0 'extrapolation_far' "$BIN" model "$F" --predict x=241
expect "unknown modeler" 2 'unknown modeler "segmentedx"' "$BIN" model --modeler segmentedx "$F"
expect "unknown option" 2 'unknown modeler option "no_such"' "$BIN" model --options no_such=1 "$F"
expect "unknown parameter" 2 '--predict "y:3"' "$BIN" model "$F" --predict y:3
expect "--predict without value" 2 '--predict needs a value' "$BIN" model "$F" --predict
expect "--diagnostics" 0 '^compute;time;diagnostics;smape=.*;x=20\.\.60/5$' "$BIN" model --diagnostics "$F"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
