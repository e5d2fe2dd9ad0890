#!/usr/bin/env bash
# The one benchmark command (docs/benchmarks.md):
#   Benchmarks/run.sh          full run  (make bench): 1,000 toggles; 1k..1M routes; 1,000 veth pairs and subscribers; 60 s idle windows
#   Benchmarks/run.sh --smoke  smoke run (make bench-smoke, CI): 60 toggles; 1k and 10k routes; 50 veth pairs and subscribers; 3 s windows
#   Benchmarks/run.sh [--smoke] --workloads latency,ipv6   only some workloads (startup, latency,
#                              churn, ipv6, idle, connectivity, explain, stages, veth, subscribers;
#                              see bench.py)
# Installs what it needs (apt), builds the release daemon (static stdlib, scratch path
# .build-bench), the C floors (netlink-floor.c, sdbus-floor.c), bus-subscribers.c and
# varlink-subscribers.c, creates a namespace rbench-<pid> with a veth pair rb0/rb1, runs
# Benchmarks/bench.py inside it, and deletes the namespace on exit. Never touches the host's
# interfaces or routes. Needs root.
# Results: out/bench/{table.md,results.json,chart.png}.
# REACHABILITYD_BENCH_BINARY=PATH benchmarks another daemon binary instead of building one.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
out=${BENCH_OUT:-$repo/out/bench}
swift=${SWIFT:-$(command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)}

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (network namespaces, SO_RCVBUFFORCE)" >&2; exit 1; }

# Dependencies: the project's own, plus the peers' and the chart's (Debian packages only).
scripts/install-deps.sh
scripts/install-deps.sh python3 python3-gi gir1.2-glib-2.0 python3-dbus python3-matplotlib gcc libc6-dev curl openssl

# Build.
if [ -n "${REACHABILITYD_BENCH_BINARY:-}" ]; then
  daemon=$REACHABILITYD_BENCH_BINARY
else
  "$swift" build -c release --static-swift-stdlib --scratch-path .build-bench --product reachabilityd
  daemon="$("$swift" build -c release --static-swift-stdlib --scratch-path .build-bench --show-bin-path)/reachabilityd"
fi
# Written back now: the freshly linked binary's pages would otherwise count as dirty in smaps.
sync "$daemon"
mkdir -p .build-bench/bench "$out"
cc -O2 -Wall -o .build-bench/bench/netlink-floor Benchmarks/netlink-floor.c
for program in sdbus-floor bus-subscribers; do
  cc -O2 -Wall -o ".build-bench/bench/$program" "Benchmarks/$program.c" $(pkg-config --cflags --libs libsystemd)
done
cc -O2 -Wall -o .build-bench/bench/varlink-subscribers Benchmarks/varlink-subscribers.c
make -s -C gio BUILDDIR="$repo/.build-bench/gio"   # the GIO module, for "GLib application through the module"

# The namespace: a veth pair, IPv6 off and no link-local address generation so that only the
# benchmark's own changes produce events.
netns=rbench-$$
cleanup() {
  # Whatever bench.py started and left behind lives in the namespace: end it, then delete it.
  for pid in $(ip netns pids "$netns" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  sleep 0.2
  ip netns delete "$netns" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
ip netns add "$netns"
ip -n "$netns" link add rb0 type veth peer name rb1
for link in rb0 rb1; do
  ip -n "$netns" link set "$link" addrgenmode none
  ip netns exec "$netns" sysctl -qw "net.ipv6.conf.$link.disable_ipv6=1"
done
ip -n "$netns" link set lo up
# The subscribers row opens 1,000 bus connections, then 1,000 Varlink ones: dbus-daemon,
# bus-subscribers, the daemon and varlink-subscribers need more than the usual soft limit of
# 1,024 descriptors.
ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true

ip netns exec "$netns" /usr/bin/python3 Benchmarks/bench.py "$@" --netns "$netns" --repo "$repo" \
  --daemon "$daemon" --floor "$repo/.build-bench/bench/netlink-floor" --sdbus-floor "$repo/.build-bench/bench/sdbus-floor" \
  --bus-subscribers "$repo/.build-bench/bench/bus-subscribers" \
  --varlink-subscribers "$repo/.build-bench/bench/varlink-subscribers" --gio-modules "$repo/.build-bench/gio" --out "$out"
