#!/usr/bin/env bash
# kvs-tls-bench.sh -- what TLS costs each server: redis-benchmark SET and GET
# throughput on the plain port and on the TLS port of the same server, for wirespeed
# and for redis-server, alternating, ROUNDS times (medians reported by the caller).
# Certificates: crates/cli/tests/data/tls (a test authority; client certificates on).
# Usage: scripts/kvs-tls-bench.sh [ROUNDS] [REQUESTS] [PIPELINE]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
N=${2:-200000}
P=${3:-1}
D=$PWD/crates/cli/tests/data/tls
WS=${WS:-$PWD/target/release/wirespeed}
TLSARGS=(--tls --cacert "$D/ca.crt" --cert "$D/client.crt" --key "$D/client.key")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
bench() { # port [tls...]
  local port=$1; shift
  redis-benchmark -p "$port" "$@" -t set,get -n "$N" -c 50 -P "$P" -r 100000 -q 2>/dev/null \
    | tr '\r' '\n' | awk '/requests per second/ {printf "%s %s ", $1, $2} END {print ""}'
}
for round in $(seq "$ROUNDS"); do
  for kind in wirespeed redis; do
    port=$(free_port); tport=$(free_port); dir=$(mktemp -d)
    if [ "$kind" = wirespeed ]; then
      printf 'port %s\ntls-port %s\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\n' \
        "$port" "$tport" "$D/server.crt" "$D/server.key" "$D/ca.crt" > "$dir/c.conf"
      "$WS" kvs serve --config "$dir/c.conf" 2>/dev/null & pid=$!
    else
      redis-server --port "$port" --tls-port "$tport" --tls-cert-file "$D/server.crt" \
        --tls-key-file "$D/server.key" --tls-ca-cert-file "$D/ca.crt" --save '' \
        --appendonly no --dir "$dir" >/dev/null 2>&1 & pid=$!
    fi
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    echo "round $round $kind plain: $(bench "$port")"
    echo "round $round $kind tls:   $(bench "$tport" "${TLSARGS[@]}")"
    kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$dir"
  done
done
