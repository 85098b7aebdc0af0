#!/usr/bin/env bash
# demo.sh BIN — start mnemo on the embedded default (SQLite graph store in a
# fresh data directory), store a few memories over HTTP, list them back, and
# stop. Used by `make demo`; every step prints the curl it runs.
set -euo pipefail
bin="${1:-bin/mnemo}"
key="demo-key-0001"

export MNEMO_API_KEYS="$key:alice:admin:acme"
# shellcheck source=serve.sh
. "$(dirname "$0")/serve.sh"
MNEMO_SERVE_LOG=- mnemo_serve "$bin" "${MNEMO_DEMO_PORT:-18080}" --log-level warn
base=$MNEMO_BASE
data=$MNEMO_DATA/db
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
