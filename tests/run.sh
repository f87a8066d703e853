#!/bin/sh
# Runs every test program in BUILD/tests and the shell tests in tests/*.sh,
# adds up their "N passed, N failed" lines and prints the total last.
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
total_pass=0; total_fail=0; broken=0
for t in "$BUILD"/tests/test_* tests/test_*.sh; do
    [ -x "$t" ] || continue
    case "$t" in *.d|*.o) continue;; esac
    out=$(PERFCAST_BIN="$BUILD/perfcast" "$t" 2>&1); rc=$?
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
    if [ -z "$line" ]; then
        printf '%s\n' "$out" | tail -20
        echo "$t: crashed or printed no summary (exit $rc)"
        broken=$((broken + 1)); continue
    fi
    p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed}
    if [ "$f" != 0 ] || [ $rc -ne 0 ]; then
        printf '%s\n' "$out" | grep -v '^[0-9]* passed' | tail -30
        printf '%s\n' "$out" | grep -a '^FAIL' | head -20 # the checks, after any server log
    fi
    echo "$(basename "$t"): $line"
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
done
total_fail=$((total_fail + broken))
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
