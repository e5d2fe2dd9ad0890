#!/usr/bin/env bash
# Runs reachabilityd in the foreground (Ctrl-C stops it).
#   BUS=private (default): starts a private system-like dbus-daemon with the project's policy
#     and, once the daemon answers on it, prints the busctl and reachabilityctl lines to try in
#     another shell. Works on machines without a system bus. Ctrl-C stops the daemon (SIGTERM,
#     as systemd would), then the bus, removes the temporary directory and exits with the
#     daemon's exit status.
#   BUS=system: uses the real system bus; the policy dbus/org.reachabilityd.Reachability1.conf
#     must be installed and the daemon run as user reachabilityd (the .deb does both).
#   VARLINK=no: no $RUNTIME_DIRECTORY, so no Varlink socket (the bus only; for comparing memory).
set -euo pipefail
daemon=${1:?usage: run-daemon.sh PATH-TO-reachabilityd [ARGS...]}
shift
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ "${BUS:-private}" = system ]; then
  exec "$daemon" "$@"
fi

runtime=$(mktemp -d /tmp/reachabilityd-run.XXXXXX)
cleanup() {
  if [ -n "${bus_pid:-}" ]; then
    kill "$bus_pid" 2>/dev/null || true
    wait "$bus_pid" 2>/dev/null || true
    bus_pid=
  fi
  rm -rf "$runtime"
}
trap cleanup EXIT

includes=$(for conf in "$repo"/dbus/*.conf; do printf '  <include>%s</include>\\n' "$conf"; done)
sed -e "s|@SOCKET_PATH@|$runtime/system_bus_socket|" -e "s|@OWNER_USER@|$(id -un)|" \
    -e "s|@INCLUDES@|$includes|" "$repo/scripts/private-system-bus.conf.in" > "$runtime/bus.conf"

dbus-daemon --config-file="$runtime/bus.conf" --nofork --print-address=1 > "$runtime/address" 2> "$runtime/bus.log" &
bus_pid=$!
for _ in $(seq 100); do [ -s "$runtime/address" ] && break; sleep 0.05; done
[ -s "$runtime/address" ] || { echo "run-daemon: dbus-daemon did not start:" >&2; cat "$runtime/bus.log" >&2; exit 1; }
address="unix:path=$runtime/system_bus_socket"

# A job started with & in a script ignores SIGINT, so Ctrl-C reaches the daemon as the SIGTERM
# this trap sends; the daemon's exit status becomes the script's.
# RUNTIME_DIRECTORY as systemd's RuntimeDirectory= gives it: the Varlink socket goes there.
if [ "${VARLINK:-yes}" = no ]; then
  DBUS_SYSTEM_BUS_ADDRESS=$address "$daemon" "$@" &
else
  RUNTIME_DIRECTORY=$runtime DBUS_SYSTEM_BUS_ADDRESS=$address "$daemon" "$@" &
fi
daemon_pid=$!
stop() {
  trap '' INT TERM
  kill -TERM "$daemon_pid" 2>/dev/null || true
  status=0
  wait "$daemon_pid" || status=$?
  echo "run-daemon: reachabilityd exited with status $status" >&2
  cleanup
  exit "$status"
}
trap stop INT TERM

status_query=(busctl "--address=$address" get-property org.reachabilityd.Reachability1
  /org/reachabilityd/Reachability1 org.reachabilityd.Reachability1 Status)
for _ in $(seq 300); do
  kill -0 "$daemon_pid" 2>/dev/null || break
  "${status_query[@]}" >/dev/null 2>&1 && break
  sleep 0.1
done
if kill -0 "$daemon_pid" 2>/dev/null; then
  ctl=$(dirname "$daemon")/reachabilityctl
  {
    echo "reachabilityd is serving on a private system bus. In another shell:"
    echo "  ${status_query[*]}"
    echo "  busctl --address=$address introspect org.reachabilityd.Reachability1 /org/reachabilityd/Reachability1"
    if [ -x "$ctl" ]; then
      echo "  DBUS_SYSTEM_BUS_ADDRESS=$address $ctl status"
      echo "  DBUS_SYSTEM_BUS_ADDRESS=$address $ctl monitor"
      echo "  DBUS_SYSTEM_BUS_ADDRESS=$address $ctl explain"
    fi
    varlink_socket=$runtime/org.reachabilityd.Reachability
    if command -v varlinkctl >/dev/null; then
      echo "  varlinkctl call $varlink_socket org.reachabilityd.Reachability.GetState"
    else
      # (No varlinkctl before systemd 255: the protocol by hand, a call and a NUL.)
      echo "  python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b\"{\\\"method\\\": \\\"org.reachabilityd.Reachability.GetState\\\"}\\0\"); s.shutdown(socket.SHUT_WR); print(b\"\".join(iter(lambda: s.recv(65536), b\"\")).rstrip(b\"\\0\").decode())' $varlink_socket"
    fi
    echo "Ctrl-C stops it."
  } >&2
fi
status=0
wait "$daemon_pid" || status=$?
# Ctrl-C interrupts this wait and runs stop(), which exits; here the daemon ended by itself.
echo "run-daemon: reachabilityd exited with status $status" >&2
exit "$status"
