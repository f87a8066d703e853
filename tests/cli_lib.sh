# cli_lib.sh — what the shell tests of the command line share; sourced by
# tests/test_cli_*.sh after they `cd` to the repository root. Sets BIN (the
# binary under test, PERFCAST_BIN or build/perfcast) and TMP (removed on
# exit), counts checks in pass/fail, and gives the checks below. A test
# ends with `cli_summary`, which prints "N passed, N failed".
BIN=${PERFCAST_BIN:-build/perfcast}
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# expect NAME STATUS PATTERN CMD... — CMD exits STATUS and its stdout has PATTERN
expect() {
    name=$1 want=$2 pat=$3
    shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    if [ "$got" != "$want" ]; then bad "$name: exit $got, want $want: $(head -c 300 "$TMP/err")"; return; fi
    if ! grep -q -- "$pat" "$TMP/out"; then bad "$name: no \"$pat\" in: $(head -c 300 "$TMP/out")"; return; fi
    ok
}

# refuse NAME PATTERN CMD... — exit 2, one line on stderr with PATTERN, nothing on stdout
refuse() {
    name=$1 pat=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    lines=$(wc -l <"$TMP/err" | tr -d ' ')
    if [ "$got" != 2 ]; then bad "$name: exit $got, want 2"; return; fi
    if [ "$lines" != 1 ]; then bad "$name: $lines lines on stderr: $(cat "$TMP/err")"; return; fi
    if ! grep -q -- "$pat" "$TMP/err"; then bad "$name: no \"$pat\" in: $(cat "$TMP/err")"; return; fi
    if [ -s "$TMP/out" ]; then bad "$name: printed on stdout"; return; fi
    ok
}

# usage_error NAME PATTERN CMD... — exit 2, the first line on stderr has PATTERN (the usage follows)
usage_error() {
    name=$1 pat=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    if [ "$got" != 2 ]; then bad "$name: exit $got, want 2"; return; fi
    if ! head -n 1 "$TMP/err" | grep -q -- "$pat"; then bad "$name: no \"$pat\" in: $(cat "$TMP/err")"; return; fi
    ok
}

# cli_summary — the count line tests/run.sh adds up; the exit status
cli_summary() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
