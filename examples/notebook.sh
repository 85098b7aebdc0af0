#!/usr/bin/env bash
# notebook.sh BIN PYTHON — run examples/quickstart.ipynb against a live
# server (`make notebook`, run by .ci/run): `mnemo serve` (BIN) on a fresh
# data directory with one admin key on a free port, then nbconvert
# --execute with PYTHON (the venv `make notebook` installs from
# examples/requirements.txt). Every cell asserts what it shows: any failed
# assertion or error fails the run. The executed notebook, with its
# outputs, is left in .cache/notebook-out/quickstart.ipynb.
set -euo pipefail
bin="${1:?usage: notebook.sh BIN PYTHON}"
python="${2:?usage: notebook.sh BIN PYTHON}"
out="${NOTEBOOK_OUT:-.cache/notebook-out}"
key="nb-key-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

export MNEMO_API_KEYS="$key:alice:admin:acme"
# shellcheck source=../cmd/mnemo/serve.sh
. "$(dirname "$0")/../cmd/mnemo/serve.sh"
mnemo_serve "$bin" "${NOTEBOOK_PORT:-}" --log-level warn

mkdir -p "$out"
status=0
MNEMO_URL="$MNEMO_BASE" MNEMO_API_KEY="$key" MPLBACKEND=module://matplotlib_inline.backend_inline \
  "$python" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=120 \
  --output-dir "$out" "$(dirname "$0")/quickstart.ipynb" || status=$?
if grep -q 'level=ERROR' "$MNEMO_DATA/serve.log"; then
  echo "notebook.sh: the server logged errors:" >&2
  grep 'level=ERROR' "$MNEMO_DATA/serve.log" | head -20 >&2
  status=1
fi
[ "$status" = 0 ] && echo "notebook.sh: examples/quickstart.ipynb ran clean against $MNEMO_BASE"
exit "$status"
