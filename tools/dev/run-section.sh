# Sourced by the one-call device scripts (tools/dev/*-check.sh): run_section NAME LIMIT CMD...
# runs CMD under `timeout LIMIT` with its output in $OUT/NAME.log and appends one summary line
# (exit status, seconds, the log's gtest / sanitizer verdicts) to the `summary` array, which
# the script prints last.
summary=()
run_section() {  # name, limit, command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  summary+=("$(printf '%-10s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - t0))" \
    "$(grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$name.log" | tr '\n' ' ' | cut -c1-160)")")
}
