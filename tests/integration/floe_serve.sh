# Sourced by integration tests: start `floe serve` on free ports and stop it.
#   floe_start DATA_DIR [extra args...]  -> sets FLOE_PID, KAFKA, HTTP
#   floe_stop [SIGNAL]                   -> stops it (default TERM), waits
# Needs FLOE_BIN.  The server's stderr goes to $DATA_DIR.log.
floe_start() {
  local dir=$1; shift
  local out="$dir.ready"
  rm -f "$out"
  "$FLOE_BIN" serve --data-dir "$dir" --listen 127.0.0.1:0 --http 127.0.0.1:0 "$@" \
    >"$out" 2>>"$dir.log" &
  FLOE_PID=$!
  local i
  for i in $(seq 1 200); do
    if grep -q '^floe ready ' "$out" 2>/dev/null; then break; fi
    if ! kill -0 "$FLOE_PID" 2>/dev/null; then echo "floe serve exited early:"; tail -5 "$dir.log"; return 1; fi
    sleep 0.05
  done
  KAFKA=$(sed -n 's/^floe ready kafka=\([^ ]*\) .*/\1/p' "$out")
  HTTP=$(sed -n 's/^floe ready .* http=\([^ ]*\) .*/\1/p' "$out")
  [ -n "$KAFKA" ] || { echo "no ready line"; return 1; }
}

floe_stop() {
  local sig=${1:-TERM}
  [ -n "${FLOE_PID:-}" ] || return 0
  kill -"$sig" "$FLOE_PID" 2>/dev/null
  local rc=0
  { wait "$FLOE_PID"; } 2>/dev/null || rc=$?
  FLOE_PID=
  return $rc
}
