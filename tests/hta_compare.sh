#!/bin/sh
# hta_compare.sh — re-derives tests/data/hta_reference.json with Holistic
# Trace Analysis itself (get_temporal_breakdown, get_idle_time_breakdown with
# its defaults) on the Kineto fixtures, and compares perfcast's breakdown
# with it (build/perfcast iteration --json). HTA is not part of perfcast: it
# runs only when found, from HTA_DIR (a checkout of
# facebookresearch/HolisticTraceAnalysis) or as an installed `hta` package,
# with pandas; otherwise the script says why and exits 0.
#   tests/hta_compare.sh            compare, exit 1 on a difference > 1% of the window
#   tests/hta_compare.sh --write    also rewrite tests/data/hta_reference.json
#   tests/hta_compare.sh TRACE...   compare on other traces too (one rank each;
#                                   HTA's own tests/data holds public ones)
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# HTA imports plotting and graph packages the two breakdowns never use:
# stand-ins for them in this temporary directory only.
cat >"$tmp/sitecustomize.py" <<'PYEOF'
import sys, types
class _Any(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        if name[:1].isupper():
            c = type(name, (object,), {'__init__': lambda self, *a, **k: None})
            setattr(self, name, c)
            return c
        m = _Any(self.__name__ + '.' + name)
        sys.modules[m.__name__] = m
        return m
    def __call__(self, *a, **k):
        return _Any('call')
for name in ('plotly', 'plotly.express', 'plotly.graph_objects', 'plotly.subplots', 'plotly.io',
             'plotly.figure_factory', 'networkx', 'pydot', 'psutil'):
    try:
        __import__(name)
    except ImportError:
        sys.modules[name] = _Any(name)
PYEOF
export PYTHONPATH="$tmp${HTA_DIR:+:$HTA_DIR}${PYTHONPATH:+:$PYTHONPATH}"
if ! $PY -c 'import pandas' 2>/dev/null; then
    echo "hta_compare: skipped: $PY has no pandas (Debian: apt-get install python3-pandas)"
    exit 0
fi
if ! $PY -c 'from hta.trace_analysis import TraceAnalysis' 2>/dev/null; then
    echo "hta_compare: skipped: HTA not importable; set HTA_DIR to a checkout of facebookresearch/HolisticTraceAnalysis"
    exit 0
fi
[ -x build/perfcast ] || { echo "hta_compare: build/perfcast missing (make)"; exit 1; }
$PY - "$@" <<'PYEOF'
import json, logging, os, shutil, subprocess, sys, tempfile
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
fixtures = ['alexnet_single', 'ddp128_rank0', 'ddp128_rank1', 'nccl_ws2_rank0']
paths = {name: f'tests/data/kineto/{name}.json.gz' for name in fixtures}
for a in sys.argv[1:]:
    if not a.startswith('--'):
        paths[os.path.basename(a)] = a
ref = {}
for name, path in paths.items():
    d = tempfile.mkdtemp()
    shutil.copy(path, d)
    ta = TraceAnalysis(trace_dir=d)
    r = ta.get_temporal_breakdown(visualize=False).iloc[0]
    idle, _ = ta.get_idle_time_breakdown(ranks=list(ta.t.traces.keys()), visualize=False)
    kt, _ = ta.get_gpu_kernel_breakdown(visualize=False)
    shutil.rmtree(d)
    ref[name] = {'kernel_time_us': float(r['kernel_time(us)']), 'idle_time_us': float(r['idle_time(us)']),
                 'compute_time_us': float(r['compute_time(us)']),
                 'non_compute_time_us': float(r['non_compute_time(us)']),
                 'idle_by_stream': [{'stream': int(x.stream), 'idle_category': x.idle_category,
                                     'idle_time_us': float(x.idle_time)} for x in idle.itertuples()],
                 'kernel_types_us': {x.kernel_type: float(x.sum) for x in kt.itertuples()}}
bad = 0
for name, h in ref.items():
    doc = json.loads(subprocess.run(['build/perfcast', 'iteration', paths[name], '--json'],
                                    check=True, capture_output=True, text=True).stdout)
    b, w = doc['breakdown'], h['kernel_time_us']
    ours = {'kernel_time_us': b['window'] * 1e6, 'idle_time_us': b['idle'] * 1e6,
            'compute_time_us': b['computation'] * 1e6,
            'non_compute_time_us': (b['communication'] + b['memory'] + b['other']) * 1e6}
    streams = {s['stream']: s for s in b['idle_by_stream']}
    for x in h['idle_by_stream']:
        ours[f"stream {x['stream']} {x['idle_category']}"] = streams.get(x['stream'], {}).get(x['idle_category'], 0) * 1e6
        h[f"stream {x['stream']} {x['idle_category']}"] = x['idle_time_us']
    kt = {x['kernel_type'].upper().replace(' OVERLAPPING ', ' overlapping '): x['seconds'] * 1e6
          for x in b['kernel_types']}
    for k, v in h['kernel_types_us'].items():
        ours[f'kernel type {k}'] = kt.get(k, 0)
        h[f'kernel type {k}'] = v
    for k, v in kt.items():
        if v and k not in h['kernel_types_us']:
            ours[f'kernel type {k}'] = v
            h[f'kernel type {k}'] = 0
    for k, v in ours.items():
        diff = 100 * abs(v - h[k]) / w
        print(f'{name:16s} {k:28s} perfcast {v:14.1f} HTA {h[k]:14.1f} us  {diff:.4f}% of the window')
        bad += diff > 1
    for k in [k for k in h if k.startswith('stream ') or k.startswith('kernel type ')]:
        del h[k]
if '--write' in sys.argv[1:]:
    with open('tests/data/hta_reference.json', 'w') as f:
        json.dump({'source': 'HolisticTraceAnalysis get_temporal_breakdown / get_idle_time_breakdown, defaults',
                   'traces': {k: v for k, v in ref.items() if k in fixtures}}, f, indent=1)
        f.write('\n')
    print('hta_compare: wrote tests/data/hta_reference.json')
sys.exit(1 if bad else 0)
PYEOF
