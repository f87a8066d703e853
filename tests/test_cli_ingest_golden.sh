#!/bin/sh
# test_cli_ingest_golden.sh — `perfcast ingest` of every Kineto fixture gives
# exactly the stored answers in tests/data/kineto_golden/ (the summary and
# the --json document, byte for byte), gzip as stored and gunzipped, so that
# work on the reader's speed cannot change a result unnoticed. A golden file
# is rewritten only on purpose: `perfcast ingest [--json] FILE > golden`
# with FILE named as below. Ends with "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
BIN=${PERFCAST_BIN:-build/perfcast}
G=tests/data/kineto_golden
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

same() { # NAME GOLDEN CMD...
    name=$1 golden=$2
    shift 2
    if ! "$@" >"$TMP/out" 2>"$TMP/err"; then
        fail=$((fail + 1)); echo "FAIL: $name: $(head -c 300 "$TMP/err")" >&2; return
    fi
    if cmp -s "$TMP/out" "$golden"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL: $name differs from $golden:" >&2
        diff "$golden" "$TMP/out" | head -10 >&2
    fi
}

for f in tests/data/kineto/*.json.gz; do
    b=$(basename "$f" .json.gz)
    same "$b summary" "$G/$b.txt" "$BIN" ingest "$f"
    same "$b --json" "$G/$b.json" "$BIN" ingest --json "$f"
    # the same bytes gunzipped: the same document (the summary names the file)
    gzip -dc "$f" >"$TMP/$b.json"
    "$BIN" ingest --json "$TMP/$b.json" >"$TMP/plain.json" 2>"$TMP/err"
    if python3 -c 'import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
strip=lambda d: {k: v for k, v in d.items() if k not in ("gzip", "file", "source", "bytes_file")}
sys.exit(0 if strip(a) == strip(b) else 1)' "$G/$b.json" "$TMP/plain.json"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "FAIL: $b gunzipped: the --json document differs" >&2
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
