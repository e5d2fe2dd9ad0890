#!/usr/bin/python3
"""reachabilityd benchmark: the daemon beside the raw netlink floor and GLib's GNetworkMonitor.

Run by Benchmarks/run.sh (`make bench` / `make bench-smoke`), which builds everything, creates a
network namespace with a veth pair rb0/rb1, and runs this script *inside* it
(`ip netns exec NS bench.py ...`). Every process this script starts therefore lives in that
namespace; every `ip` command still names it with `-n NS`, and the script refuses to run in the
host's namespace.

Workloads (see README "Benchmarks"):
  startup  time from spawn to READY=1 and RSS at READY, with the default table and with many routes
           (IPv4 /32s; and, under ipv6, IPv6 /64s)
  latency  default route deleted/added by a netlink write timestamped just before send(); the time
           until (a) the floor reader sees the RTM_*ROUTE, (b) GLib emits network-changed,
           (c) a separate D-Bus subscriber receives StatusChanged, (d) a GLib application using
           the GIO module (gio/, GIO_USE_NETWORK_MONITOR=reachabilityd) emits network-changed,
           (e) the subscriber receives the C sd-bus floor's StatusChanged (sdbus-floor.c: one
           RTM_GETROUTE per family, one signal, flush), (f) a plain GDBus subscriber, the same
           kind of process as (d) without the module, receives StatusChanged and
           PropertiesChanged (gdbus-subscriber.py: (d) − (f) is the module's own cost), (g) a
           Varlink Subscribe reader (varlink-subscriber.py) receives the reply whose status
           changed; CPU per change of each process; p50 per direction (route deleted, added)
  stages   the same toggles with the daemon's stage recorder on (REACHABILITYD_STAGE_TIMES):
           p50/p99 of each stage of one change, from the netlink write to the subscriber
  veth     a Kubernetes-like node: N veth pairs in a bridge created, then deleted (a churn row)
  subscribers  CPU per change of the daemon, the C sd-bus floor and dbus-daemon with 1 subscriber
           and with 1 + N (Benchmarks/bus-subscribers.c), then with N Varlink Subscribe readers
           instead (Benchmarks/varlink-subscribers.c)
  churn    N /32 routes added then deleted with `ip -n NS -batch`: CPU seconds and peak RSS of
           each watcher, change signals emitted, and whether each watcher still reacts afterwards
  ipv6     the same burst with IPv6 /64 routes (IPv6 is enabled on rb0 first), and start-up with
           many IPv6 routes present
  idle     RSS, private memory, context switches (wakeups) and CPU over a window
  connectivity  the opt-in active check against testbed/servers/connectivity-server.py in a router
           namespace (rb1 moves there): default route deleted/added N times with checks off,
           then on; route write → ConnectivityChanged(full) at the subscriber beside the check's
           own round trip (curl), CPU per cycle (on minus off), RSS/private memory growth
--workloads selects some of them (the watchers are started either way).
The code: the package benchmark/ beside this script (harness, measure, workloads/, report).
All timestamps are CLOCK_MONOTONIC in nanoseconds, which every process shares.
"""
import argparse
import json
import os
import shutil
import sys
import time

from benchmark.harness import Harness, log
from benchmark.measure import memory
from benchmark.report import chart, publish, table
from benchmark.workloads import churn, connectivity, explain, idle, latency, scale, stages, startup

WORKLOADS = ("startup", "latency", "churn", "ipv6", "idle", "connectivity", "explain", "stages", "veth", "subscribers")


def run(harness):
    """The workloads `harness.options` selects, in their order."""
    options = harness.options
    harness.results["parameters"] = {
        "mode": "smoke" if options.smoke else "full", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "kernel": os.uname().release, "cpus": os.cpu_count(), "load_average_at_start": os.getloadavg(),
        "daemon": options.daemon, "toggles": options.toggles, "routes": options.routes,
        "idle_seconds": options.idle_seconds, "startup_routes": options.startup_routes,
        "ipv6_routes": options.ipv6_routes, "ipv6_startup_routes": options.ipv6_startup_routes, "checks": options.checks,
        "veth_pairs": options.veth_pairs, "subscribers": options.subscribers,
        "workloads": sorted(options.workloads),
    }
    wanted = options.workloads
    harness.start_bus()
    harness.configure_link()
    if "startup" in wanted:
        startup.run(harness, "default table", options.startup_runs)

    harness.start_watchers()
    if "idle" in wanted:
        idle.run(harness, "after start", options.idle_seconds)
    if "latency" in wanted:
        latency.run(harness, options.toggles)
    if "ipv6" in wanted:
        # IPv6 on rb0 (no address: none is needed to route a prefix to the link);
        # 2001:4860:4860::8888 stays unroutable, so the status does not change.
        with open("/proc/sys/net/ipv6/conf/rb0/disable_ipv6", "w") as switch:
            switch.write("0")
        harness.settle()
        churn.run(harness, options.ipv6_routes, family=6)
    if "churn" in wanted:
        for count in options.routes:
            churn.run(harness, count)
    if "veth" in wanted:
        scale.veth(harness, options.veth_pairs)
    if "subscribers" in wanted:
        scale.subscribers(harness, options.subscribers, options.toggles)
    if "explain" in wanted:
        explain.run(harness, options.explain_pairs, options.explain_calls)
    if "idle" in wanted:
        idle.run(harness, "after all workloads", options.idle_seconds)
    harness.results["memory_after_workloads"] = {name: memory(c.pid) for name, c in harness.watchers().items() if c.alive()}

    harness.daemon.stop()
    harness.results["daemon_exit_status"] = harness.daemon.process.returncode
    for child in (harness.subscriber, harness.varlink_subscriber, harness.sdbus_floor, harness.module, harness.glib, harness.floor):
        child.stop()
    if "stages" in wanted:
        stages.run(harness, options.toggles)
    if "startup" in wanted:
        startup.run_with_routes(harness, options.startup_routes, 4, max(1, options.startup_runs // 2))
    if "ipv6" in wanted:
        # GLib needs most of a minute per start with 300k IPv6 routes: one run of it.
        startup.run_with_routes(harness, options.ipv6_startup_routes, 6, max(1, options.startup_runs // 4), glib_runs=1)
    if "connectivity" in wanted:
        connectivity.run(harness, options.checks)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--replot":
        # Benchmarks/bench.py --replot out/bench/results.json: table and chart again, from saved results.
        with open(sys.argv[2]) as saved:
            results = json.load(saved)
        print(table(results))
        chart(results, results["latency_samples_ms"], os.path.join(os.path.dirname(sys.argv[2]), "chart.png"))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--netns", required=True, help="the namespace this script runs in (created by run.sh)")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--daemon", required=True, help="the release reachabilityd binary")
    parser.add_argument("--floor", required=True, help="the netlink-floor binary")
    parser.add_argument("--sdbus-floor", required=True, help="the sdbus-floor binary (Benchmarks/sdbus-floor.c)")
    parser.add_argument("--bus-subscribers", required=True, help="the bus-subscribers binary (Benchmarks/bus-subscribers.c)")
    parser.add_argument("--varlink-subscribers", required=True, help="the varlink-subscribers binary (Benchmarks/varlink-subscribers.c)")
    parser.add_argument("--gio-modules", required=True, help="the directory holding the built libgioreachabilityd.so")
    parser.add_argument("--out", required=True, help="directory for results.json, table.md, chart.png")
    parser.add_argument("--smoke", action="store_true", help="small N and short windows (CI)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help=f"comma-separated subset of {','.join(WORKLOADS)} (default: all)")
    parser.add_argument("--toggles", type=int, default=0, help="default-route toggles of the latency workload "
                        "(default: 60 with --smoke, else 1000)")
    parser.add_argument("--checks", type=int, default=0, help="route cycles of the connectivity workload "
                        "(default: 20 with --smoke, else 1000)")
    options = parser.parse_args()
    options.workloads = set(options.workloads.split(","))
    if not options.workloads <= set(WORKLOADS):
        parser.error(f"unknown workload(s): {', '.join(sorted(options.workloads - set(WORKLOADS)))}")
    options.toggles = options.toggles or (60 if options.smoke else 1000)
    options.routes = [1000, 10000] if options.smoke else [1000, 10000, 100000, 1000000]
    options.idle_seconds = 3 if options.smoke else 60
    options.startup_runs = 4 if options.smoke else 10
    options.startup_routes = 10000 if options.smoke else 1000000
    options.ipv6_routes = 1000 if options.smoke else 10000
    options.ipv6_startup_routes = 5000 if options.smoke else 300000
    options.checks = options.checks or (20 if options.smoke else 1000)
    options.explain_pairs, options.explain_calls = (100, 10) if options.smoke else (1000, 100)
    options.veth_pairs = 50 if options.smoke else 1000
    options.subscribers = 50 if options.smoke else 1000

    own, wanted = os.stat("/proc/self/ns/net"), os.stat(f"/run/netns/{options.netns}")
    if (own.st_dev, own.st_ino) != (wanted.st_dev, wanted.st_ino):
        sys.exit(f"bench.py must run inside namespace {options.netns} (use Benchmarks/run.sh)")
    os.makedirs(options.out, exist_ok=True)
    harness = Harness(options)
    try:
        run(harness)
    except BaseException:
        log(f"failed; logs kept in {harness.work}")
        raise
    finally:
        harness.stop()
    with open(os.path.join(options.out, "results.json"), "w") as out:
        json.dump(dict(harness.results, latency_samples_ms=harness.latency_samples), out, indent=1)
    text = table(harness.results)
    with open(os.path.join(options.out, "table.md"), "w") as out:
        out.write(text + "\n")
    print(text)
    chart(harness.results, harness.latency_samples, os.path.join(options.out, "chart.png"))
    log(f"wrote {options.out}/results.json, table.md, chart.png")
    if not options.smoke and options.workloads == set(WORKLOADS) and options.toggles == 1000:
        publish(text, harness.latency_samples, harness.results, options.repo)
    failures = [row["routes"] for row in harness.results["churn"] if not row["status_right"] or not row["still_reacting"].get("reachabilityd")]
    if failures or harness.results.get("daemon_exit_status") != 0:
        sys.exit(f"reachabilityd was wrong or silent after churn of {failures} routes, or exited "
                 f"{harness.results.get('daemon_exit_status')}; logs and batch files kept in {harness.work}")
    shutil.rmtree(harness.work, ignore_errors=True)


if __name__ == "__main__":
    main()
