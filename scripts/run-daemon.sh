#!/usr/bin/env bash
# Runs reachabilityd in the foreground (Ctrl-C stops it).
#   BUS=private (default): starts a private system-like dbus-daemon with the project's policy
#     and prints the busctl line to query it. Works on machines without a system bus.
#   BUS=system: uses the real system bus; the policy dbus/org.reachabilityd.Reachability1.conf
#     must be installed and the daemon run as user reachabilityd (the .deb does both).
set -euo pipefail
daemon=${1:?usage: run-daemon.sh PATH-TO-reachabilityd [ARGS...]}
shift
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ "${BUS:-private}" = system ]; then
  exec "$daemon" "$@"
fi

runtime=$(mktemp -d /tmp/reachabilityd-run.XXXXXX)
cleanup() {
  [ -n "${bus_pid:-}" ] && kill "$bus_pid" 2>/dev/null
  rm -rf "$runtime"
}
trap cleanup EXIT INT TERM

includes=$(for conf in "$repo"/dbus/*.conf; do printf '  <include>%s</include>\\n' "$conf"; done)
sed -e "s|@SOCKET_PATH@|$runtime/system_bus_socket|" -e "s|@OWNER_USER@|$(id -un)|" \
    -e "s|@INCLUDES@|$includes|" "$repo/scripts/private-system-bus.conf.in" > "$runtime/bus.conf"

dbus-daemon --config-file="$runtime/bus.conf" --nofork --print-address=1 > "$runtime/address" 2> "$runtime/bus.log" &
bus_pid=$!
for _ in $(seq 100); do [ -s "$runtime/address" ] && break; sleep 0.05; done
[ -s "$runtime/address" ] || { echo "run-daemon: dbus-daemon did not start:" >&2; cat "$runtime/bus.log" >&2; exit 1; }
address="unix:path=$runtime/system_bus_socket"

cat >&2 <<MSG
reachabilityd is starting on a private system bus. In another shell:
  busctl --address=$address get-property org.reachabilityd.Reachability1 /org/reachabilityd/Reachability1 org.reachabilityd.Reachability1 Status
  busctl --address=$address introspect org.reachabilityd.Reachability1 /org/reachabilityd/Reachability1
Ctrl-C stops it.
MSG
DBUS_SYSTEM_BUS_ADDRESS=$address "$daemon" "$@" &
daemon_pid=$!
trap 'kill -TERM $daemon_pid 2>/dev/null; wait $daemon_pid; cleanup; exit 0' INT TERM
wait $daemon_pid
