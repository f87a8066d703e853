#!/bin/sh
# test_cli_sweep.sh — `perfcast sensitivity` and `perfcast sweep plan` as a
# user runs them. Sensitivity of a 2x2 full factorial with two repetitions
# each (smaller is better), computed by hand: S/N = -10·log10(mean y²) of the
# runs (x,y) = (1,1): y=1 -> 0; (1,2): y=10 -> -20; (2,1): y=2 -> -6.0206;
# (2,2): y=20 -> -26.0206. Mean S/N of x: -10, -16.0206 (range 6.0206); of
# y: -3.0103, -23.0103 (range 20): y first, normalised 20/26.0206 =
# 0.768622. Larger is better flips the signs, not the ranges. A sweep plan
# definition prints every legal run; invalid input exits 2 with one line, so
# does a legal point with ranks 0 or below (as the service refuses it).
# Ends with "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
BIN=${PERFCAST_BIN:-build/perfcast}
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

[ -x "$BIN" ] || { echo "$BIN is not built"; echo "0 passed, 1 failed"; exit 1; }

cat >"$TMP/f.txt" <<'X'
PARAMETER x
PARAMETER y

POINTS ( 1 1 )
POINTS ( 1 2 )
POINTS ( 2 1 )
POINTS ( 2 2 )

REGION reg
METRIC time
DATA 1 1
DATA 10 10
DATA 2 2
DATA 20 20
X
out=$("$BIN" sensitivity "$TMP/f.txt" 2>"$TMP/err")
[ $? -eq 0 ] || bad "sensitivity exit: $(cat "$TMP/err")"
first=$(printf '%s\n' "$out" | sed -n 1p)
second=$(printf '%s\n' "$out" | sed -n 2p)
# compare numbers to 1e-9 relative with awk
# l2 = 20·log10(2) = 6.0206: the ranges are 20 and l2, normalised 20/(20 + l2) and l2/(20 + l2)
check_line() { # LINE RANK PARAM WHICH(y|x) BEST
    printf '%s\n' "$1" | awk -F';' -v r="$2" -v p="$3" -v w="$4" -v b="$5" '
        function near(a, e) { d = a - e; if (d < 0) d = -d; return d <= 1e-12 * (e < 0 ? -e : e) }
        { l2 = 20 * log(2) / log(10); g = (w == "y") ? 20 : l2
          exit !($1 == "reg" && $2 == "time" && $3 == r && $4 == p && near($5, g) && near($6, g / (20 + l2)) && $7 == b) }'
}
check_line "$first" 1 y y 1 && ok || bad "first line: $first"
check_line "$second" 2 x x 1 && ok || bad "second line: $second"
out=$("$BIN" sensitivity "$TMP/f.txt" --goal larger)
check_line "$(printf '%s\n' "$out" | sed -n 1p)" 1 y y 2 && ok || bad "larger: $out"

# zero observations: exit 2, one line naming the callpath and the point
sed 's/^DATA 2 2$/DATA 0 2/' "$TMP/f.txt" >"$TMP/zero.txt"
"$BIN" sensitivity "$TMP/zero.txt" >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q 'callpath "reg", metric "time", point 3' "$TMP/err" && [ ! -s "$TMP/out" ]; then ok; else bad "zero: $(cat "$TMP/err")"; fi
"$BIN" sensitivity "$TMP/f.txt" --goal best >/dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--goal best accepted"

# --over efficiency (paper 003 §3.2, Fig. 12): the S/N of SE = t_baseline / t of
# each repetition along x, t_baseline the mean at x = 1 with the same y.
# (1,1): 10 10 -> SE 1 1, S/N 0; (1,2): 20 20 -> 0; (2,1): 5 4 -> SE 2, 2.5,
# S/N a = -10·log10((1/4 + 1/6.25)/2) = 6.8824; (2,2): 8 8 -> SE 2.5 2.5,
# S/N b = 20·log10(2.5) = 7.9588. Mean S/N of x: 0, (a+b)/2 (range 7.4206,
# best 2); of y: a/2, b/2 (range (b-a)/2 = 0.5382, best 2); x first.
# (An SE of the run's mean, 10/4.5, or a baseline shared by both y, would
# give other numbers.) With --baseline 1 the point (2,4) has no baseline:
# left out, said on stderr. Without it each group's smallest x is its
# baseline: (2,4) its own, S/N 0, so x's range is (a+b)/3.
cat >"$TMP/se.txt" <<'X'
PARAMETER x
PARAMETER y

POINTS ( 1 1 )
POINTS ( 1 2 )
POINTS ( 2 1 )
POINTS ( 2 2 )
POINTS ( 2 4 )

REGION reg
METRIC time
DATA 10 10
DATA 20 20
DATA 5 4
DATA 8 8
DATA 3 3
X
check_se() { # LINE RANK PARAM WHICH(x|y) BEST
    printf '%s\n' "$1" | awk -F';' -v r="$2" -v p="$3" -v w="$4" -v bst="$5" '
        function near(v, e) { d = v - e; if (d < 0) d = -d; return d <= 1e-12 * (e < 0 ? -e : e) }
        function lg(v) { return log(v) / log(10) }
        { a = -10 * lg((1/4 + 1/6.25) / 2); b = 20 * lg(2.5)
          gx = (a + b) / 2; gy = (b - a) / 2; g = (w == "x") ? gx : gy
          exit !($1 == "reg" && $2 == "time" && $3 == r && $4 == p && near($5, g) && near($6, g / (gx + gy)) && $7 == bst) }'
}
out=$("$BIN" sensitivity "$TMP/se.txt" --over efficiency --parameter x --baseline 1 2>"$TMP/err")
[ $? -eq 0 ] || bad "efficiency exit: $(cat "$TMP/err")"
check_se "$(printf '%s\n' "$out" | sed -n 1p)" 1 x x 2 && ok || bad "efficiency first line: $out"
check_se "$(printf '%s\n' "$out" | sed -n 2p)" 2 y y 2 && ok || bad "efficiency second line: $out"
grep -q 'callpath "reg", metric "time": 1 of 5 runs left out: their baseline was not measured' "$TMP/err" && ok || bad "left out: $(cat "$TMP/err")"
# the default parameter is the first
[ "$("$BIN" sensitivity "$TMP/se.txt" --over efficiency --baseline 1 2>/dev/null)" = "$out" ] && ok || bad "default parameter differs"
# the default baseline: each group's smallest measured x
out=$("$BIN" sensitivity "$TMP/se.txt" --over efficiency 2>"$TMP/err")
printf '%s\n' "$out" | sed -n 1p | awk -F';' '
    function lg(v) { return log(v) / log(10) }
    { a = -10 * lg((1/4 + 1/6.25) / 2); b = 20 * lg(2.5); g = (a + b) / 3; d = $5 - g; if (d < 0) d = -d
      exit !($4 == "x" && d <= 1e-12 * g) }' && [ ! -s "$TMP/err" ] && ok || bad "default baseline: $out $(cat "$TMP/err")"
# refusals: exit 2, nothing on stdout
for args in "--over efficiency --goal smaller" "--over speed" "--baseline 1" "--parameter x" \
    "--over efficiency --baseline 0" "--over efficiency --baseline nan" "--over efficiency --parameter z" \
    "--over efficiency --baseline 3" "--over efficiency --over time" "--over"; do
    # shellcheck disable=SC2086
    "$BIN" sensitivity "$TMP/se.txt" $args >"$TMP/out" 2>"$TMP/err"
    if [ $? -eq 2 ] && [ ! -s "$TMP/out" ] && [ -s "$TMP/err" ]; then ok; else bad "$args: $(cat "$TMP/out" "$TMP/err")"; fi
done
"$BIN" sensitivity "$TMP/se.txt" --over efficiency --baseline 3 2>"$TMP/err" >/dev/null
grep -q 'callpath "reg", metric "time": no run has its baseline (x = 3) measured' "$TMP/err" && ok || bad "baseline 3: $(cat "$TMP/err")"

# sweep plan: 2 x 3 values, legal x*y <= 4 -> (1,1) (1,2) (1,4) (2,1) (2,2): 5 points x 2 repetitions
cat >"$TMP/s.json" <<'X'
{"parameters": {"x": [1, 2], "y": [1, 2, 4]}, "legal": "x * y <= 4", "repetitions": 2,
 "command": "run --x {x} --y {y} --rep {repetition}"}
X
"$BIN" sweep plan "$TMP/s.json" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 0 ] && [ "$(wc -l <"$TMP/out")" -eq 10 ] && ok || bad "plan lines: $(cat "$TMP/out" "$TMP/err")"
[ "$(sed -n 1p "$TMP/out")" = "run --x 1 --y 1 --rep 1" ] && [ "$(sed -n 10p "$TMP/out")" = "run --x 2 --y 2 --rep 2" ] && ok || bad "plan order: $(cat "$TMP/out")"
echo '{"commands":["a b","c"]}' | "$BIN" sweep plan - >"$TMP/out" && [ "$(cat "$TMP/out")" = "a b
c" ] && ok || bad "plan answer on stdin"
echo '{"parameters":{"x":[1]},"legal":"x <= z","command":"c"}' >"$TMP/bad.json"
"$BIN" sweep plan "$TMP/bad.json" >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q 'legal: offset 5: unknown parameter "z"' "$TMP/err"; then ok; else bad "bad rule: $(cat "$TMP/err")"; fi

# the service's limit: 101 legal points x 1,000 repetitions = 101,000 runs > 100,000
vals=$(seq -s, 1 101)
echo "{\"parameters\":{\"x\":[$vals]},\"repetitions\":1000,\"command\":\"c {x}\"}" >"$TMP/big.json"
"$BIN" sweep plan "$TMP/big.json" >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 2 ] && [ ! -s "$TMP/out" ] && grep -q 'repetitions: 101 legal points × 1000 repetitions is more than 100000 runs' "$TMP/err"; then ok; else bad "101,000 runs: $(head -c 300 "$TMP/err")"; fi
# exactly 100 x 1,000 = 100,000 runs is within it
vals=$(seq -s, 1 100)
echo "{\"parameters\":{\"x\":[$vals]},\"repetitions\":1000,\"command\":\"c {x}\"}" >"$TMP/cap.json"
"$BIN" sweep plan "$TMP/cap.json" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 0 ] && [ "$(wc -l <"$TMP/out")" -eq 100000 ] && ok || bad "100,000 runs: $(head -c 300 "$TMP/err")"

# the 1,000,000-point cap is on the product, before the legality rule: 1,000 x 1,001
# values are refused although the rule leaves one point
va=$(seq -s, 1 1000)
vb=$(seq -s, 1 1001)
echo "{\"parameters\":{\"a\":[$va],\"b\":[$vb]},\"legal\":\"a < 2 && b < 2\",\"command\":\"c {a} {b}\"}" >"$TMP/points.json"
"$BIN" sweep plan "$TMP/points.json" >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 2 ] && [ ! -s "$TMP/out" ] && grep -q 'parameters: the product of the values has more than 1000000 points' "$TMP/err"; then ok; else bad "1,001,000 points: $(head -c 300 "$TMP/err")"; fi

# a legal point without ranks (ranks <= 0) could never be uploaded: refused as the
# service refuses the plan (analysis/plan.h), exit 2, one line naming
# parameters.ranks, the value and the rule, nothing on stdout (no "srun -n -4")
plan_refused() { # NAME PATTERN FILE
    "$BIN" sweep plan "$3" >"$TMP/out" 2>"$TMP/err"
    if [ $? -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && [ ! -s "$TMP/out" ] &&
        grep -q -- "$2" "$TMP/err"; then ok; else bad "$1: $(head -c 400 "$TMP/out" "$TMP/err")"; fi
}
echo '{"parameters":{"ranks":[2,-4,0,8],"threads":[1,2]},"repetitions":2,"command":"srun -n {ranks} -c {threads}"}' >"$TMP/r.json"
plan_refused "ranks -4" 'r.json: parameters.ranks: a legal point of this plan could never be uploaded: training.data_parallel: must be > 0 at every coordinate; at ranks=-4 it is not (.*rank count.*); leave the value out or exclude it with "legal"' "$TMP/r.json"
echo '{"parameters":{"ranks":[0]},"command":"srun -n {ranks}"}' >"$TMP/r0.json"
plan_refused "ranks 0" 'parameters.ranks: .*at ranks=0 it is not' "$TMP/r0.json"
echo '{"parameters":{"threads":[1,2]},"constants":{"ranks":-1},"command":"srun -n {ranks}"}' >"$TMP/rc.json"
plan_refused "constant ranks -1" 'parameters: .*training.data_parallel: must be > 0 at every coordinate; at ranks=-1 it is not' "$TMP/rc.json"
# the same values left out by "legal" plan as the service plans them: 2 points x 2 x 2
sed 's/"repetitions"/"legal":"ranks > 0","repetitions"/' "$TMP/r.json" >"$TMP/rl.json"
"$BIN" sweep plan "$TMP/rl.json" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 0 ] && [ ! -s "$TMP/err" ] && [ "$(wc -l <"$TMP/out")" -eq 8 ] &&
    [ "$(sed -n 1p "$TMP/out")" = "srun -n 2 -c 1" ] && [ "$(sed -n 8p "$TMP/out")" = "srun -n 8 -c 2" ] &&
    ! grep -q -- '-n -\|-n 0' "$TMP/out" && ok || bad "excluded by legal: $(cat "$TMP/out" "$TMP/err")"
# a parameter that is not "ranks" may be 0 or negative (the rank count of its
# experiment is not known offline), as may the ranks' neighbours
echo '{"parameters":{"ranks":[1],"x":[-1,0]},"command":"run {ranks} {x}"}' >"$TMP/rx.json"
"$BIN" sweep plan "$TMP/rx.json" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 0 ] && [ "$(cat "$TMP/out")" = "run 1 -1
run 1 0" ] && ok || bad "x <= 0 planned: $(cat "$TMP/out" "$TMP/err")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
