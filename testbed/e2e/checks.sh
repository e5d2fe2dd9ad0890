# shellcheck shell=bash
# The e2e's checks library: logging, pass/fail counting, waiting, and the helpers the checks use.
# Sourced by run.sh, in order; see run.sh for the variables it sets.

log() { printf 'e2e %s/%s [%3ds] %s\n' "$suite" "$bus_implementation" "$(($(date +%s) - started))" "$*"; }
pass() { passed=$((passed + 1)); log "PASS $1"; }
failures=()   # the failed checks' lines, said again last (CI shows an output's tail)
fail() { local line; line=$(log "FAIL $1${2:+: $2}"); echo "$line"; failed=$((failed + 1)); failures+=("$line"); }
finishing=
finish() {
    finishing=1
    if [ "$failed" -gt 0 ] && [ -n "$leader" ]; then
        log "the container's journal for reachabilityd and dbus:"
        in_container journalctl --no-pager -o short-monotonic 2>&1 | grep -E "Activat|activat" | tail -20
        in_container journalctl --no-pager -o short-monotonic 2>&1 | grep -E "reachabilityd|dbus" | tail -40
    fi
    log "took $(($(date +%s) - started)) s"
    [ "$failed" -gt 0 ] && printf '%s\n' "${failures[@]}"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
    exit
}
# A step the rest depends on: on failure, count it and stop.
require() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; finish; fi; }
# Polls "$@" until it succeeds, for up to $timeout seconds.
eventually() {
    local timeout=$1; shift
    local deadline=$((SECONDS + timeout))
    until "$@" >/dev/null 2>&1; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.2; done
}


# --- Helpers for the checks ------------------------------------------------------------------
status() { "$@" busctl get-property "$bus_name" "$object" "$bus_name" Status 2>&1; }
main_pid() { in_container systemctl show -p MainPID --value reachabilityd.service; }
is_active() { [ "$(in_container systemctl is-active reachabilityd.service)" = active ]; }
answers() { status in_container | grep -q '^s "'; }
# Active again under a main PID other than $1.
replaced() { local pid; pid=$(main_pid); [ "$pid" != "$1" ] && [ "$pid" != 0 ] && is_active; }
check() {
    local name=$1; shift
    local output
    if output=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(tail -5 <<<"$output" | tr '\n' ' ')"; fi
}
expect_eq() { [ "$1" = "$2" ] || { echo "expected '$2', got '$1'"; return 1; }; }
status_is() { [ "$(status in_container)" = "s \"$1\"" ]; }
