#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server for tests, on loopback, with its data in one folder.
#
#   scripts/postgres_test_server.sh start DIR   initdb (when DIR holds no cluster yet) and start postgres on a free
#                                               loopback port; waits until it accepts connections and writes the port
#                                               to DIR/port, the password to DIR/password and the user to DIR/user.
#                                               A server already answering for DIR is kept; an earlier run's data is not.
#   scripts/postgres_test_server.sh stop DIR    stops it (fast shutdown) and waits for it to exit.
#
# Superuser `sluice` has the password below (scram-sha-256 over TCP), so tests exercise password handling. PostgreSQL
# refuses to run as root: as root the cluster belongs to the user `postgres` (created by Debian's package) and every
# server command runs through runuser. The data folder is DIR/cluster when that user can reach DIR, else a
# `mktemp -d` folder whose path is written to DIR/cluster_dir. Durability settings are off: test data is throwaway.
set -euo pipefail

readonly password="sluice-test-secret"
readonly user="sluice"

usage() {
  echo "usage: $0 start|stop DIR" >&2
  exit 2
}

[ $# -eq 2 ] || usage
command="$1"
dir="$2"

bindir="$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null || true)"

as_owner() {  # runs a server command as the cluster's owner
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

cluster_dir() {  # where the cluster lives (see the header)
  if [ -f "$dir/cluster_dir" ]; then cat "$dir/cluster_dir"; else echo "$dir/cluster"; fi
}

answers() {  # answers PORT
  as_owner "$bindir/pg_isready" -q -h 127.0.0.1 -p "$1" -t 2
}

start() {
  [ -n "$bindir" ] || { echo "postgres_test_server: PostgreSQL 15 is not installed (run scripts/setup.sh)" >&2; exit 1; }
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ -f "$dir/port" ] && answers "$(cat "$dir/port")"; then
    echo "postgres_test_server: already running on 127.0.0.1:$(cat "$dir/port")"
    return 0
  fi
  rm -f "$dir/port"
  # A server left running for DIR (its port file lost) is stopped; nothing of an earlier run's tests is kept.
  local cluster
  cluster="$(cluster_dir)"
  if [ -f "$cluster/postmaster.pid" ]; then as_owner "$bindir/pg_ctl" -D "$cluster" -m immediate stop >/dev/null 2>&1 || true; fi
  rm -rf "$cluster" "$dir/cluster_dir"
  cluster="$dir/cluster"
  if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "postgres_test_server: running as root needs the user postgres" >&2; exit 1; }
    mkdir -p "$cluster"
    chown postgres: "$cluster"
    if ! runuser -u postgres -- test -w "$cluster"; then  # a parent of DIR is closed to postgres
      rmdir "$cluster"
      cluster="$(mktemp -d /tmp/sluice-postgres.XXXXXX)"
      chown postgres: "$cluster"
      echo "$cluster" >"$dir/cluster_dir"
    fi
  else
    mkdir -p "$cluster"
  fi
  local pwfile="$cluster/.pw"
  echo "$password" >"$pwfile"
  [ "$(id -u)" -ne 0 ] || chown postgres: "$pwfile"
  as_owner "$bindir/initdb" -D "$cluster/data" -U "$user" --pwfile="$pwfile" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
    { echo "postgres_test_server: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1; }
  rm -f "$pwfile"
  for attempt in 1 2 3; do  # a port found free can be taken before the server binds it
    local port
    port="$(free_port)"
    if as_owner "$bindir/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w -t 60 \
      -o "-p $port -k $cluster -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
-c full_page_writes=off -c max_connections=300 -c shared_buffers=128MB -c TimeZone=UTC" start >/dev/null; then
      if answers "$port"; then
        echo "$port" >"$dir/port.tmp"
        mv "$dir/port.tmp" "$dir/port"
        echo "$password" >"$dir/password"
        echo "$user" >"$dir/user"
        echo "postgres_test_server: running on 127.0.0.1:$port (folder $cluster)"
        return 0
      fi
    fi
    echo "postgres_test_server: attempt $attempt failed; server log:" >&2
    tail -n 20 "$cluster/server.log" >&2 2>/dev/null || true
    as_owner "$bindir/pg_ctl" -D "$cluster/data" -m immediate stop >/dev/null 2>&1 || true
  done
  echo "postgres_test_server: could not start postgres in $cluster" >&2
  exit 1
}

stop() {
  [ -d "$dir" ] || return 0
  local cluster
  cluster="$(cluster_dir)"
  rm -f "$dir/port"
  [ -f "$cluster/data/postmaster.pid" ] || return 0
  as_owner "$bindir/pg_ctl" -D "$cluster/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
    as_owner "$bindir/pg_ctl" -D "$cluster/data" -m immediate stop >/dev/null 2>&1 || true
}

case "$command" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
