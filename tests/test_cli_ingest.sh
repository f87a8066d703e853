#!/bin/sh
# test_cli_ingest.sh — `perfcast ingest` as a user runs it: the summary of the
# real Kineto traces, the --json document (its exact shape, and its step
# totals against tests/kineto_reference.py), stdin, an Nsight Systems export
# with and without --markers, a perfcast JSON profile, and invalid input:
# exit status 2 and exactly one line on stderr. Ends with "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
. tests/cli_lib.sh
D=tests/data/kineto

[ -x "$BIN" ] || { echo "$BIN is not built"; echo "0 passed, 1 failed"; exit 1; }

expect "nccl_ws2 summary" 0 "^steps: 3$" "$BIN" ingest $D/nccl_ws2_rank0.json.gz
expect "nccl_ws2 rank" 0 "kineto (gzip), rank 0 of 2" "$BIN" ingest $D/nccl_ws2_rank0.json.gz
expect "nccl_ws2 all-reduce is comm" 0 "^top comm callpaths" "$BIN" ingest $D/nccl_ws2_rank0.json.gz
expect "ddp128 rank 1" 0 "rank 1 of 128" "$BIN" ingest $D/ddp128_rank1.json.gz
expect "ddp128 two steps" 0 "ProfilerStep#552" "$BIN" ingest $D/ddp128_rank0.json.gz
expect "alexnet one step" 0 "no step markers: the whole trace is one step" "$BIN" ingest $D/alexnet_single.json.gz
expect "stdin" 0 "^steps: 2$" sh -c "'$BIN' ingest - < $D/ddp128_rank0.json.gz"
expect "format flag" 0 "^steps: 3$" "$BIN" ingest --format kineto $D/nccl_ws2_rank0.json.gz
expect "caller's rank agrees" 0 "rank 1 of 128" "$BIN" ingest --rank 1 $D/ddp128_rank1.json.gz
expect "nsys export" 0 "export schema 3.11.0" "$BIN" ingest tests/fuzz/corpus/nsys/standard.sqlite
expect "nsys steps" 0 "(Train Step 1," "$BIN" ingest tests/fuzz/corpus/nsys/standard.sqlite
expect "nsys markers" 0 "(epoch 0," "$BIN" ingest --markers epoch tests/fuzz/corpus/nsys/standard.sqlite
expect "perfcast JSON" 0 "^steps: 8$" "$BIN" ingest examples/profile-ranks-2.json
expect "help lists ingest" 0 "ingest FILE" "$BIN" help

# --json: the exact document, and the same step totals as the reference
for f in nccl_ws2_rank0 ddp128_rank0 alexnet_single; do
    if "$BIN" ingest --json $D/$f.json.gz >"$TMP/$f.json" 2>"$TMP/err" &&
        python3 tests/kineto_reference.py $D/$f.json.gz >"$TMP/$f.ref" &&
        python3 - "$TMP/$f.json" "$TMP/$f.ref" <<'EOF'
import json, sys
got = json.load(open(sys.argv[1]))
ref = json.load(open(sys.argv[2]))
assert list(got) == ["format", "rank", "steps", "between_steps", "callpaths"], list(got)
assert got["format"] == "kineto" and got["rank"] == ref["rank"]
assert len(got["steps"]) == len(ref["steps"])
cats = ["comp", "comm", "mem", "host"]
def same(a, b):
    for c in cats:
        assert list(a[c]) == ["time", "visits", "bytes"], list(a[c])
        assert abs(a[c]["time"] - b[c]["time"]) <= 1e-9 * max(abs(b[c]["time"]), 1e-300), (c, a, b)
        assert a[c]["visits"] == b[c]["visits"] and a[c]["bytes"] == b[c]["bytes"], (c, a, b)
for i, (g, r) in enumerate(zip(got["steps"], ref["steps"])):
    assert list(g) == ["phase", "index", "totals"] and g["phase"] == "train" and g["index"] == i
    assert list(g["totals"]) == cats
    same(g["totals"], r["totals"])
same(got["between_steps"], ref["between"])
assert len(got["callpaths"]) == len(ref["callpaths"])
for cp in got["callpaths"]:
    assert list(cp) == ["name", "category", "metrics"], list(cp)
    r = ref["callpaths"][cp["name"] + "|" + cp["category"]]
    assert abs(cp["metrics"]["time"] - r["time"]) <= 1e-9 * max(r["time"], 1e-300)
    assert cp["metrics"]["visits"] == r["visits"]
    assert ("bytes" in cp["metrics"]) == (cp["category"] == "mem")
EOF
    then ok; else bad "--json of $f: $(head -c 300 "$TMP/err")"; fi
done

# invalid input: exit 2, one line on stderr
head -c 50000 $D/ddp128_rank0.json.gz >"$TMP/cut.json.gz"
refuse "truncated gzip" "gzip data ends early" "$BIN" ingest "$TMP/cut.json.gz"
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"\377","ts":1,"dur":1}]}' >"$TMP/utf8.json"
refuse "invalid UTF-8" "byte" "$BIN" ingest --format kineto "$TMP/utf8.json"
refuse "rank disagrees" "distributedInfo says rank 0" "$BIN" ingest --rank 3 $D/ddp128_rank0.json.gz
refuse "Extra-P file" "not a profile" "$BIN" ingest tests/data/extrap/inputs/talpas_1.txt
printf 'hello\n' >"$TMP/hello"
refuse "unknown format" "cannot tell the format" "$BIN" ingest "$TMP/hello"
refuse "gzip read as nsys" "not a SQLite database" "$BIN" ingest --format nsys $D/alexnet_single.json.gz
refuse "missing file" "No such file" "$BIN" ingest "$TMP/nothing.json"
usage_error "no FILE" "FILE is missing" "$BIN" ingest
usage_error "bad format name" "--format must be one of" "$BIN" ingest --format csv x
usage_error "bad rank" "--rank must be" "$BIN" ingest --rank -1 x

# validation steps: steps 3 and 4 lie in a record_function range "validation"
printf '{"traceEvents":[%s%s%s%s{"ph":"X","cat":"user_annotation","name":"validation","ts":195,"dur":205}]}' \
    '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","ts":0,"dur":100},{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":10,"dur":10},' \
    '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","ts":100,"dur":100},{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":110,"dur":10},' \
    '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","ts":200,"dur":100},{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":210,"dur":10},' \
    '{"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","ts":300,"dur":100},{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":310,"dur":10},' \
    >"$TMP/val.json"
expect "validation steps" 0 "^validation step 3" "$BIN" ingest --format kineto "$TMP/val.json"
expect "train steps before them" 0 "^train step 1" "$BIN" ingest --format kineto "$TMP/val.json"
expect "--phase train" 0 "^train step 3" "$BIN" ingest --format kineto --phase train "$TMP/val.json"
expect "--validation-markers" 0 "^train step 3" "$BIN" ingest --format kineto --validation-markers holdout "$TMP/val.json"
usage_error "bad phase" "--phase must be" "$BIN" ingest --phase test x

cli_summary
