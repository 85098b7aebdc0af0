# serve.sh — sourced (not run) by the scripts that test the real binary
# against a live server (cmd/mnemo/smoke.sh, server/schemathesis.sh,
# examples/notebook.sh): start `mnemo serve` on a fresh data directory,
# wait until it answers, and stop it and remove the directory on exit.
#
#   mnemo_serve BIN PORT [SERVE_FLAGS...]
#
# PORT empty picks a free port. MNEMO_API_KEYS must be set by the caller.
# Sets MNEMO_DATA (the temporary directory: the store is in $MNEMO_DATA/db,
# the server's log in $MNEMO_DATA/serve.log unless MNEMO_SERVE_LOG=- sends
# it to the terminal), MNEMO_PID and MNEMO_BASE (http://127.0.0.1:PORT), and
# an EXIT trap that stops the server (SIGTERM, then waits) and removes
# MNEMO_DATA. Fails when the server exits or does not answer /healthz
# within 30 s, printing its log.

mnemo_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

mnemo_stop() {
  if [ -n "${MNEMO_PID:-}" ]; then
    kill "$MNEMO_PID" 2>/dev/null || true
    wait "$MNEMO_PID" 2>/dev/null || true
    MNEMO_PID=
  fi
  [ -n "${MNEMO_DATA:-}" ] && rm -rf "$MNEMO_DATA"
  return 0
}

mnemo_serve() {
  local bin=$1 port=${2:-}
  shift 2
  [ -n "$port" ] || port=$(mnemo_free_port)
  MNEMO_DATA="$(mktemp -d "${TMPDIR:-/tmp}/mnemo-serve.XXXXXX")"
  MNEMO_BASE="http://127.0.0.1:$port"
  local log="$MNEMO_DATA/serve.log"
  [ "${MNEMO_SERVE_LOG:-}" = "-" ] && log=/dev/stderr
  "$bin" serve --data-dir "$MNEMO_DATA/db" --listen "127.0.0.1:$port" "$@" >>"$log" 2>&1 &
  MNEMO_PID=$!
  trap mnemo_stop EXIT
  for _ in $(seq 1 300); do
    curl -fsS "$MNEMO_BASE/healthz" >/dev/null 2>&1 && return 0
    if ! kill -0 "$MNEMO_PID" 2>/dev/null; then
      [ -f "$MNEMO_DATA/serve.log" ] && cat "$MNEMO_DATA/serve.log" >&2
      echo "serve.sh: mnemo serve exited" >&2
      return 1
    fi
    sleep 0.1
  done
  [ -f "$MNEMO_DATA/serve.log" ] && cat "$MNEMO_DATA/serve.log" >&2
  echo "serve.sh: mnemo serve is not up on $MNEMO_BASE" >&2
  return 1
}
