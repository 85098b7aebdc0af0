#!/usr/bin/env bash
# schemathesis.sh BIN ST — property-based tests of the HTTP API: start
# `mnemo serve` (BIN) on the embedded store in a fresh data directory, with
# one API key whose roles hold every permission, and run schemathesis (ST)
# against the server's own /openapi.json. Fails on any 5xx, any answer the
# document does not allow (status, content type, headers, body schema) and
# any request the document calls invalid that the server accepts. Used by
# `make schemathesis` (which installs ST) and .ci/run.
#
#   SCHEMATHESIS_EXAMPLES  cases per operation and phase (default 25)
#   SCHEMATHESIS_SEED      the generator's seed (default fixed: CI is reproducible)
#   SCHEMATHESIS_PORT      the port to serve on (default: a free one)
#   SCHEMATHESIS_REPORT    where the JUnit and HAR reports go (default .cache/schemathesis-report)
#   SCHEMATHESIS_MIN_CASES fewer generated cases than this fail the run (default 1000)
set -euo pipefail
bin="${1:?usage: schemathesis.sh BIN ST}"
st="${2:?usage: schemathesis.sh BIN ST}"
report="${SCHEMATHESIS_REPORT:-.cache/schemathesis-report}"
key="st-key-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

export MNEMO_API_KEYS="$key:fuzzer:admin|operator|librarian:acme"
# shellcheck source=../cmd/mnemo/serve.sh
. "$(dirname "$0")/../cmd/mnemo/serve.sh"
mnemo_serve "$bin" "${SCHEMATHESIS_PORT:-}" --log-level error
base=$MNEMO_BASE

mkdir -p "$report"
status=0
"$st" run "$base/openapi.json" \
  --header "Authorization: Bearer $key" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "${SCHEMATHESIS_EXAMPLES:-25}" \
  --seed "${SCHEMATHESIS_SEED:-1414}" \
  --workers 2 \
  --request-timeout 30 \
  --suppress-health-check too_slow,filter_too_much \
  --generation-database none \
  --report junit,har --report-junit-path "$report/junit.xml" --report-har-path "$report/requests.har" \
  --output-truncate false >"$report/output.txt" 2>&1 || status=$?
cat "$report/output.txt"
cases="$(sed -n 's/^ *\([0-9][0-9]*\) generated.*/\1/p' "$report/output.txt" | tail -1)"
echo "schemathesis.sh: ${cases:-no} generated cases"
if [ "${cases:-0}" -lt "${SCHEMATHESIS_MIN_CASES:-1000}" ]; then
  echo "schemathesis.sh: fewer than ${SCHEMATHESIS_MIN_CASES:-1000} cases" >&2
  status=1
fi
if grep -q 'level=ERROR' "$MNEMO_DATA/serve.log"; then
  echo "schemathesis.sh: the server logged errors:" >&2
  grep 'level=ERROR' "$MNEMO_DATA/serve.log" | head -20 >&2
  status=1
fi
exit "$status"
