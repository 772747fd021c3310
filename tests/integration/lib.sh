# Shared helpers for integration tests that run a real `floe serve`.
# Source it from a bash test:  . "$(dirname "$0")/lib.sh"
#
# floe_start [DIR]   start `floe serve` on free ports with data dir DIR (default
#                    a fresh dir under $FLOE_TMP), wait for the ready line;
#                    sets FLOE_PID, FLOE_KAFKA (host:port), FLOE_HTTP, FLOE_DATA.
# floe_stop          SIGTERM, wait (then SIGKILL if it hangs); returns the exit
#                    status of floe (0 = clean shutdown).
# floe_kill          SIGKILL, wait.
# floe_restart       floe_stop then floe_start on the same data dir.
# ok NAME / not_ok NAME WHY / check NAME CMD...   TAP-like result lines.
# A trap kills floe and removes $FLOE_TMP on any exit.
set -u

: "${FLOE_BIN:?FLOE_BIN must point to the floe binary (tests/run sets it)}"
FLOE_ROOT=${FLOE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export FLOE_ROOT
FLOE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/floe-it.XXXXXX")
FLOE_PID=""
FLOE_KAFKA="" FLOE_HTTP="" FLOE_DATA=""
FLOE_READY_TIMEOUT=${FLOE_READY_TIMEOUT:-20}
FLOE_STOP_TIMEOUT=${FLOE_STOP_TIMEOUT:-20}
FLOE_LOG=""
_floe_runs=0
FLOE_FAILED=0

_floe_cleanup() {
  if [ -n "$FLOE_PID" ] && kill -0 "$FLOE_PID" 2>/dev/null; then
    kill -KILL "$FLOE_PID" 2>/dev/null
    wait "$FLOE_PID" 2>/dev/null
  fi
  # Keep the server logs of a failed run next to the test log.
  if [ "$FLOE_FAILED" -ne 0 ]; then
    for f in "$FLOE_TMP"/floe-*.log; do
      [ -f "$f" ] || continue
      echo "--- $(basename "$f") (last 30 lines)"; tail -n 30 "$f"
    done
  fi
  rm -rf "$FLOE_TMP"
}
trap _floe_cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "ok - $1"; }
not_ok() { FLOE_FAILED=1; echo "not ok - $1: $2"; }
# check NAME CMD...: ok when CMD exits 0, else not ok with its last output lines.
check() {
  local name=$1 out; shift
  if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"; fi
}

floe_start() {
  FLOE_DATA=${1:-${FLOE_DATA:-$FLOE_TMP/data}}
  mkdir -p "$FLOE_DATA"
  _floe_runs=$((_floe_runs + 1))
  FLOE_LOG="$FLOE_TMP/floe-$_floe_runs.log"
  "$FLOE_BIN" serve --data-dir "$FLOE_DATA" --listen 127.0.0.1:0 --http 127.0.0.1:0 \
    >"$FLOE_LOG" 2>&1 </dev/null &
  FLOE_PID=$!
  local deadline=$((SECONDS + FLOE_READY_TIMEOUT)) line
  while :; do
    line=$(grep -m1 '^floe ready ' "$FLOE_LOG" 2>/dev/null || true)
    [ -n "$line" ] && break
    if ! kill -0 "$FLOE_PID" 2>/dev/null; then
      echo "floe_start: floe exited before ready: $(tail -n 3 "$FLOE_LOG" | tr '\n' ' ')" >&2
      FLOE_PID=""; return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "floe_start: no ready line within ${FLOE_READY_TIMEOUT}s" >&2
      kill -KILL "$FLOE_PID" 2>/dev/null; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=""
      return 1
    fi
    sleep 0.05
  done
  FLOE_KAFKA=$(sed -n 's/.* kafka=\([^ ]*\).*/\1/p' <<<"$line")
  FLOE_HTTP=$(sed -n 's/.* http=\([^ ]*\).*/\1/p' <<<"$line")
  [ -n "$FLOE_KAFKA" ] || { echo "floe_start: bad ready line: $line" >&2; return 1; }
  export FLOE_KAFKA FLOE_HTTP FLOE_DATA
}

# Wait for floe to exit, at most FLOE_STOP_TIMEOUT seconds; then SIGKILL.
_floe_wait() {
  local deadline=$((SECONDS + FLOE_STOP_TIMEOUT)) rc
  while kill -0 "$FLOE_PID" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "floe: still running ${FLOE_STOP_TIMEOUT}s after the signal; SIGKILL" >&2
      kill -KILL "$FLOE_PID" 2>/dev/null
    fi
    sleep 0.05
  done
  { wait "$FLOE_PID"; } 2>/dev/null; rc=$?
  FLOE_PID=""
  return "$rc"
}

floe_stop() {
  [ -n "$FLOE_PID" ] || return 0
  kill -TERM "$FLOE_PID" 2>/dev/null
  _floe_wait
}

floe_kill() {
  [ -n "$FLOE_PID" ] || return 0
  # bash reports a job killed by a signal ("... Killed") on its stderr: an
  # expected kill is not news, so that report goes nowhere.
  exec 3>&2 2>/dev/null
  kill -KILL "$FLOE_PID"
  _floe_wait
  exec 2>&3 3>&-
  return 0
}

floe_restart() {
  floe_stop || true
  floe_start "$FLOE_DATA"
}

# Resident set size of floe in KiB (from /proc).
floe_rss_kb() {
  awk '/^VmRSS:/ {print $2}' "/proc/$FLOE_PID/status" 2>/dev/null
}

# A unique name for topics and group ids (notes.md: never reuse a group id).
uniq_name() { echo "$1-$$-$RANDOM$RANDOM"; }

# Run node with the interop tools resolvable (cwd tests/interop).
run_node() { (cd "$FLOE_ROOT/tests/interop" && node "$@"); }
PY=/usr/bin/python3
