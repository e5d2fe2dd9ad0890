"""latency: the default route deleted/added by a netlink write timestamped just before send(); the
time until (a) the floor reader sees the RTM_*ROUTE, (b) GLib emits network-changed, (c) a
separate D-Bus subscriber receives StatusChanged, (d) a GLib application using the GIO module
(gio/, GIO_USE_NETWORK_MONITOR=reachabilityd) emits network-changed; and the D-Bus hop alone."""
import random
import subprocess
import time

from ..harness import NOT_REACHABLE, log
from ..measure import percentiles


def run(harness, toggles):
    """`toggles` default-route writes 10-20 ms apart, matched with each watcher's events."""
    marks = {"daemon": len(harness.subscriber.snapshot()), "floor": len(harness.floor.snapshot()), "glib": len(harness.glib.snapshot()),
             "module": len(harness.module.snapshot())}
    writes = []  # (sent_at ns, "del"|"add")
    for index in range(toggles):
        if index % 2 == 0:
            writes.append((harness.writer.delete(), "del"))
        else:
            writes.append((harness.writer.add(), "add"))
        time.sleep(random.uniform(0.010, 0.020))
    if toggles % 2 == 1:
        harness.writer.add()
    time.sleep(0.5)

    def events(lines, parse):
        return [event for event in (parse(line) for line in lines) if event is not None]

    daemon = events(harness.subscriber.snapshot()[marks["daemon"]:],
                    lambda l: (int(l.split()[1]), "del" if l.split()[2] == NOT_REACHABLE else "add") if l.startswith("S ") else None)
    # The daemon emits PropertiesChanged (naming Status) first, then StatusChanged.
    properties = events(harness.subscriber.snapshot()[marks["daemon"]:],
                        lambda l: (int(l.split()[1]), None) if l.startswith("P ") and "Status" in l.split()[2].split(",") else None)
    floor = events(harness.floor.snapshot()[marks["floor"]:],
                   lambda l: (int(l.split()[0]), l.split()[1]) if l.split()[1:2] in (["new"], ["del"]) and l[0].isdigit() else None)
    floor = [(t, "add" if kind == "new" else kind) for t, kind in floor]
    def network_changed(line):
        return (int(line.split()[0]), "add" if line.split()[1] == "1" else "del") if line[0].isdigit() else None
    glib = events(harness.glib.snapshot()[marks["glib"]:], network_changed)
    module = events(harness.module.snapshot()[marks["module"]:], network_changed)
    figures, samples = {}, {}
    # PropertiesChanged carries no direction: pair each with the StatusChanged right after it.
    properties = [(t, kind) for (t, _), (_, kind) in zip(properties, daemon)] if len(properties) == len(daemon) else []
    for name, observed in (("reachabilityd → D-Bus subscriber", daemon), ("  (its PropertiesChanged, sent just after)", properties),
                           ("GLib application through the module", module),
                           ("netlink floor (C)", floor), ("GLib GNetworkMonitor", glib)):
        latencies, missing, position = [], 0, 0
        for index, (sent_at, kind) in enumerate(writes):
            # Writes alternate: an event of this kind before the next write of the same kind
            # can only answer this one (a late event still counts, a coalesced pair is missed).
            until = writes[index + 2][0] if index + 2 < len(writes) else float("inf")
            while position < len(observed) and observed[position][0] < sent_at:
                position += 1
            match = next((t for t, k in observed[position:] if t < until and k == kind), None)
            if match is None:
                missing += 1
            else:
                latencies.append((match - sent_at) / 1e6)
        figures[name] = dict(percentiles(latencies), missing=missing, events=len(observed))
        samples[name] = latencies
        log(f"latency {name}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures[name].items()))
    # The D-Bus hop alone: a libdbus emitter to the same subscriber, through the same bus.
    mark = len(harness.subscriber.snapshot())
    subprocess.run(["/usr/bin/python3", f"{harness.options.repo}/Benchmarks/dbus-emitter.py", str(toggles)], env=harness.env, check=True)
    time.sleep(0.5)
    hops = [(int(l.split()[1]) - int(l.split()[2])) / 1e6 for l in harness.subscriber.snapshot()[mark:] if l.startswith("F ")]
    name = "D-Bus hop floor (libdbus emitter → subscriber)"
    figures[name] = dict(percentiles(hops), missing=toggles - len(hops), events=len(hops))
    samples[name] = hops
    log(f"latency {name}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures[name].items()))
    harness.results["latency"] = {"toggles": toggles, "watchers": figures}
    harness.latency_samples = samples
