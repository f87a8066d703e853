#!/usr/bin/env python3
"""kineto_reference.py TRACE[.json|.json.gz] -- per-step sums of a PyTorch
profiler (Kineto) trace, computed independently of perfcast's C reader.

The C reader streams the JSON and places device events through bounded
windows; this script loads the whole document with the standard library,
indexes every CUDA runtime/driver call by its correlation id and assigns
each event by plain lookups. tests/test_ingest_kineto.c runs it and compares.

Semantics (README, "Formats"):
  steps       ph "X" events named ProfilerStep#N (cpu_op/user_annotation),
              covering [ts, ts + dur); a trace without them is one step
  device      cat kernel, gpu_memcpy, gpu_memset; key time = ts of the
              cuda_runtime/cuda_driver event with the same args.correlation
              (else its own ts)
  host        cat cpu_op, user_annotation, cuda_runtime, cuda_driver
  category    kernel: comm when the name starts with nccl (after "void ") or
              contains AllReduce/AllGather/ReduceScatter/Broadcast/SendRecv/
              AllToAll, else comp; memcpy/memset: mem; host: host
  gap g       what lies between step g-1 and step g
Prints one JSON object: {"rank", "world_size", "steps": [{"label", "totals":
{cat: {"time", "visits", "bytes"}}}], "between": {cat: {...}},
"callpaths": {"name|cat": {"time", "visits", "bytes"}}} with time in
seconds (sum of dur in microseconds times 1e-6).
"""
import bisect
import gzip
import json
import sys

CATS = ("comp", "comm", "mem", "host")
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset"}
RUNTIME = {"cuda_runtime", "cuda_driver"}
HOST = {"cpu_op", "user_annotation"}
COLLECTIVES = ("AllReduce", "AllGather", "ReduceScatter", "Broadcast", "SendRecv", "AllToAll")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


def kernel_category(name):
    bare = name[5:] if name.startswith("void ") else name
    if bare[:4].lower() == "nccl" or any(c in name for c in COLLECTIVES):
        return "comm"
    return "comp"


def empty():
    return {c: {"time": 0.0, "visits": 0, "bytes": 0} for c in CATS}


def main(path):
    doc = load(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    info = doc.get("distributedInfo", {}) if isinstance(doc, dict) else {}
    complete = [e for e in events if e.get("ph") == "X"]

    steps = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in complete
                   if e.get("cat") in HOST and e.get("name", "").startswith("ProfilerStep#"))
    starts = [s[0] for s in steps]
    launch = {}
    for e in complete:
        if e.get("cat") in RUNTIME and "correlation" in e.get("args", {}):
            launch.setdefault(e["args"]["correlation"], e["ts"])

    def slot(t):
        if not steps:
            return ("step", 0)
        k = bisect.bisect_right(starts, t) - 1
        if k >= 0 and t < steps[k][1]:
            return ("step", k)
        return ("gap", k + 1)

    sums = {}
    callpaths = {}
    for e in complete:
        cat, name = e.get("cat"), e.get("name", "")
        if cat in DEVICE:
            category = kernel_category(name) if cat == "kernel" else "mem"
            t = launch.get(e.get("args", {}).get("correlation"), e["ts"])
            nbytes = e.get("args", {}).get("bytes", 0) if category == "mem" else 0
        elif cat in RUNTIME or (cat in HOST and not name.startswith("ProfilerStep#")):
            category, t, nbytes = "host", e["ts"], 0
        else:
            continue
        where = sums.setdefault(slot(t), empty())[category]
        where["time"] += e["dur"]
        where["visits"] += 1
        where["bytes"] += nbytes
        cp = callpaths.setdefault(name + "|" + category, {"time": 0.0, "visits": 0, "bytes": 0})
        cp["time"] += e["dur"]
        cp["visits"] += 1
        cp["bytes"] += nbytes

    def seconds(d):
        for v in d.values():
            v["time"] *= 1e-6
        return d

    out_steps = []
    for k in range(max(len(steps), 1)):
        label = steps[k][2] if steps else ""
        out_steps.append({"label": label, "totals": seconds(sums.get(("step", k), empty()))})
    between = empty()
    for (kind, _), d in sums.items():
        if kind == "gap":
            for c in CATS:
                for m in ("time", "visits", "bytes"):
                    between[c][m] += d[c][m]
    seconds(between)
    for v in callpaths.values():
        v["time"] *= 1e-6
    json.dump({"rank": info.get("rank", 0), "world_size": info.get("world_size", 0),
               "steps": out_steps, "between": between, "callpaths": callpaths}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: kineto_reference.py TRACE")
    main(sys.argv[1])
