"""churn (and ipv6): N /32 routes (or IPv6 /64s) added then deleted with `ip -n NS -batch`: CPU
seconds and peak RSS of each watcher, change signals emitted, and whether each watcher still
reacts afterwards."""
import json
import subprocess
import time

from ..harness import REACHABLE, log, route_prefixes
from ..measure import cpu_seconds, memory, process_cpu_ns, reset_peak_rss, thread_cpu_ns, wakeups_between


def run(harness, count, family=4):
    """One burst of `count` IPv`family` routes added, then deleted, recorded as a row of `churn`."""
    prefixes = list(route_prefixes(count, family))
    burst(harness, {"routes": count, "family": family}, f"v{family}-{count}",
          [f"route add {prefix} dev rb0" for prefix in prefixes], [f"route del {prefix} dev rb0" for prefix in prefixes])


def burst(harness, row, tag, add_commands, delete_commands, other_netns=None):
    """`ip -batch` runs `add_commands`, then `delete_commands` (batch files named after `tag`); each watcher's CPU and peak RSS
    per phase, the daemon's change signals and Status afterwards, and whether every watcher
    still reacts, are added to `row`, which becomes a row of `churn`. `other_netns`, when given,
    is (namespace, commands) run with `ip -n namespace -batch` in the add phase, after `add_commands`."""
    add_path, delete_path = f"{harness.work}/add-{tag}.batch", f"{harness.work}/del-{tag}.batch"
    other_path = f"{harness.work}/add-{tag}-other.batch"
    for path, commands in ((add_path, add_commands), (delete_path, delete_commands), (other_path, other_netns[1] if other_netns else [])):
        with open(path, "w") as out:
            out.write("".join(command + "\n" for command in commands))
    # A fresh GLib monitor for every burst: one that an earlier burst left deaf would read
    # nothing and show 0 CPU at every N.
    harness.glib.stop()
    harness.glib, _, _ = harness.spawn_glib()
    signals_before = len([l for l in harness.subscriber.snapshot() if l[:2] in ("S ", "P ")])
    floor_before = harness.floor_counts()
    row["watchers"] = {}
    phases = {}
    for phase, path in (("add", add_path), ("delete", delete_path)):
        before = {name: cpu_seconds(c.pid) for name, c in harness.watchers().items() if c.alive()}
        before_threads = {name: thread_cpu_ns(c.pid) for name, c in harness.watchers().items() if c.alive()}
        before_process = {name: process_cpu_ns(c.pid) for name, c in harness.watchers().items() if c.alive()}
        for child in harness.watchers().values():
            if child.alive():
                reset_peak_rss(child.pid)
        started = time.monotonic()
        subprocess.run(["ip", "-n", harness.netns, "-batch", path], check=True, capture_output=True)
        if other_netns and phase == "add":
            subprocess.run(["ip", "-n", other_netns[0], "-batch", other_path], check=True, capture_output=True)
        phases[phase] = time.monotonic() - started
        harness.settle()
        for name, child in harness.watchers().items():
            figures = row["watchers"].setdefault(name, {})
            if not child.alive() or name not in before:
                figures["dead"] = True
                continue
            figures[f"{phase}_cpu_s"] = round(cpu_seconds(child.pid) - before[name], 3)
            figures[f"{phase}_thread_cpu_ms"] = round(wakeups_between(before_threads[name], thread_cpu_ns(child.pid)) / 1e6, 2)
            figures[f"{phase}_process_cpu_ms"] = round((process_cpu_ns(child.pid) - before_process[name]) / 1e6, 2)
            figures["peak_rss_kib"] = max(figures.get("peak_rss_kib", 0), memory(child.pid)["hwm_kib"])
    floor_after = harness.floor_counts()
    row["ip_batch_s"] = {phase: round(seconds, 2) for phase, seconds in phases.items()}
    row["floor_messages"] = floor_after["messages"] - floor_before["messages"]
    row["floor_overruns"] = floor_after["overruns"] - floor_before["overruns"]
    row["floor_most_messages_per_datagram"] = floor_after["most_per_datagram"]
    # The daemon's signals may still be on their way (a PropertiesChanged listing a thousand
    # links takes the Python subscriber a while): counted once the bus and its clients are idle.
    harness.settle(children=[harness.bus, harness.subscriber, harness.module])
    row["daemon_signals"] = len([l for l in harness.subscriber.snapshot() if l[:2] in ("S ", "P ")]) - signals_before
    row["status_after"] = harness.busctl_status()
    row["status_right"] = row["status_after"] == REACHABLE
    row["still_reacting"] = still_reacting(harness)
    harness.results["churn"].append(row)
    log(f"churn {tag}: " + json.dumps(row))


def still_reacting(harness):
    """Deletes and re-adds the default route: which watchers notice within 2 s?"""
    marks = {name: len(child.snapshot()) for name, child in (("reachabilityd", harness.subscriber), ("netlink floor (C)", harness.floor), ("GLib GNetworkMonitor", harness.glib))}
    harness.writer.delete()
    time.sleep(0.3)
    harness.writer.add()
    deadline = time.monotonic() + 2
    reacting = {}
    while time.monotonic() < deadline:
        reacting = {
            "reachabilityd": any(l.startswith(f"S ") and l.endswith(REACHABLE) for l in harness.subscriber.snapshot()[marks["reachabilityd"]:]),
            "netlink floor (C)": any(l.endswith(" new") for l in harness.floor.snapshot()[marks["netlink floor (C)"]:]),
            "GLib GNetworkMonitor": any(l[0].isdigit() for l in harness.glib.snapshot()[marks["GLib GNetworkMonitor"]:]),
        }
        if all(reacting.values()):
            break
        time.sleep(0.05)
    return reacting
