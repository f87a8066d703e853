#!/bin/sh
# test_bench_script.sh — `make bench`'s driver (bench/run.sh) as a whole:
# it parses; every program it runs is a bench/*.c and every bench/*.c is
# run; with every program built it gets past its check and prints a line
# per figure (the programs here are stand-ins that do nothing, so each
# figure is an error line: what is checked is the driver, not the figures);
# with one missing it stops at once naming it. Ends with "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

if sh -n bench/run.sh 2>"$TMP/syntax"; then ok; else bad "bench/run.sh does not parse: $(cat "$TMP/syntax")"; fi

# every $B/NAME the driver runs has its source, and every source is run
missing=""
for name in $(grep -o '\$B/[a-z_0-9]*' bench/run.sh | sed 's/^\$B\///' | sort -u); do
    [ -f "bench/$name.c" ] || missing="$missing $name"
done
if [ -z "$missing" ]; then ok; else bad "bench/run.sh runs programs without a source:$missing"; fi
unrun=""
for src in bench/*.c; do
    name=$(basename "$src" .c)
    grep -q "\$B/$name\([^a-z_0-9]\|\$\)" bench/run.sh || unrun="$unrun $name"
done
if [ -z "$unrun" ]; then ok; else bad "bench programs make bench never runs:$unrun"; fi

# stand-ins for every program and perfcast: the driver passes its check and reaches the end
mkdir -p "$TMP/build/bench"
for src in bench/*.c; do
    printf '#!/bin/sh\nexit 0\n' >"$TMP/build/bench/$(basename "$src" .c)"
    chmod +x "$TMP/build/bench/$(basename "$src" .c)"
done
printf '#!/bin/sh\nexit 0\n' >"$TMP/build/perfcast"
chmod +x "$TMP/build/perfcast"
BENCH_TIMEOUT=5 sh bench/run.sh "$TMP/build" >"$TMP/out" 2>"$TMP/err"
code=$?
if grep -q "is not built" "$TMP/err"; then
    bad "with every program built, the driver says: $(grep "is not built" "$TMP/err" | head -n 1)"
else
    ok
fi
if [ "$code" = 1 ] && head -n 1 "$TMP/out" | grep -q '"figure": "machine"'; then ok; else
    bad "driver over stand-ins: exit $code (want 1: every figure fails), first line: $(head -n 1 "$TMP/out")"
fi
figs=$(grep -c '^{"figure": "' "$TMP/out")
others=$(grep -v '^{"figure": "\|^# ' "$TMP/out" | head -n 1)
if [ "$figs" -ge 20 ] && [ -z "$others" ]; then ok; else
    bad "driver over stand-ins: $figs figure lines (want >= 20), a line that is not a figure: $others"
fi

# one program missing: exit 2 at once, naming it
rm "$TMP/build/bench/bench_dashboard"
BENCH_TIMEOUT=5 sh bench/run.sh "$TMP/build" >"$TMP/out" 2>"$TMP/err"
code=$?
if [ "$code" = 2 ] && grep -q "bench_dashboard is not built" "$TMP/err" && ! [ -s "$TMP/out" ]; then ok; else
    bad "a missing program: exit $code (want 2), stderr: $(head -c 200 "$TMP/err")"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
