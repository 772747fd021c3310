# The shell side of the integration-test harness.  floe_serve.py (Python)
# and tests/unit/floe_proc.c (C) are the other two; all three run `floe
# serve` the same way: free ports (port 0), a bounded wait for its line
# "floe ready kafka=HOST:PORT http=HOST:PORT data=DIR" (FLOE_READY_TIMEOUT
# seconds, default 60) that reports floe's last log lines when it exits
# first, SIGTERM with a SIGKILL after FLOE_STOP_TIMEOUT seconds (60), and a
# SIGKILL when the script exits.
#
# Source it from a bash test:  . "$(dirname "$0")/lib.sh"   (scripts/demo too)
#
# floe_start [DIR [ARG...]]  start `floe serve --data-dir DIR ARG...` on free
#         ports (DIR "" or none: $FLOE_TMP/data); sets and exports FLOE_PID,
#         FLOE_KAFKA (host:port), FLOE_HTTP, FLOE_DATA.  When floe exits or
#         stays silent instead, prints "not ok - floe_start: why", returns 1.
# floe_stop     SIGTERM, wait; returns floe's exit status (0 = clean stop).
# floe_kill     SIGKILL, wait.
# floe_restart  floe_stop, then floe_start with the same dir and arguments.
# run_client NAME SECONDS CMD...  a client that prints its own "ok - ..." /
#         "not ok - ..." lines (tests/interop/clients/*): its exit status
#         is part of the verdict.  Exiting non-zero, timing out, dying by a
#         signal, or printing no result line is "not ok - NAME: why".
# run_cmd NAME SECONDS CMD...  a command whose exit status is its result
#         (kcat): silent when it succeeds; else "not ok - NAME: why" and
#         returns 1.  Its stdout is the caller's (redirect it freely).
# ok NAME / not_ok NAME WHY / check NAME CMD... / check_eq NAME GOT WANT
#         result lines.
# floe_why RC [LIMIT ELAPSED] / floe_gist FILE   an exit status and a
#         command's output in words, for a reason.
# floe_kill_on_exit PID   SIGKILL PID too when the script exits.
# $NODE / $PY   node in tests/interop (the npm peers resolve), the Python
#         that sees Debian's Kafka clients; for run_client:
#         run_client NAME 240 "${NODE[@]}" clients/x.mjs
# FLOE_LOG_DIR  where floe's logs go (default $FLOE_TMP): floe-N.log for
#         the Nth start.
# FLOE_TEST_STEPS="WORD..."  a quick mode: only the checks whose names
#         contain a word run (test_harness uses it).
#
# On exit, however it happens: floe and the registered pids are killed,
# floe's logs are shown if anything failed, $FLOE_TMP is removed, and the
# script's exit status is 1 if it printed any "not ok" line (a script that
# exits non-zero without one prints "not ok - SCRIPT: why" first).
set -u

: "${FLOE_BIN:?FLOE_BIN must point to the floe binary (tests/run sets it)}"
FLOE_ROOT=${FLOE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export FLOE_ROOT
FLOE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/floe-it.XXXXXX")
FLOE_LOG_DIR=${FLOE_LOG_DIR:-$FLOE_TMP}
FLOE_PID=""
FLOE_KAFKA="" FLOE_HTTP="" FLOE_DATA=""
FLOE_READY_TIMEOUT=${FLOE_READY_TIMEOUT:-60}
FLOE_STOP_TIMEOUT=${FLOE_STOP_TIMEOUT:-60}
FLOE_LOG=""
FLOE_FAILED=0
_floe_args=()
_floe_runs=0
_floe_bg=()
_floe_script=$(basename "$0")
# Result lines go to the script's own stdout even when a caller redirects
# the stdout of run_cmd or check.
exec {_floe_out}>&1

ok() { echo "ok - $1" >&"$_floe_out"; }
# (the mark file carries a failure out of a subshell: out=$(run_cmd ...))
not_ok() {
  FLOE_FAILED=1
  : >"$FLOE_TMP/.failed"
  echo "not ok - $1: $2" >&"$_floe_out"
}

_floe_cleanup() {
  local rc=$? pid
  trap '' PIPE # (a reader that went away must not stop the cleanup)
  [ -e "$FLOE_TMP/.failed" ] && FLOE_FAILED=1
  if [ -n "$FLOE_PID" ] && kill -0 "$FLOE_PID" 2>/dev/null; then
    kill -KILL "$FLOE_PID" 2>/dev/null
    { wait "$FLOE_PID"; } 2>/dev/null || true
  fi
  for pid in "${_floe_bg[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  if [ "$rc" -ne 0 ] && [ "$FLOE_FAILED" -eq 0 ]; then
    not_ok "$_floe_script" "$(floe_why "$rc") before the end of the script"
  fi
  # Keep the server logs of a failed run next to the test log.
  if [ "$FLOE_FAILED" -ne 0 ]; then
    for f in "$FLOE_LOG_DIR"/floe-*.log; do
      [ -f "$f" ] || continue
      echo "--- $(basename "$f") (last 30 lines)"
      tail -n 30 "$f"
    done
  fi
  rm -rf "$FLOE_TMP"
  [ "$rc" -eq 0 ] && [ "$FLOE_FAILED" -ne 0 ] && rc=1
  exit "$rc"
}
trap _floe_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

floe_kill_on_exit() { _floe_bg+=("$1"); }

# What an exit status means: "exited with status N", "killed by SIGKILL",
# or, given the time limit and the seconds it ran, "timed out after Ns".
floe_why() { # rc [limit elapsed]
  local rc=$1 limit=${2:-} elapsed=${3:-0}
  if [ -n "$limit" ] && { [ "$rc" -eq 124 ] || { [ "$rc" -gt 128 ] && [ "$elapsed" -ge "$limit" ]; }; }; then
    echo "timed out after ${limit}s"
  elif [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
    echo "killed by SIG$(kill -l $((rc - 128)))"
  else
    echo "exited with status $rc"
  fi
}

# The last non-empty lines of a file on one line, for a reason.
_floe_tail() { grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n "${2:-3}" | tr '\n' ' ' | cut -c1-400; }
# What a client's output says went wrong: its last error line (a Python
# exception, a node "Error: ..."), else its last lines.
floe_gist() {
  local e
  e=$(grep -E '^[A-Za-z_.]*(Error|Exception)\b|[Ee]rror: ' "$1" 2>/dev/null | tail -n 1 | cut -c1-300)
  if [ -n "$e" ]; then echo "$e"; else _floe_tail "$1"; fi
}

# check NAME CMD...: ok when CMD exits 0, else not ok with why and its last
# output lines.  With FLOE_TEST_STEPS="WORD..." (a quick mode, as in
# floe_serve.py) only the checks whose names contain one of the words run.
check() {
  local name=$1 out rc=0 w; shift
  if [ -n "${FLOE_TEST_STEPS:-}" ]; then
    for w in $FLOE_TEST_STEPS; do [[ $name == *"$w"* ]] && break; done
    [[ $name == *"$w"* ]] || { ok "$name # SKIP not in FLOE_TEST_STEPS"; return 0; }
  fi
  out=$(mktemp "$FLOE_TMP/check.XXXXXX")
  "$@" >"$out" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ]; then
    ok "$name"
  else
    not_ok "$name" "$(floe_why "$rc"): $(floe_gist "$out")"
  fi
  rm -f "$out"
}

# check_eq NAME GOT WANT: ok when the strings are equal.
check_eq() {
  if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi
}

run_client() { # NAME SECONDS CMD...
  local name=$1 secs=$2 cap rc t0=$SECONDS n_ok n_bad; shift 2
  cap=$(mktemp "$FLOE_TMP/client.XXXXXX")
  timeout -k 10 "$secs" "$@" 2>&1 | tee "$cap" >&"$_floe_out"
  rc=${PIPESTATUS[0]}
  n_ok=$(grep -c "^ok - " "$cap" || true)
  n_bad=$(grep -c "^not ok - " "$cap" || true)
  if [ "$n_bad" -gt 0 ]; then
    FLOE_FAILED=1
    : >"$FLOE_TMP/.failed"
  fi
  if [ "$rc" -eq 0 ] && [ $((n_ok + n_bad)) -eq 0 ]; then
    not_ok "$name" "printed no result line: $(_floe_tail "$cap")"
  elif [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 1 ] && [ "$n_bad" -gt 0 ]; }; then
    # (exit 1 after its own "not ok" lines is a client's normal verdict)
    not_ok "$name" "$(floe_why "$rc" "$secs" $((SECONDS - t0))); last output: $(floe_gist "$cap")"
  fi
  rm -f "$cap"
  [ "$rc" -eq 0 ] && [ "$n_bad" -eq 0 ]
}

run_cmd() { # NAME SECONDS CMD...
  local name=$1 secs=$2 err rc t0=$SECONDS; shift 2
  err=$(mktemp "$FLOE_TMP/cmd.XXXXXX")
  timeout -k 10 "$secs" "$@" 2>"$err"
  rc=$?
  cat "$err" >&2
  [ "$rc" -eq 0 ] || not_ok "$name" "$1 $(floe_why "$rc" "$secs" $((SECONDS - t0))): $(floe_gist "$err")"
  rm -f "$err"
  return "$rc"
}

floe_start() { # [DIR [ARG...]]
  local dir=${1:-}
  [ $# -gt 0 ] && shift
  FLOE_DATA=${dir:-${FLOE_DATA:-$FLOE_TMP/data}}
  _floe_args=("$@")
  mkdir -p "$FLOE_DATA" "$FLOE_LOG_DIR"
  _floe_runs=$((_floe_runs + 1))
  FLOE_LOG="$FLOE_LOG_DIR/floe-$_floe_runs.log"
  "$FLOE_BIN" serve --data-dir "$FLOE_DATA" --listen 127.0.0.1:0 --http 127.0.0.1:0 "$@" \
    >"$FLOE_LOG" 2>&1 </dev/null &
  FLOE_PID=$!
  local deadline=$((${EPOCHREALTIME//[!0-9]/} + FLOE_READY_TIMEOUT * 1000000)) line rc
  while :; do
    line=$(grep -m1 '^floe ready ' "$FLOE_LOG" 2>/dev/null || true)
    [ -n "$line" ] && break
    if ! kill -0 "$FLOE_PID" 2>/dev/null; then
      rc=0
      { wait "$FLOE_PID"; } 2>/dev/null || rc=$?
      FLOE_PID=""
      not_ok floe_start "floe serve $(floe_why "$rc") before its ready line: $(_floe_tail "$FLOE_LOG" 5)"
      return 1
    fi
    if [ "${EPOCHREALTIME//[!0-9]/}" -ge "$deadline" ]; then
      kill -KILL "$FLOE_PID" 2>/dev/null
      { wait "$FLOE_PID"; } 2>/dev/null || true
      FLOE_PID=""
      not_ok floe_start "no ready line from floe serve within ${FLOE_READY_TIMEOUT}s: $(_floe_tail "$FLOE_LOG" 5)"
      return 1
    fi
    sleep 0.05
  done
  FLOE_KAFKA=$(sed -n 's/.* kafka=\([^ ]*\).*/\1/p' <<<"$line")
  FLOE_HTTP=$(sed -n 's/.* http=\([^ ]*\).*/\1/p' <<<"$line")
  if [ -z "$FLOE_KAFKA" ] || [ -z "$FLOE_HTTP" ]; then
    not_ok floe_start "bad ready line: $line"
    return 1
  fi
  export FLOE_PID FLOE_KAFKA FLOE_HTTP FLOE_DATA
}

# Wait for floe to exit, at most FLOE_STOP_TIMEOUT seconds; then SIGKILL.
_floe_wait() {
  local deadline=$((${EPOCHREALTIME//[!0-9]/} + FLOE_STOP_TIMEOUT * 1000000)) rc=0
  while kill -0 "$FLOE_PID" 2>/dev/null; do
    if [ "${EPOCHREALTIME//[!0-9]/}" -ge "$deadline" ]; then
      echo "floe: still running ${FLOE_STOP_TIMEOUT}s after the signal; SIGKILL" >&2
      kill -KILL "$FLOE_PID" 2>/dev/null
      break
    fi
    sleep 0.05
  done
  { wait "$FLOE_PID"; } 2>/dev/null || rc=$?
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
  kill -KILL "$FLOE_PID" 2>/dev/null
  _floe_wait || true
}

floe_restart() {
  floe_stop || true
  floe_start "$FLOE_DATA" "${_floe_args[@]}"
}

# Resident set size of floe in KiB (from /proc).
floe_rss_kb() {
  awk '/^VmRSS:/ {print $2}' "/proc/$FLOE_PID/status" 2>/dev/null
}

# A unique name for topics and group ids (never reuse a group id: kcat can
# hang on the rebalance).
uniq_name() { echo "$1-$$-$RANDOM$RANDOM"; }

# Commands for run_client: node with the interop tools resolvable (cwd
# tests/interop), and the Python that sees Debian's Kafka clients.
NODE=(env -C "$FLOE_ROOT/tests/interop" node)
PY=/usr/bin/python3
