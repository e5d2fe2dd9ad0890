"""Scale rows of real hosts.

veth         a Kubernetes-like node: N veth pairs created (the host end in a bridge, the pod end
             in a namespace of its own holding every pod end, both ends up, as a container runtime
             leaves them; IPv6 link-local addresses included), then deleted, with `ip -batch`:
             each watcher's CPU against the netlink floor's, the change signals the
             daemon sent (the goal is none: no probe's route changes) and Status right afterwards
             (a row of the churn table).
subscribers  N more subscribers on the bus (Benchmarks/bus-subscribers.c: N connections with the
             match rules of a client of the daemon, and of the C sd-bus floor), then N more Varlink
             Subscribe readers instead (Benchmarks/varlink-subscribers.c): the default route
             toggled as in latency, the CPU per change of the daemon, of the C sd-bus floor and of
             dbus-daemon with 1 subscriber of each kind, with 1 + N D-Bus subscribers and with
             1 + N Varlink readers.
"""
import subprocess
import time

from ..harness import Child, log
from ..measure import percentiles, process_cpu_ns
from .churn import burst
from .latency import cpu_ns, match, status_events


def veth(harness, pairs):
    """`pairs` veth pairs, the host end in a bridge and the pod end in the pods' namespace,
    added then deleted: a row of `churn`. The host sees what a node sees: its ends and the bridge."""
    pods = f"{harness.netns}-pods"
    subprocess.run(["ip", "netns", "add", pods], check=True)
    try:
        add = ["link add rbbr0 type bridge", "link set rbbr0 up"]
        for index in range(pairs):
            add += [f"link add rbv{index} type veth peer name rbp{index} netns {pods}", f"link set rbv{index} master rbbr0",
                    f"link set rbv{index} up"]
        pod_side = [f"link set rbp{index} up" for index in range(pairs)]
        delete = [f"link del rbv{index}" for index in range(pairs)] + ["link del rbbr0"]
        burst(harness, {"routes": pairs, "family": "veth", "label": f"{pairs:,} veth pairs, host ends in a bridge, pod ends in a namespace"},
              f"veth-{pairs}", add, delete, other_netns=(pods, pod_side))
    finally:
        subprocess.run(["ip", "netns", "delete", pods], check=False)


def subscribers(harness, count, toggles):
    """The default route toggled with the benchmark's one D-Bus subscriber and one Varlink reader,
    then with `count` more D-Bus subscribers, then with `count` more Varlink readers instead."""
    rows = []
    crowds = {"D-Bus": [harness.options.bus_subscribers, str(count)],
              "Varlink": [harness.options.varlink_subscribers, harness.varlink_socket, str(count)]}
    for kind, extra in ((None, 0), ("D-Bus", count), ("Varlink", count)):
        crowd = None
        if kind:
            crowd = Child(f"{kind} subscribers", crowds[kind], env=harness.env, log_path=f"{harness.work}/{kind}-subscribers.log")
            crowd.wait_for_line(lambda line: line == "ready", timeout=120)
        processes = {"reachabilityd": harness.daemon, "C sd-bus floor": harness.sdbus_floor, "dbus-daemon": harness.bus}
        try:
            marks = len(harness.subscriber.snapshot()), len(harness.varlink_subscriber.snapshot())
            before = cpu_ns(processes)
            writes = harness.toggle_default_route(toggles)
            # The bus, or the daemon, may still be delivering to the crowd: until it is done, its CPU moves.
            harness.settle(children=[harness.bus, harness.daemon] + ([crowd] if crowd else []))
            after = cpu_ns(processes)
            lines = harness.subscriber.snapshot()[marks[0]:]
            varlink = harness.varlink_subscriber.snapshot()[marks[1]:]
        finally:
            if crowd:
                crowd.stop()
        row = {"subscribers": 1 + extra, "kind": kind or "D-Bus", "cpu_ms_per_change": {name: (after[name] - before[name]) / 1e6 / toggles for name in after}}
        if kind == "D-Bus":
            # dbus-daemon takes long to let that many connections go after so much traffic: the
            # next workloads wait for it (a daemon's SIGTERM would wait on its ReleaseName).
            left, bus_cpu = time.monotonic(), process_cpu_ns(harness.bus.pid)
            harness.settle(children=[harness.bus])
            row["bus_after_the_crowd_left"] = {"s": round(time.monotonic() - left, 2), "cpu_s": round((process_cpu_ns(harness.bus.pid) - bus_cpu) / 1e9, 2)}
        for name, observed in (("reachabilityd", status_events(lines, "S")), ("C sd-bus floor", status_events(lines, "Q")),
                               ("reachabilityd Varlink", status_events(varlink, "V"))):
            latencies, missing = match(writes, observed)
            row[f"{name} latency ms"] = dict(percentiles(latencies), missing=missing)
        rows.append(row)
        log(f"subscribers {1 + extra} {row['kind']}: CPU ms per change " + ", ".join(f"{n} {v:.3f}" for n, v in row["cpu_ms_per_change"].items()))
    harness.results["subscribers"] = {"toggles": toggles, "rows": rows}
