"""Scale rows of real hosts.

veth         a Kubernetes-like node: N veth pairs created (the host end in a bridge, the pod end
             in a namespace of its own holding every pod end, both ends up, as a container runtime
             leaves them; IPv6 link-local addresses included), then deleted, with `ip -batch`:
             each watcher's CPU against the netlink floor's, the change signals the
             daemon sent (the goal is none: no probe's route changes) and Status right afterwards
             (a row of the churn table).
subscribers  N more subscribers on the bus (Benchmarks/bus-subscribers.c: N connections with the
             match rules of a client of the daemon, and of the C sd-bus floor): the default route
             toggled as in latency, the CPU per change of the daemon, of the C sd-bus floor and of
             dbus-daemon with 1 subscriber and with 1 + N.
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
    """The default route toggled with the benchmark's one subscriber, then with `count` more."""
    rows = []
    for extra in (0, count):
        crowd = None
        if extra:
            crowd = Child("bus-subscribers", [harness.options.bus_subscribers, str(extra)], env=harness.env,
                          log_path=f"{harness.work}/bus-subscribers.log")
            crowd.wait_for_line(lambda line: line == "ready", timeout=120)
        processes = {"reachabilityd": harness.daemon, "C sd-bus floor": harness.sdbus_floor, "dbus-daemon": harness.bus}
        try:
            mark = len(harness.subscriber.snapshot())
            before = cpu_ns(processes)
            writes = harness.toggle_default_route(toggles)
            # The bus may still be delivering to the crowd: until it is done, its CPU moves.
            harness.settle(children=[harness.bus] + ([crowd] if crowd else []))
            after = cpu_ns(processes)
            lines = harness.subscriber.snapshot()[mark:]
        finally:
            if crowd:
                crowd.stop()
        row = {"subscribers": 1 + extra, "cpu_ms_per_change": {name: (after[name] - before[name]) / 1e6 / toggles for name in after}}
        if crowd:
            # dbus-daemon takes long to let that many connections go after so much traffic: the
            # next workloads wait for it (a daemon's SIGTERM would wait on its ReleaseName).
            left, bus_cpu = time.monotonic(), process_cpu_ns(harness.bus.pid)
            harness.settle(children=[harness.bus])
            row["bus_after_the_crowd_left"] = {"s": round(time.monotonic() - left, 2), "cpu_s": round((process_cpu_ns(harness.bus.pid) - bus_cpu) / 1e9, 2)}
        for name, prefix in (("reachabilityd", "S"), ("C sd-bus floor", "Q")):
            latencies, missing = match(writes, status_events(lines, prefix))
            row[f"{name} latency ms"] = dict(percentiles(latencies), missing=missing)
        rows.append(row)
        log(f"subscribers {1 + extra}: CPU ms per change " + ", ".join(f"{n} {v:.3f}" for n, v in row["cpu_ms_per_change"].items()))
    harness.results["subscribers"] = {"toggles": toggles, "rows": rows}
