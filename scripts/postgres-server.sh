#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests and development, in a folder of its own, on a loopback port.
#
#   scripts/postgres-server.sh start [DIR] [PORT]   installs PostgreSQL when missing (root, apt-get), creates
#                                                   a cluster in DIR, starts it, prints the store URL
#   scripts/postgres-server.sh stop [DIR]           stops it (the folder stays until you remove it)
#
# DIR defaults to /tmp/ocd-postgres, PORT to 54329. The role and database are both `ocd`, with trust
# authentication on loopback only. Export the printed URL as OCD_POSTGRES_URL to run the PostgreSQL tests:
#   export OCD_POSTGRES_URL=$(scripts/postgres-server.sh start)
set -euo pipefail
command=${1:-start}
dir=${2:-/tmp/ocd-postgres}
port=${3:-54329}

bindir() {
    if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return; fi
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    [ -n "$found" ] && [ -x "$found/initdb" ] && echo "$found"
}

# Runs a server program as the cluster's owner: PostgreSQL refuses to run as root.
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
start)
    bin=$(bindir || true)
    if [ -z "$bin" ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null
            bin=$(bindir)
        else
            echo "PostgreSQL is not installed (Debian: apt-get install postgresql)" >&2
            exit 1
        fi
    fi
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        useradd --system --home-dir "$dir" --shell /bin/sh postgres
    fi
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$dir/data" -U ocd --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    if ! as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        # Loopback only, the socket in the folder; enough connections for the multi-writer tests.
        as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" >/dev/null \
            || { tail -20 "$dir/server.log" >&2; exit 1; }
    fi
    if ! as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U ocd -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'ocd'" | grep -q 1; then
        as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U ocd ocd
    fi
    echo "postgresql://ocd@127.0.0.1:$port/ocd?sslmode=disable"
    ;;
stop)
    bin=$(bindir || true)
    [ -n "$bin" ] && [ -f "$dir/data/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: $0 start|stop [DIR] [PORT]" >&2
    exit 2
    ;;
esac
