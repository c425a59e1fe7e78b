#!/usr/bin/env bash
# A throwaway ClickHouse server for tests, on loopback, with every path inside one folder.
#
#   scripts/clickhouse_test_server.sh start DIR   starts clickhouse-server with a free HTTP port and a free TCP port
#                                                 (no interserver port), writes DIR/config.xml and DIR/users.xml,
#                                                 waits until `SELECT 1` answers over HTTP and writes the HTTP port
#                                                 to DIR/http_port and the password to DIR/password. A server already
#                                                 answering for DIR is kept.
#   scripts/clickhouse_test_server.sh stop DIR    stops it (TERM, then KILL after 30 s) and waits for it to exit.
#
# User `default` has the password below, so tests exercise password handling; the server's time zone is UTC.
# Works as root and as any other user (every path is in DIR, which must be writable).
set -euo pipefail

readonly password="sluice-test-secret"

usage() {
  echo "usage: $0 start|stop DIR" >&2
  exit 2
}

[ $# -eq 2 ] || usage
command="$1"
dir="$2"

server_bin="$(command -v clickhouse-server || true)"
if [ -z "$server_bin" ] && [ -x /usr/bin/clickhouse ]; then server_bin="/usr/bin/clickhouse server"; fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

answers() {  # answers PORT: whether SELECT 1 works over HTTP with the password
  local reply
  reply="$(curl_get "$1" 2>/dev/null || true)"
  [ "$reply" = "1" ]
}

curl_get() {
  # No curl dependency: python3's urllib posts the query with the credentials in headers.
  python3 - "$1" "$password" <<'PY'
import sys, urllib.request
port, password = sys.argv[1], sys.argv[2]
request = urllib.request.Request("http://127.0.0.1:%s/" % port, data=b"SELECT 1",
                                 headers={"X-ClickHouse-User": "default", "X-ClickHouse-Key": password})
print(urllib.request.urlopen(request, timeout=2).read().decode().strip())
PY
}

running_pid() {  # the server's pid when it is alive, else nothing
  if [ -f "$dir/server.pid" ]; then
    local pid
    pid="$(cat "$dir/server.pid")"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
  fi
}

write_config() {  # write_config HTTP_PORT TCP_PORT
  mkdir -p "$dir/data" "$dir/tmp" "$dir/log" "$dir/user_files" "$dir/format_schemas"
  cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger>
    <level>warning</level>
    <log>$dir/log/server.log</log>
    <errorlog>$dir/log/error.log</errorlog>
    <console>0</console>
  </logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$1</http_port>
  <tcp_port>$2</tcp_port>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
</yandex>
XML
  cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <max_memory_usage>2000000000</max_memory_usage>
    </default>
  </profiles>
  <users>
    <default>
      <password>$password</password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas>
    <default>
      <interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows>
        <read_rows>0</read_rows><execution_time>0</execution_time></interval>
    </default>
  </quotas>
</yandex>
XML
}

start() {
  [ -n "$server_bin" ] || { echo "clickhouse_test_server: clickhouse-server is not installed (run scripts/setup.sh)" >&2; exit 1; }
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ -n "$(running_pid)" ] && [ -f "$dir/http_port" ] && answers "$(cat "$dir/http_port")"; then
    echo "clickhouse_test_server: already running on 127.0.0.1:$(cat "$dir/http_port")"
    return 0
  fi
  rm -f "$dir/http_port"
  # A fresh server: nothing of an earlier run's tests is kept.
  rm -rf "$dir/data" "$dir/tmp"
  # A port found free can be taken before the server binds it: try again with new ports.
  for attempt in 1 2 3; do
    local http_port tcp_port pid
    http_port="$(free_port)"
    tcp_port="$(free_port)"
    [ "$http_port" != "$tcp_port" ] || continue
    write_config "$http_port" "$tcp_port"
    # setsid: the server outlives the CTest process that started it, in a session of its own.
    (cd "$dir" && exec setsid $server_bin --config-file="$dir/config.xml" </dev/null >>"$dir/log/stdout.log" 2>&1) &
    pid=$!
    echo "$pid" >"$dir/server.pid"
    for _ in $(seq 1 600); do  # up to 60 s
      if ! kill -0 "$pid" 2>/dev/null; then break; fi
      if answers "$http_port"; then
        echo "$http_port" >"$dir/http_port.tmp"
        mv "$dir/http_port.tmp" "$dir/http_port"
        echo "$password" >"$dir/password"
        echo "clickhouse_test_server: running on 127.0.0.1:$http_port (pid $pid, folder $dir)"
        return 0
      fi
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || true
    echo "clickhouse_test_server: attempt $attempt failed; server log:" >&2
    tail -n 20 "$dir/log/error.log" "$dir/log/stdout.log" >&2 2>/dev/null || true
  done
  echo "clickhouse_test_server: could not start clickhouse-server in $dir" >&2
  exit 1
}

stop() {
  [ -d "$dir" ] || return 0
  local pid
  pid="$(running_pid)"
  rm -f "$dir/http_port"
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 300); do  # up to 30 s
    kill -0 "$pid" 2>/dev/null || { rm -f "$dir/server.pid"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  rm -f "$dir/server.pid"
}

case "$command" in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
