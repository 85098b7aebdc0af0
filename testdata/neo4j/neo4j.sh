#!/usr/bin/env bash
# neo4j.sh start|stop|status — the local Neo4j used by mnemo's tests and CI.
#
# Starts Neo4j Community 5.26 (embedded, see src/main/java/dev/mnemo/neo4j/Launcher.java)
# with Bolt on 127.0.0.1:$NEO4J_PORT, no auth, no TLS. Tests then use
#   NEO4J_URI=bolt://127.0.0.1:$NEO4J_PORT
#
# Environment:
#   NEO4J_PORT            Bolt port (default 7687)
#   NEO4J_DATA_DIR        Neo4j home: data and logs (default target/data-$NEO4J_PORT)
#   NEO4J_JAVA_OPTS       JVM options (default: 1 GiB heap, the --add-opens Neo4j wants)
#   NEO4J_PAGECACHE_MB    page cache size in MiB (default 256)
#   NEO4J_CONFIG          more Neo4j settings, "key=value key=value" (neo4j.conf keys)
#   NEO4J_BROWSER_PORT    serve Neo4j Browser on http://127.0.0.1:$NEO4J_BROWSER_PORT/browser/ (default off)
#   NEO4J_START_TIMEOUT   seconds to wait for readiness (default 180)
#
# Files (under target/): neo4j-$NEO4J_PORT.pid, neo4j-$NEO4J_PORT.log.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${NEO4J_PORT:-7687}"
target="$here/target"
data_dir="${NEO4J_DATA_DIR:-$target/data-$port}"
pid_file="$target/neo4j-$port.pid"
log_file="$target/neo4j-$port.log"
jar="$target/neo4j-launcher.jar"
timeout="${NEO4J_START_TIMEOUT:-180}"
java_opts="${NEO4J_JAVA_OPTS:--Xms512m -Xmx1g -XX:+UseG1GC -XX:-OmitStackTraceInFastThrow \
--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
-Dio.netty.tryReflectionSetAccessible=true -Djdk.nio.maxCachedBufferSize=1024 -Dlog4j2.disable.jmx=true}"

log() { echo "neo4j.sh: $*" >&2; }

# bolt_open reports whether something accepts TCP connections on the Bolt port.
bolt_open() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

# running prints the launcher's pid and succeeds when the pid file names a live launcher.
running() {
  [[ -f "$pid_file" ]] || return 1
  local pid
  pid="$(cat "$pid_file")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

# build packages the launcher when the jar is missing or older than its sources.
build() {
  if [[ -f "$jar" && -d "$target/lib" ]] && [[ -z "$(find "$here/pom.xml" "$here/src" -newer "$jar" -print -quit)" ]]; then
    return 0
  fi
  log "building launcher (mvn -q -B package)"
  (cd "$here" && mvn -q -B package)
}

start() {
  local pid
  if pid="$(running)"; then
    log "already running (pid $pid) on bolt://127.0.0.1:$port"
    return 0
  fi
  if bolt_open; then
    log "port $port is already in use by another process; set NEO4J_PORT"
    return 1
  fi
  build
  mkdir -p "$data_dir" "$target"
  local started=$SECONDS
  # shellcheck disable=SC2086 # java_opts is a word list on purpose
  nohup java $java_opts -jar "$jar" --port "$port" --data "$data_dir" \
    ${NEO4J_PAGECACHE_MB:+--pagecache "$NEO4J_PAGECACHE_MB"} \
    ${NEO4J_BROWSER_PORT:+--browser "$NEO4J_BROWSER_PORT"} >"$log_file" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$pid_file"
  while ((SECONDS - started < timeout)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "launcher exited during start-up; last lines of $log_file:"
      tail -n 30 "$log_file" >&2
      rm -f "$pid_file"
      return 1
    fi
    if grep -q '^NEO4J READY ' "$log_file" && bolt_open; then
      log "ready in $((SECONDS - started))s: bolt://127.0.0.1:$port (pid $pid, data $data_dir, log $log_file)"
      return 0
    fi
    sleep 1
  done
  log "not ready after ${timeout}s; stopping it. Last lines of $log_file:"
  tail -n 30 "$log_file" >&2
  stop
  return 1
}

stop() {
  local pid
  if ! pid="$(running)"; then
    log "not running"
    rm -f "$pid_file"
    return 0
  fi
  kill -TERM "$pid"
  for _ in $(seq 1 60); do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pid_file"
      log "stopped (pid $pid)"
      return 0
    fi
    sleep 1
  done
  log "pid $pid did not stop within 60s after SIGTERM; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pid_file"
  return 1
}

status() {
  local pid
  if pid="$(running)" && bolt_open; then
    echo "running pid $pid bolt://127.0.0.1:$port"
    return 0
  fi
  echo "not running"
  return 3
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  build) build ;;
  *) echo "usage: $0 start|stop|status|build" >&2; exit 2 ;;
esac
