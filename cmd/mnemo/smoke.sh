#!/usr/bin/env bash
# smoke.sh BIN — the curation loop end to end against the real binary
# (`make smoke`, run by .ci/run): `mnemo serve` on a fresh data directory
# (the embedded default), then over HTTP: ingest -> read_context with
# citations -> a proposal pinned to the version read -> the curator accepts
# -> promote -> read_context returns the new version by default; an agent
# may not accept, a principal of another repository neither reads nor
# proposes; a citation read_context did not hand out fails verification;
# an erased memory is gone from get, read_context and search. Any
# unexpected status or value fails the run. MNEMO_SMOKE_FLAGS adds serve
# flags (e.g. --vector off).
set -euo pipefail
bin="${1:-bin/mnemo}"

export MNEMO_API_KEYS="writer-key:writer1:writer:t1/o1/r1,agent-key1:agent1:agent:t1/o1/r1,curator-key:curator1:librarian:t1/o1/r1,admin-key1:admin1:admin:t1/o1/r1,outsider-key:outsider1:agent:t1/o1/r2"
# shellcheck source=serve.sh
. "$(dirname "$0")/serve.sh"
# shellcheck disable=SC2086
MNEMO_SERVE_LOG=- mnemo_serve "$bin" "${MNEMO_SMOKE_PORT:-}" --log-level warn ${MNEMO_SMOKE_FLAGS:-}
base=$MNEMO_BASE
out="$MNEMO_DATA/out.json"

fail() { echo "smoke: FAIL: $*" >&2; echo "smoke: last answer: $(cat "$out" 2>/dev/null)" >&2; exit 1; }
# req WANT_STATUS KEY METHOD PATH [BODY]: the answer is left in $out.
req() {
  local want=$1 key=$2 method=$3 path=$4 body=${5:-}
  local args=(-sS -o "$out" -w '%{http_code}' -X "$method" "$base$path" -H "Authorization: Bearer $key")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' -d "$body")
  local got
  got=$(curl "${args[@]}") || fail "$method $path: curl failed"
  [ "$got" = "$want" ] || fail "$method $path as $key: status $got, want $want"
  echo "ok  $want $method $path ($key)"
}
# get EXPR: evaluate a Python expression over the last answer (bound to j).
get() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$out" "$1"; }
expect() { local got; got=$(get "$1"); [ "$got" = "$2" ] || fail "$1 = $got, want $2"; }

query='{"query":"postgres connection pool size"}'
req 201 writer-key POST /v1/memories '{"type":"note","visibility":"project","title":"postgres pool","content":"The postgres connection pool size is 10."}'
mem=$(get 'j["id"]'); v1=$(get 'j["version_id"]')

req 200 agent-key1 POST /v1/context "$query"
expect 'len(j["items"])' 1
expect 'j["items"][0]["version_id"]' "$v1"
expect 'len(j["items"][0]["citations"]) > 0' True

req 201 agent-key1 POST /v1/proposals "{\"memory_id\":\"$mem\",\"version_id\":\"$v1\",\"content\":\"The postgres connection pool size is 20.\"}"
prop=$(get 'j["proposal"]["id"]')
req 403 agent-key1 POST "/v1/proposals/$prop:accept"
req 200 outsider-key POST /v1/context "$query"
expect 'len(j["items"])' 0
req 404 outsider-key POST /v1/proposals "{\"memory_id\":\"$mem\",\"version_id\":\"$v1\",\"content\":\"x\"}"
req 404 outsider-key GET "/v1/proposals/$prop"

req 200 curator-key POST "/v1/proposals/$prop:accept" '{"reason":"load test passed"}'
v2=$(get 'j["version"]["id"]')
expect 'j["proposal"]["accepted_version_id"]' "$v2"
req 403 agent-key1 POST /v1/baselines:promote '{}'
req 201 curator-key POST /v1/baselines:promote '{"name":"release-1"}'
req 200 agent-key1 GET /v1/baselines
expect 'j["baselines"][0]["published"]' True

req 200 agent-key1 POST /v1/context "$query"
expect 'j["items"][0]["version_id"]' "$v2"
expect 'j["items"][0]["content"]' "The postgres connection pool size is 20."
ctx=$(get 'j["context_id"]')
cite=$(get 'json.dumps(j["items"][0]["citations"][:1])')
req 200 agent-key1 POST /v1/citations/verify "{\"context_id\":\"$ctx\",\"citations\":$cite}"
expect 'j["valid"]' True
req 200 agent-key1 POST /v1/citations/verify "{\"context_id\":\"$ctx\",\"citations\":[{\"element_id\":\"$mem\",\"version_id\":\"$v1\"}]}"
expect 'j["valid"]' False

req 200 admin-key1 POST "/v1/memories/$mem:erase" '{"reason":"erasure request"}'
req 404 agent-key1 GET "/v1/memories/$mem"
req 200 agent-key1 POST /v1/context "$query"
expect 'len(j["items"])' 0
req 200 agent-key1 POST /v1/search "$query"
expect "'$mem' in json.dumps(j)" False
echo "smoke: the curation loop passed"
