#!/bin/sh
# run.sh BUILD — make test-browser: installs puppeteer-core (pinned in
# package-lock.json) when missing, then runs the dashboard test in Debian's
# chromium. Ends with "N passed, N failed".
set -eu
cd "$(dirname "$0")"
if [ ! -d node_modules/puppeteer-core ]; then
    npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
cd ../..
exec node tests/browser/dashboard.test.mjs "${1:-build}"
