#!/usr/bin/env bash
# Full sync from a redis-server primary: the time from REPLICAOF to `master_link_status:up`
# for a wirespeed replica and for a redis-server replica of the same primary, alternating,
# with the primary's snapshot from disk and diskless.
# Usage: scripts/kvs-repl-from-redis-bench.sh [KEYS] [ROUNDS]
# Needs redis-server and redis-cli; builds target/release/wirespeed first.
set -euo pipefail
KEYS=${1:-300000}
ROUNDS=${2:-3}
cd "$(dirname "$0")/.."
cargo build --release -q
BIN=$PWD/target/release/wirespeed
DIR=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { # port
  for _ in $(seq 1 600); do
    redis-cli -p "$1" info replication 2>/dev/null | grep -q 'master_link_status:up' && return 0
    sleep 0.01
  done
  echo "no sync on $1" >&2; return 1
}
P=$(free_port)
mkdir -p "$DIR/primary"
redis-server --port "$P" --save '' --appendonly no --dir "$DIR/primary" --repl-diskless-sync-delay 0 >/dev/null 2>&1 &
PIDS+=($!)
sleep 0.3
python3 - "$KEYS" <<'PY' | redis-cli -p "$P" --pipe >/dev/null
import sys
n = int(sys.argv[1])
v = b'v' * 100
out = []
for i in range(n):
    k = b'k:%d' % i
    out.append(b'*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n' % (len(k), k, len(v), v))
sys.stdout.buffer.write(b''.join(out))
PY
echo "primary: redis-server $(redis-server --version | grep -o 'v=[0-9.]*'), $(redis-cli -p "$P" dbsize) keys of 100 bytes"
for mode in yes no; do
  redis-cli -p "$P" config set repl-diskless-sync "$mode" >/dev/null
  for r in $(seq 1 "$ROUNDS"); do
    for who in wirespeed redis; do
      Q=$(free_port)
      mkdir -p "$DIR/$who$r$mode"
      if [ $who = wirespeed ]; then
        (cd "$DIR/$who$r$mode" && exec "$BIN" kvs serve --port "$Q" 2>/dev/null) &
      else
        redis-server --port "$Q" --save '' --appendonly no --dir "$DIR/$who$r$mode" >/dev/null 2>&1 &
      fi
      pid=$!
      sleep 0.3
      t0=$(date +%s.%N)
      redis-cli -p "$Q" replicaof 127.0.0.1 "$P" >/dev/null
      wait_up "$Q"
      t1=$(date +%s.%N)
      n=$(redis-cli -p "$Q" dbsize)
      printf 'diskless=%s round %d %-9s %6.3f s  %s keys\n' "$mode" "$r" "$who" "$(echo "$t1 - $t0" | bc)" "$n"
      kill $pid; wait $pid 2>/dev/null || true
    done
  done
done
