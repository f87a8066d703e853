#!/bin/sh
# test_layout.sh — the source layout's rules (tools/check_layout.py: layers,
# folder cycles, file sizes, opening comments, the api/ rule, pure modules)
# as part of `make test`; prints "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
exec python3 tools/check_layout.py
