#!/usr/bin/env bash
# Runs make targets at the same time, each with its output in its own log under out/side-by-side/,
# and prints each log whole once all have ended: the ones that passed first, the failed ones last
# (so that the tail of the output, all CI keeps, is a failure's own lines), then a line per
# target. Exits 1 when any failed. make test runs the e2e matrix and the soak so: the e2e mostly
# waits on containers booting and idling, and a soak beside it is one more loaded run.
#   MAKE=make scripts/side-by-side.sh TARGET[=VARIABLES...] ...    (e.g. "soak SOAK_SECONDS=300")
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: $0 'TARGET [VARIABLE=VALUE ...]' ..." >&2; exit 2; }
make=${MAKE:-make}
logs=out/side-by-side
mkdir -p "$logs"

declare -A pid started ended status
for job in "$@"; do
    name=${job%% *}
    echo "side-by-side: $job, its output in $logs/$name.log"
    # shellcheck disable=SC2086 # a job is a target and its variables, split as make takes them
    $make $job > "$logs/$name.log" 2>&1 &
    pid[$name]=$!
    started[$name]=$SECONDS
done

# Each one's end is noticed within a second (bash's wait -n reported one job's end twice).
running=$#
while [ "$running" -gt 0 ]; do
    sleep 1
    for name in "${!pid[@]}"; do
        [ -n "${status[$name]:-}" ] && continue
        kill -0 "${pid[$name]}" 2> /dev/null && continue
        wait "${pid[$name]}"
        status[$name]=$?
        ended[$name]=$SECONDS
        running=$((running - 1))
        echo "side-by-side: $name ended after $((ended[$name] - started[$name])) s ($([ "${status[$name]}" -eq 0 ] && echo passed || echo "failed, exit ${status[$name]}"))"
    done
done

failed=0
for pass in passed failed; do
    for name in "${!pid[@]}"; do
        [ "$pass" = passed ] && [ "${status[$name]}" -ne 0 ] && continue
        [ "$pass" = failed ] && [ "${status[$name]}" -eq 0 ] && continue
        echo "===== $name ($pass) ====="
        cat "$logs/$name.log"
    done
done
for name in "${!pid[@]}"; do
    took=$((ended[$name] - started[$name]))
    if [ "${status[$name]}" -eq 0 ]; then
        echo "side-by-side: $name passed in $took s"
    else
        failed=1
        echo "side-by-side: $name FAILED (exit ${status[$name]}) after $took s; its log is printed last above"
    fi
done
exit $failed
