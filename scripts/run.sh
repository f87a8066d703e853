#!/bin/sh
# run.sh — `make run`: from a fresh Debian 12 machine to a serving perfcast.
#
#   1. installs the Debian packages the build and a local database need (when
#      root; otherwise prints the apt-get line and stops);
#   2. builds (make);
#   3. when DATABASE_URL is unset, starts a private PostgreSQL (as the
#      `postgres` user when root — PostgreSQL refuses root — else as you) on
#      127.0.0.1:${PERFCAST_PG_PORT:-54329} and points DATABASE_URL at it.
#      Its data lives in ${PERFCAST_PG_DATA:-./var/pg} and is kept for the
#      next run; when the postgres user cannot enter the clone (root's clone
#      in /root, mode 700) and PERFCAST_PG_DATA is unset, it lives in a
#      private directory under /tmp that is removed on exit;
#   4. applies migrations, starts the service on
#      ${PERFCAST_LISTEN:-127.0.0.1:8080} and, once it answers /health,
#      prints curl examples. Ctrl-C stops the service and the private
#      PostgreSQL.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
BUILD=${BUILD:-build}

# python3 (standard library only) is not needed to serve: `make test` uses it
# (the Kineto reference reader, the README examples' runner), so that the
# Quick start's second command works on a minimal Debian 12 too.
PACKAGES="build-essential pkg-config libgsl-dev libjansson-dev libmatheval-dev libmicrohttpd-dev libpq-dev libssl-dev libyajl-dev libsqlite3-dev zlib1g-dev libarchive-dev libexpat1-dev postgresql curl python3"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "run: installing$missing"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
    else
        echo "run: missing Debian packages. Install them with:"
        echo "  sudo apt-get install -y$missing"
        exit 1
    fi
fi

make -j"$(nproc)" BUILD="$BUILD"
case "$BUILD" in
/*) bin="$BUILD/perfcast" ;;
*) bin="$root/$BUILD/perfcast" ;;
esac

pg_stop=""
if [ -z "${DATABASE_URL:-}" ]; then
    pgbin=""
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n); do pgbin=$d; done
    [ -n "$pgbin" ] || { echo "run: PostgreSQL server binaries not found (package postgresql)"; exit 1; }
    port=${PERFCAST_PG_PORT:-54329}
    as_pg=""
    [ "$(id -u)" = 0 ] && as_pg="runuser -u postgres -- env -C /" # (its cwd: /root may be closed to it)
    base="$root/var"
    tmpbase=""
    if [ -n "${PERFCAST_PG_DATA:-}" ]; then
        base=$(dirname "$PERFCAST_PG_DATA")
        mkdir -p "$base"
        data="$PERFCAST_PG_DATA"
    else
        data="$base/pg"
        mkdir -p "$base"
        [ -z "$as_pg" ] || chown postgres: "$base"
        if [ -n "$as_pg" ] && ! runuser -u postgres -- test -x "$base"; then
            # root's clone under /root (mode 700): the postgres user cannot
            # reach ./var, so the cluster lives in a private temporary
            # directory, removed when this script ends
            tmpbase=$(mktemp -d /tmp/perfcast-pg-XXXXXX)
            chown postgres: "$tmpbase"
            chmod 700 "$tmpbase"
            base="$tmpbase"
            data="$base/pg"
            echo "run: the postgres user cannot enter $root; the database lives in $base"
            echo "run: and is removed on exit (set PERFCAST_PG_DATA to a directory it can reach to keep it)"
        fi
    fi
    [ -z "$as_pg" ] || chown postgres: "$base"
    if [ ! -f "$data/PG_VERSION" ]; then
        echo "run: creating a PostgreSQL cluster in $data"
        $as_pg "$pgbin/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-instructions >"$base/initdb.log"
    fi
    cleanup_tmp=""
    [ -z "$tmpbase" ] || cleanup_tmp="rm -rf $tmpbase"
    if $as_pg "$pgbin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        echo "run: PostgreSQL already running in $data"
    else
        $as_pg "$pgbin/pg_ctl" -D "$data" -l "$base/postgres.log" -w -t 30 \
            -o "-p $port -k $base -c listen_addresses=127.0.0.1" start >/dev/null \
            || { echo "run: PostgreSQL did not start; see $base/postgres.log"; exit 1; }
        pg_stop="$as_pg $pgbin/pg_ctl -D $data -m fast -w stop"
        # also when a later step fails
        trap '$pg_stop >/dev/null 2>&1 || true; $cleanup_tmp' EXIT
    fi
    DATABASE_URL="postgresql://postgres@127.0.0.1:$port/postgres"
    export DATABASE_URL
    echo "run: DATABASE_URL=$DATABASE_URL"
fi

"$bin" migrate

listen=${PERFCAST_LISTEN:-127.0.0.1:8080}
export PERFCAST_LISTEN="$listen"
url="http://$listen"
case "$listen" in 0.0.0.0:*|:*) url="http://127.0.0.1:${listen##*:}";; esac
banner() {
    cat <<EOT

perfcast serves on $url (Ctrl-C stops it). While no API token exists it runs
open on loopback (no Authorization needed); \`$bin token create --tenant NAME
--scope admin\` ends that (README, "Security"). Try:

  curl -s $url/health
  curl -s -X POST $url/v1/experiments -H 'Content-Type: application/json' \\
    -d '{"name":"demo-$(date +%s)","parameters":["ranks"],"scaling":"weak",
         "training":{"train_samples":1281167,"validation_samples":50000,"batch_size":32,
                     "data_parallel":"ranks","model_parallel":"1","warmup_steps":10},
         "cost":{"cores_per_rank":8,"price_per_core_hour":0.05}}'
  curl -s $url/v1/experiments
  curl -s $url/openapi.json

The dashboard: $url/ (README, "Dashboard and CI regression checks").

EOT
}

# The banner is printed once the service answers, not before it has bound
# its port.
"$bin" serve &
child=$!
trap 'kill -TERM "$child" 2>/dev/null || true' INT TERM
for _ in $(seq 1 300); do
    if curl -sf -o /dev/null "$url/health" 2>/dev/null; then
        banner
        break
    fi
    kill -0 "$child" 2>/dev/null || break
    sleep 0.1
done
# The service runs as a child so that this shell can stop the private
# PostgreSQL after it (the EXIT trap); Ctrl-C or SIGTERM here is passed on
# as SIGTERM (the service drains its requests and stops).
status=0
wait "$child" || status=$?
while kill -0 "$child" 2>/dev/null; do
    status=0
    wait "$child" || status=$?
done
exit $status
