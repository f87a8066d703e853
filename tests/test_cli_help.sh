#!/bin/sh
# test_cli_help.sh — the command line as a new user meets it: `perfcast
# --help`, `perfcast help CMD` and `perfcast CMD --help` print usage and exit
# 0 for every command; --version/-V; unknown options and missing values are
# named; `migrate` against an unreachable database says so in one plain
# line; ci-check's usage errors exit 2 naming the flag. Ends with
# "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
BIN=${PERFCAST_BIN:-build/perfcast}
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
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

expect "--help" 0 "usage: perfcast COMMAND" "$BIN" --help
expect "help" 0 "ci-check" "$BIN" help
expect "main help lists ingest formats" 0 "ingest formats: kineto" "$BIN" --help
for c in serve migrate token model ingest upload ci-check sweep sensitivity iteration simulate; do
    expect "help $c" 0 "usage: perfcast $c" "$BIN" help "$c"
    expect "$c --help" 0 "usage: perfcast $c" "$BIN" "$c" --help
    expect "$c -h" 0 "usage: perfcast $c" "$BIN" "$c" -h
done
expect "help of an unknown command" 2 "unknown command" "$BIN" help nosuch
expect "--version" 0 "^perfcast [0-9]" "$BIN" --version
expect "-V" 0 "^perfcast [0-9]" "$BIN" -V
expect "serve --bogus" 2 "unknown option --bogus" env DATABASE_URL=postgresql:///x "$BIN" serve --bogus
expect "model --format without value" 2 "--format needs a value" "$BIN" model tests/data/extrap/inputs/one_parameter_1.txt --format
expect "ingest --rank without value" 2 "--rank needs a value" "$BIN" ingest x.json --rank
"$BIN" migrate --database-url "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2" >"$TMP/out" 2>&1
rc=$?
lines=$(wc -l <"$TMP/out")
if [ "$rc" = 1 ] && [ "$lines" = 1 ] && grep -q "^perfcast migrate: cannot connect" "$TMP/out"; then ok
else bad "migrate unreachable: exit $rc, $lines lines: $(cat "$TMP/out")"; fi
expect "ci-check without --head" 2 "--head is required" "$BIN" ci-check --url http://127.0.0.1:1 --experiment 1 --base a
expect "ci-check bad threshold" 2 "--threshold" "$BIN" ci-check --url http://127.0.0.1:1 --experiment 1 --base a --head b --threshold 5x
expect "ci-check base = head" 2 "--head" "$BIN" ci-check --url http://127.0.0.1:1 --experiment 1 --base a --head a
expect "ci-check bad wait" 2 "--wait needs a number of seconds" "$BIN" ci-check --url http://127.0.0.1:1 --experiment 1 --base a --head b --wait soon
expect "ci-check https" 2 "https is not supported" "$BIN" ci-check --url https://x --experiment 1 --base a --head b
expect "upload without files" 2 "no FILE" "$BIN" upload --url http://127.0.0.1:1 --experiment 1
expect "upload --branch without --commit" 2 "give --commit" "$BIN" upload --url http://127.0.0.1:1 --experiment 1 --branch main x.json
expect "upload bad point" 2 "--point" "$BIN" upload --url http://127.0.0.1:1 --experiment 1 --point ranks x.json
expect "upload unreachable" 3 "cannot connect" "$BIN" upload --url http://127.0.0.1:1 --experiment 1 examples/profile-ranks-2.json
expect "ci-check unreachable" 3 "cannot connect" "$BIN" ci-check --url http://127.0.0.1:1 --experiment 1 --base a --head b
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
