#!/usr/bin/env bash
# Installs everything Sluice needs on a fresh Debian 12 machine. Idempotent: a second run changes nothing
# and takes about a second.
#   - Debian packages (apt-get update runs at most once, only when something is missing), ClickHouse 18.16 for the
#     tests included (scripts/clickhouse_test_server.sh runs it on loopback; its system service is not needed), and
#     PostgreSQL 15 likewise (scripts/postgres_test_server.sh)
#   - DuckDB 1.4.4 from the npm registry into third_party/duckdb/ (libduckdb.so + duckdb.h), sha256-checked
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
third_party="$root/third_party"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

packages=(
  build-essential g++ cmake ninja-build pkg-config ccache git ca-certificates
  libtomlplusplus-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libssl-dev libjemalloc-dev libhowardhinnant-date-dev tzdata libsqlite3-dev libgtest-dev libgmock-dev
  python3-dev pybind11-dev
  clickhouse-server clickhouse-client libcpp-httplib-dev
  postgresql-15 libpq-dev libcurl4-openssl-dev libdtl-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -q
  as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# Installed only when their command is missing: some images ship Node.js and npm from a package of their own.
fallback_packages=(npm)
for p in "${fallback_packages[@]}"; do
  if ! command -v "$p" >/dev/null; then
    echo "setup: installing $p"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -q
    as_root apt-get install -y -q --no-install-recommends "$p"
  fi
done

# DuckDB: the shared library from the Node bindings package, the C API header from the duckdb package.
# `npm pack` only downloads the tarball; `npm install` would run an install script that tries a download.
duckdb_dir="$third_party/duckdb"
bindings_pkg="@duckdb/node-bindings-linux-x64@1.4.4-r.4"
bindings_tgz="duckdb-node-bindings-linux-x64-1.4.4-r.4.tgz"
bindings_sha="732fac4dc6b8f198870b9c4bb6ddf13544466daca00ad28ba2f1d80de5d7aa4b"
header_pkg="duckdb@1.4.4"
header_tgz="duckdb-1.4.4.tgz"
header_sha="5bb967dcbcd517670ba5f169f238fb9d6787e53752c60ebe24386169d76941ed"
stamp="$duckdb_dir/.installed-1.4.4-r.4"

if [ ! -f "$stamp" ] || [ ! -f "$duckdb_dir/lib/libduckdb.so" ] || [ ! -f "$duckdb_dir/include/duckdb.h" ]; then
  command -v npm >/dev/null || { echo "setup: npm is missing" >&2; exit 1; }
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "setup: fetching DuckDB 1.4.4 from the npm registry"
  (cd "$work" && npm pack --silent "$bindings_pkg" "$header_pkg" >/dev/null)
  echo "$bindings_sha  $work/$bindings_tgz" | sha256sum -c --quiet -
  echo "$header_sha  $work/$header_tgz" | sha256sum -c --quiet -
  mkdir -p "$work/bindings" "$work/header"
  tar -xzf "$work/$bindings_tgz" -C "$work/bindings" package/libduckdb.so package/LICENSE
  tar -xzf "$work/$header_tgz" -C "$work/header" package/src/duckdb/src/include/duckdb.h
  rm -rf "$duckdb_dir.tmp"
  mkdir -p "$duckdb_dir.tmp/lib" "$duckdb_dir.tmp/include"
  cp "$work/bindings/package/libduckdb.so" "$duckdb_dir.tmp/lib/"
  cp "$work/bindings/package/LICENSE" "$duckdb_dir.tmp/LICENSE"
  cp "$work/header/package/src/duckdb/src/include/duckdb.h" "$duckdb_dir.tmp/include/"
  touch "$duckdb_dir.tmp/.installed-1.4.4-r.4"
  rm -rf "$duckdb_dir"
  mv "$duckdb_dir.tmp" "$duckdb_dir"
  echo "setup: DuckDB installed into third_party/duckdb"
fi
