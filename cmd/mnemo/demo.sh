#!/usr/bin/env bash
# demo.sh BIN — start mnemo on the embedded default (SQLite graph store in a
# fresh data directory), store a few memories over HTTP, list them back, and
# stop. Used by `make demo`; every step prints the curl it runs.
set -euo pipefail
bin="${1:-bin/mnemo}"
data="$(mktemp -d "${TMPDIR:-/tmp}/mnemo-demo.XXXXXX")"
port="${MNEMO_DEMO_PORT:-18080}"
key="demo-key-0001"
base="http://127.0.0.1:$port"

export MNEMO_API_KEYS="$key:alice:admin:acme"
"$bin" serve --data-dir "$data" --listen "127.0.0.1:$port" --log-level warn &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$data"' EXIT

for _ in $(seq 1 100); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
echo "== mnemo is up on $base (data in $data)"
curl -sS "$base/healthz"; echo

say() { echo; echo "\$ $*"; }
post() {
  say curl -X POST "$base/v1/memories" -H "Authorization: Bearer $key" -d "'$1'"
  curl -sS -X POST "$base/v1/memories" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -d "$1"
  echo
}
post '{"type":"note","title":"Editor preference","content":"I prefer dark mode in every IDE.","entities":["dark mode","IDE"]}'
post '{"type":"decision","title":"Bind address","content":"The API server listens on 0.0.0.0:8080 inside the container.","entities":["API server"]}'
post '{"type":"task","title":"Rotate keys","content":"Rotate the staging API keys before Friday.","tags":["security"],"entities":["API keys","staging"]}'

say curl "$base/v1/memories?limit=10" -H "Authorization: Bearer $key"
curl -sS "$base/v1/memories?limit=10" -H "Authorization: Bearer $key"; echo

say curl "$base/v1/memories?type=task" -H "Authorization: Bearer $key"
curl -sS "$base/v1/memories?type=task" -H "Authorization: Bearer $key"; echo

say curl -X POST "$base/v1/context" -H "Authorization: Bearer $key" -d "'{\"query\":\"which IDE theme does alice prefer?\"}'"
curl -sS -X POST "$base/v1/context" -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
  -d '{"query":"which IDE theme does alice prefer?"}'; echo

say curl "$base/v1/memories" "(no key)"
curl -sS "$base/v1/memories"; echo
echo
echo "== demo done; stopping mnemo"
