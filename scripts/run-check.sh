#!/usr/bin/env bash
# make run-check: runs README's first command, `make run`, the way a newcomer does, and fails
# loudly when it does not work. `make run` starts in a process group of its own, as in a
# terminal; once it prints its lines, each printed query is run as printed (busctl Status,
# reachabilityctl status, a moment of reachabilityctl monitor, the Varlink GetState line) and must
# give a valid status.
# Then SIGINT goes to the whole group (Ctrl-C): make and the daemon must be gone within 5 s,
# the daemon must have exited 0, and no process of the group, no dbus-daemon and no temporary
# directory may be left behind. Prints how long the build took and how long the stop took.
# And make run installs only what building and running need: what its install step would install
# on a machine that has none of them (INSTALL_DEPS_REPORT, scripts/install-deps.sh) may include
# none of the tests' tools. And every thread of the daemon runs at make run's nice value: none
# asked for a lower one (libdispatch's manager thread did, which a user without CAP_SYS_NICE or a
# service in a container is refused, and libdispatch logs it at every start).
#   MAKE=make scripts/run-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
make_command=${MAKE:-make}
build_limit=${RUN_CHECK_BUILD_SECONDS:-1800}

log=$(mktemp /tmp/reachabilityd-run-check.XXXXXX)
dependencies=$(mktemp /tmp/reachabilityd-run-check-deps.XXXXXX)
group=
fail() {
  echo "run-check: FAILED: $*" >&2
  echo "run-check: make run printed:" >&2
  sed 's/^/  | /' "$log" >&2
  [ -n "$group" ] && kill -KILL -- "-$group" 2>/dev/null
  rm -f "$log" "$dependencies"
  exit 1
}

# Not a job-control shell, so the background job is no group leader and setsid runs make in
# place: its pid is the new group's id.
started=$(date +%s)
INSTALL_DEPS_REPORT=$dependencies setsid "$make_command" --no-print-directory run < /dev/null > "$log" 2>&1 &
group=$!

line_printed() { grep -m1 -E "^  $1" "$log" | sed 's/^  //'; }
status_line=
for _ in $(seq "$build_limit"); do
  status_line=$(line_printed 'busctl --address=.* Status$') || true
  [ -n "$status_line" ] && break
  kill -0 "$group" 2>/dev/null || fail "make run exited before it served Status"
  sleep 1
done
[ -n "$status_line" ] || fail "make run printed no busctl line within $build_limit s"
echo "run-check: make run served after $(($(date +%s) - started)) s (dependencies, build, start)" >&2

[ -s "$dependencies" ] || fail "make run's install step reported no package (scripts/install-deps.sh, INSTALL_DEPS_REPORT)"
test_tools=$(scripts/install-deps.sh --list-test-tools)
installed_tools=$(sort -u "$dependencies" | grep -Fx -f <(echo "$test_tools") | tr '\n' ' ') || true
[ -z "$installed_tools" ] || fail "on a machine without them, make run would install the tests' tools: $installed_tools"
echo "run-check: on a machine with none of them, make run would install $(sort -u "$dependencies" | wc -l) packages, none of the tests' $(wc -l <<<"$test_tools") tools" >&2

daemon_pid=$(pgrep -g "$group" -x reachabilityd) || fail "no reachabilityd process in make run's process group"
own_nice=$(ps -o ni= -p $$ | tr -d ' ')
thread_nices=$(ps -L -o ni= -p "$daemon_pid" | tr -d ' ' | sort -un | paste -sd ' ')
[ "$thread_nices" = "$own_nice" ] ||
  fail "the daemon's threads run at nice $thread_nices, make run at $own_nice: a thread asked for another (libdispatch's QoS)"
echo "run-check: the daemon's $(ps -L -o ni= -p "$daemon_pid" | wc -l) threads run at make run's nice value, $own_nice" >&2

valid_status='"(not-reachable|reachable-via-(wwan|wifi|ethernet|other))"'
answer=$(bash -c "$status_line" 2>&1) || fail "the printed busctl line failed: $answer"
[[ $answer =~ ^s\ $valid_status$ ]] || fail "the printed busctl line answered '$answer', not a status"
echo "run-check: $status_line -> $answer" >&2

ctl_status_line=$(line_printed 'DBUS_SYSTEM_BUS_ADDRESS=.*reachabilityctl status$') ||
  fail "make run printed no reachabilityctl status line"
answer=$(bash -c "$ctl_status_line" 2>&1) || fail "the printed reachabilityctl status line failed: $answer"
grep -qE '^ *Status: +(not-reachable|reachable-via-)' <<<"$answer" ||
  fail "the printed reachabilityctl status line answered: $answer"

monitor_line=$(line_printed 'DBUS_SYSTEM_BUS_ADDRESS=.*reachabilityctl monitor$') ||
  fail "make run printed no reachabilityctl monitor line"
answer=$(timeout --signal=INT 2 bash -c "$monitor_line" 2>&1) || true
grep -qE '(not-reachable|reachable-via-)' <<<"$answer" ||
  fail "the printed reachabilityctl monitor line printed no status in 2 s: $answer"

varlink_line=$(line_printed '(varlinkctl call|python3 -c) .*org\.reachabilityd\.Reachability') ||
  fail "make run printed no Varlink line"
answer=$(timeout 10 bash -c "$varlink_line" 2>&1) || fail "the printed Varlink line failed: $answer"
grep -qE "\"status\": ?$valid_status" <<<"$answer" || fail "the printed Varlink line answered: $answer"
echo "run-check: the printed Varlink line answered a status" >&2

runtime=$(sed -E 's|.*--address=unix:path=(/tmp/reachabilityd-run\.[^/]+)/.*|\1|' <<<"$status_line")
[ -d "$runtime" ] || fail "the printed address names no directory under /tmp: $status_line"

stop_started=$(date +%s%N)
kill -INT -- "-$group"
for _ in $(seq 50); do
  kill -0 "$group" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$group" 2>/dev/null && fail "make run still running 5 s after Ctrl-C"
wait "$group" 2>/dev/null || true   # make itself dies of the SIGINT, as in a terminal
stopped_ms=$((($(date +%s%N) - stop_started) / 1000000))

grep -q '^run-daemon: reachabilityd exited with status 0$' "$log" ||
  fail "the daemon did not exit 0 on Ctrl-C"
leftover=$(pgrep -g "$group" -a || true)
[ -z "$leftover" ] || fail "processes left behind after Ctrl-C: $leftover"
leftover=$(pgrep -f -a "dbus-daemon --config-file=$runtime/" || true)
[ -z "$leftover" ] || fail "dbus-daemon left behind after Ctrl-C: $leftover"
[ ! -e "$runtime" ] || fail "temporary directory left behind after Ctrl-C: $runtime"

echo "run-check: passed (Ctrl-C stopped everything in $stopped_ms ms; the daemon exited 0)" >&2
rm -f "$log" "$dependencies"
