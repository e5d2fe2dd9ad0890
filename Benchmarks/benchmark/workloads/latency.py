"""latency: the default route deleted/added by a netlink write timestamped just before send(); the
time until (a) the floor reader sees the RTM_*ROUTE, (b) GLib emits network-changed, (c) a
separate D-Bus subscriber receives StatusChanged, (d) a GLib application using the GIO module
(gio/, GIO_USE_NETWORK_MONITOR=reachabilityd) emits network-changed, (e) the same subscriber
receives the C sd-bus floor's StatusChanged, (f) a plain GDBus subscriber in the same kind of
process as (d) (python3-gi, Benchmarks/gdbus-subscriber.py) receives StatusChanged and
PropertiesChanged: (d) minus (f) is the module's own cost, (g) a Varlink Subscribe reader
(Benchmarks/varlink-subscriber.py) receives the reply whose status changed; and each process's
CPU per change."""
from ..harness import NOT_REACHABLE, log
from ..measure import percentiles, process_cpu_ns


def events(lines, parse):
    """The (CLOCK_MONOTONIC ns, kind) that `parse` finds in `lines` (None: not an event)."""
    return [event for event in (parse(line) for line in lines) if event is not None]


def status_events(lines, prefix):
    """A subscriber's status lines as events: the D-Bus subscriber's StatusChanged ("S", the
    daemon; "Q", the C sd-bus floor), the Varlink subscriber's replies ("V")."""
    return events(lines, lambda l: (int(l.split()[1]), "del" if l.split()[2] == NOT_REACHABLE else "add") if l.startswith(prefix + " ") else None)


def arrivals(writes, observed):
    """Each write's latency in ms to the watcher's event it caused, None where none answers it."""
    found, position = [], 0
    for index, (sent_at, kind) in enumerate(writes):
        # Writes alternate: an event of this kind before the next write of the same kind
        # can only answer this one (a late event still counts, a coalesced pair is missed).
        until = writes[index + 2][0] if index + 2 < len(writes) else float("inf")
        while position < len(observed) and observed[position][0] < sent_at:
            position += 1
        at = next((t for t, k in observed[position:] if t < until and k == kind), None)
        found.append(None if at is None else (at - sent_at) / 1e6)
    return found


def match(writes, observed, by_kind=None):
    """Pairs each write with the watcher's event it caused; returns (latencies in ms, missed).
    `by_kind` ({}), if given, gets the latencies of each kind of write ("del", "add") too."""
    latencies, missing = [], 0
    for (_, kind), latency in zip(writes, arrivals(writes, observed)):
        if latency is None:
            missing += 1
            continue
        latencies.append(latency)
        if by_kind is not None:
            by_kind.setdefault(kind, []).append(latency)
    return latencies, missing


def cpu_ns(children):
    """{name: process CPU ns} of the live `children` ({name: Child})."""
    return {name: process_cpu_ns(child.pid) for name, child in children.items() if child is not None and child.alive()}


def run(harness, toggles):
    """`toggles` default-route writes 10-20 ms apart, matched with each watcher's events."""
    marks = {"daemon": len(harness.subscriber.snapshot()), "floor": len(harness.floor.snapshot()), "glib": len(harness.glib.snapshot()),
             "module": len(harness.module.snapshot()), "gdbus": len(harness.gdbus_subscriber.snapshot()),
             "varlink": len(harness.varlink_subscriber.snapshot())}
    processes = {"reachabilityd": harness.daemon, "C sd-bus floor": harness.sdbus_floor, "netlink floor (C)": harness.floor,
                 "dbus-daemon (both signals' delivery)": harness.bus}
    cpu_before = cpu_ns(processes)
    writes = harness.toggle_default_route(toggles)
    cpu_after = cpu_ns(processes)

    def status_properties(lines):
        """The daemon's StatusChanged events in a subscriber's `lines`, and its PropertiesChanged
        (naming Status) each paired with the StatusChanged right before it (they carry no
        direction; [] when they do not pair up)."""
        statuses = status_events(lines, "S")
        properties = events(lines, lambda l: (int(l.split()[1]), None) if l.startswith("P ") and "Status" in l.split()[2].split(",") else None)
        return statuses, [(t, kind) for (t, _), (_, kind) in zip(properties, statuses)] if len(properties) == len(statuses) else []

    subscribed = harness.subscriber.snapshot()[marks["daemon"]:]
    # The daemon emits StatusChanged first, then PropertiesChanged (naming Status).
    daemon, properties = status_properties(subscribed)
    gdbus, gdbus_properties = status_properties(harness.gdbus_subscriber.snapshot()[marks["gdbus"]:])
    floor = events(harness.floor.snapshot()[marks["floor"]:],
                   lambda l: (int(l.split()[0]), l.split()[1]) if l.split()[1:2] in (["new"], ["del"]) and l[0].isdigit() else None)
    floor = [(t, "add" if kind == "new" else kind) for t, kind in floor]

    def network_changed(line):
        return (int(line.split()[0]), "add" if line.split()[1] == "1" else "del") if line[0].isdigit() else None
    glib = events(harness.glib.snapshot()[marks["glib"]:], network_changed)
    module = events(harness.module.snapshot()[marks["module"]:], network_changed)
    figures, samples = {}, {}
    varlink = status_events(harness.varlink_subscriber.snapshot()[marks["varlink"]:], "V")
    for name, observed in (("reachabilityd → D-Bus subscriber", daemon), ("  (its PropertiesChanged, sent just after)", properties),
                           ("reachabilityd → Varlink Subscribe reader", varlink),
                           ("C sd-bus floor → D-Bus subscriber", status_events(subscribed, "Q")),
                           ("reachabilityd → GDBus subscriber (python3-gi)", gdbus),
                           ("  (its PropertiesChanged, at the GDBus subscriber)", gdbus_properties),
                           ("GLib application through the module", module),
                           ("netlink floor (C)", floor), ("GLib GNetworkMonitor", glib)):
        by_kind = {}
        latencies, missing = match(writes, observed, by_kind)
        # Per direction too: the GIO module publishes a lost route on StatusChanged, a new one on
        # the PropertiesChanged after it.
        figures[name] = dict(percentiles(latencies), missing=missing, events=len(observed),
                             **{f"p50_{kind}": percentiles(values)["p50"] for kind, values in sorted(by_kind.items())})
        samples[name] = latencies
        log(f"latency {name}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures[name].items()))
    # The same change at both kinds of subscriber: the difference per toggle is free of what
    # the toggles share (the daemon's wake-up, the machine's load). Negative: Varlink first.
    differences = [v - d for v, d in zip(arrivals(writes, varlink), arrivals(writes, daemon)) if v is not None and d is not None]
    figures["Varlink reader minus D-Bus subscriber, per change"] = dict(percentiles(differences), missing=toggles - len(differences),
                                                                       events=len(differences))
    log("latency Varlink minus D-Bus per change: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                               for k, v in figures["Varlink reader minus D-Bus subscriber, per change"].items()))
    cpu = {name: (cpu_after[name] - cpu_before[name]) / 1e6 / toggles for name in cpu_after if name in cpu_before}
    log("latency: CPU ms per change: " + ", ".join(f"{name} {ms:.3f}" for name, ms in cpu.items()))
    harness.results["latency"] = {"toggles": toggles, "watchers": figures, "cpu_ms_per_change": cpu}
    harness.latency_samples = samples
