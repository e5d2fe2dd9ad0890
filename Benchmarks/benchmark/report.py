"""The report: the Markdown table printed and written to table.md, the chart, and, after a full
run, docs/benchmark-figures.md with docs/benchmark-chart.png."""
import os

from .harness import log


def publish(text, samples, results, repo):
    """A full run's table and chart become docs/benchmark-figures.md and docs/benchmark-chart.png."""
    path = os.path.join(repo, "docs", "benchmark-figures.md")
    with open(path, "w") as out:
        out.write("# Benchmark figures\n\n"
                  "Written by the last full `make bench` (`Benchmarks/bench.py`); do not edit by hand. "
                  "What each row measures: [benchmarks.md](benchmarks.md).\n\n"
                  f"{text}\n\n![Latency distribution and CPU under route churn](benchmark-chart.png)\n")
    chart(results, samples, os.path.join(repo, "docs", "benchmark-chart.png"))
    log(f"wrote {path} and docs/benchmark-chart.png")


def table(results):
    p = results["parameters"]
    lines = [f"reachabilityd benchmark ({p['mode']}), {p['date']}, kernel {p['kernel']}, {p['cpus']} CPUs, "
             f"load average at start {', '.join(f'{x:.2f}' for x in p['load_average_at_start'])}", ""]
    if results["latency"]:
        lines += ["| latency: default-route write → event | p50 ms | p90 ms | p99 ms | max ms | missed |", "|---|---|---|---|---|---|"]
    for name, f in results["latency"].get("watchers", {}).items():
        if f["n"]:
            lines.append(f"| {name} ({f['n']} samples) | {f['p50']:.3f} | {f['p90']:.3f} | {f['p99']:.3f} | {f['max']:.3f} | {f['missing']} |")
        else:
            lines.append(f"| {name} | – | – | – | – | {f['missing']} |")
    if results["latency"]:
        lines.append("")
    cpu = results["latency"].get("cpu_ms_per_change")
    if cpu:
        lines += [f"| CPU per change, the same {results['latency']['toggles']} toggles (process CPU clock) | ms per change |", "|---|---|"]
        lines += [f"| {name} | {ms:.3f} |" for name, ms in cpu.items()]
        lines.append("")
    s = results.get("stages")
    if s:
        lines += [f"| one change's stages, stage recorder on ({s['changes']} changes recorded, {s['toggles']} toggles; "
                  "daemon and one subscriber only) | p50 ms | p99 ms |", "|---|---|---|"]
        for stage, f in s["stages"].items():
            lines.append(f"| {stage} ({f['n']}) | {f['p50']:.3f} | {f['p99']:.3f} |" if f["n"] else f"| {stage} | – | – |")
        lines.append("")
    b = results.get("subscribers")
    if b:
        lines += [f"| subscribers, {b['toggles']} toggles | CPU ms per change: reachabilityd | C sd-bus floor | dbus-daemon "
                  "| p50 / p99 ms: StatusChanged from reachabilityd | from the C sd-bus floor | Varlink reply |", "|---|---|---|---|---|---|---|"]
        for row in b["rows"]:
            c = row["cpu_ms_per_change"]
            # Older results have no Varlink reader: "–".
            latency = [f"{x['p50']:.3f} / {x['p99']:.3f}" if x.get("n") else "–"
                       for x in (row["reachabilityd latency ms"], row["C sd-bus floor latency ms"], row.get("reachabilityd Varlink latency ms", {}))]
            # The benchmark's own D-Bus subscriber and Varlink reader are always there.
            if row.get("kind") == "Varlink":
                who = f"1 D-Bus, {row['subscribers']:,} Varlink"
            else:
                who = f"{row['subscribers']:,} D-Bus" + (", 1 Varlink" if "kind" in row else "")
            lines.append(f"| {who} | {c.get('reachabilityd', 0):.3f} | {c.get('C sd-bus floor', 0):.3f} | "
                         f"{c.get('dbus-daemon', 0):.3f} | {latency[0]} | {latency[1]} | {latency[2]} |")
            if "bus_after_the_crowd_left" in row:
                gone = row["bus_after_the_crowd_left"]
                lines.append(f"| (dbus-daemon busy {gone['s']:.1f} s, {gone['cpu_s']:.2f} CPU-s, after the {row['subscribers'] - 1:,} left) | | | | | | |")
        lines.append("")
    lines += ["| routes added + deleted | watcher | CPU-s add | CPU-s delete | on-CPU ms, add + delete (process CPU clock) | peak RSS MiB | still reacting |",
              "|---|---|---|---|---|---|---|"]
    for row in results["churn"]:
        routes = row.get("label") or f"{row['routes']:,}" + (" IPv6" if row.get("family") == 6 else "")
        for name, f in row["watchers"].items():
            reacting = row["still_reacting"].get(name)
            if f.get("dead"):
                lines.append(f"| {routes} | {name} | dead | dead | – | – | no |")
                continue
            # The process's CPU clock (ended threads included); older results: live threads' schedstat.
            kind = "process" if "add_process_cpu_ms" in f else "thread"
            thread_ms = f.get(f"add_{kind}_cpu_ms", 0) + f.get(f"delete_{kind}_cpu_ms", 0)
            lines.append(f"| {routes} | {name} | {f.get('add_cpu_s', 0):.2f} | {f.get('delete_cpu_s', 0):.2f} | {thread_ms:.2f} | "
                         f"{f['peak_rss_kib'] / 1024:.1f} | {'yes' if reacting else 'NO'} |")
        lines.append(f"| {routes} | (daemon: {row['daemon_signals']} change signals, Status after: {row['status_after']}; "
                     f"floor read {row['floor_messages']:,} messages, {row['floor_overruns']} overruns, "
                     f"≤ {row['floor_most_messages_per_datagram']} message(s)/datagram) | | | | | |")
    lines += ["", "| start-up | reachabilityd to READY=1, p50 / max ms | RSS MiB | GLib monitor ready, p50 ms (incl. Python) | RSS MiB |", "|---|---|---|---|---|"]
    for label, f in results["startup"].items():
        lines.append(f"| {label} | {f['reachabilityd_ms']['p50']:.1f} / {f['reachabilityd_ms']['max']:.1f} | {f['reachabilityd_rss_kib'] / 1024:.1f} | "
                     f"{f['glib_ms']['p50']:.1f} | {f['glib_rss_kib'] / 1024:.1f} |")
    c = results.get("connectivity")
    if c:
        n = c["cycles"]
        lines += ["", f"| connectivity check (opt-in), {n} route cycles | p50 ms | p90 ms | p99 ms | max ms |", "|---|---|---|---|---|"]
        for label, key in (("default route added → ConnectivityChanged(full) at a subscriber (check included)", "route_to_full_ms"),
                           ("the check's round trip alone (curl, fresh connection, same server)", "round_trip_floor_ms"),
                           ("checks off: default route added → StatusChanged", "route_to_reachable_checks_off_ms")):
            f = c[key]
            lines.append(f"| {label} | {f['p50']:.3f} | {f['p90']:.3f} | {f['p99']:.3f} | {f['max']:.3f} |")
        lines += ["", "| connectivity check cost | checks off | checks on | per check |", "|---|---|---|---|",
                  f"| daemon CPU ms per route cycle (utime + stime: 10 ms ticks over {n} cycles) | {c['cpu_ms_per_cycle_off']:.3f} | "
                  f"{c['cpu_ms_per_cycle_on']:.3f} | {c['cpu_ms_per_cycle_on'] - c['cpu_ms_per_cycle_off']:.3f} |"]
        for label, key in (("RSS", "rss_kib"), ("private (no other process maps it)", "private_kib")):
            before, warm, after = c["memory_checks_off"][key], c["memory_after_warm_up"][key], c["memory_after_checks"][key]
            lines.append(f"| daemon {label} KiB (checks on: after 20 warm-up checks → after {n} more) | {before} | {warm} → {after} | "
                         f"{(after - warm) / n:.2f} |")
        if "helper_cpu_ms_per_cycle" in c:
            h = c["helper_memory_after_checks"]
            lines.append(f"| check helper (the daemon's child running the exchanges): CPU ms per route cycle; RSS / private KiB after {n} checks | – | "
                         f"{c['helper_cpu_ms_per_cycle']:.3f}; {h['rss_kib']} / {h['private_kib']} | – |")
    e = results.get("explain")
    if e:
        lines += ["", f"| Explain() on a host with {e['links']:,} links ({e['calls']} calls) | daemon CPU ms per call (10 ms ticks) | reply bytes |",
                  "|---|---|---|", f"| bounded report (64 links in full, the rest counted) | {e['cpu_ms_per_call']:.3f} | {e['bytes']:,} |"]
    lines += ["", "| idle | watcher | RSS MiB | private MiB | of which anonymous MiB | wakeups/min | CPU-s |", "|---|---|---|---|---|---|---|"]
    for label, block in results["idle"].items():
        for name, f in block["watchers"].items():
            anonymous = f"{f['anonymous_kib'] / 1024:.2f}" if "anonymous_kib" in f else "–"
            lines.append(f"| {label} ({block['window_s']} s) | {name} | {f['rss_kib'] / 1024:.1f} | {f['private_kib'] / 1024:.2f} | "
                         f"{anonymous} | {f['wakeups_per_min']} | {f['cpu_s']:.2f} |")
    return "\n".join(lines)


def chart(results, samples, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def color(name):
        # One colour per watcher in both plots.
        for key, value in (("GDBus", "C5"), ("PropertiesChanged", "C9"), ("Varlink", "C6"), ("module", "C3"), ("sd-bus", "C4"), ("reachabilityd", "C0"), ("floor (C)", "C1"), ("GLib", "C2")):
            if key in name:
                return value
        return None

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=80)
    for name, values in samples.items():
        if values:
            ordered = sorted(values)
            left.plot(ordered, [(i + 1) / len(ordered) for i in range(len(ordered))], label=name.strip(), color=color(name))
    left.set_xscale("log")
    left.set_xlabel("default-route write → event (ms, log)")
    left.set_ylabel("fraction of toggles")
    left.set_title("Latency distribution (CDF)", fontsize=10)
    left.grid(True, which="both", alpha=0.3)
    if samples:
        left.legend(fontsize=8)
    names = list(results["churn"][0]["watchers"]) if results["churn"] else []

    def churn_cpu(figures):
        # On-CPU time from the process CPU clock or schedstat when recorded (ns precision), else
        # utime+stime (10 ms ticks).
        for kind in ("process", "thread"):
            if f"add_{kind}_cpu_ms" in figures:
                return (figures[f"add_{kind}_cpu_ms"] + figures.get(f"delete_{kind}_cpu_ms", 0)) / 1000
        return figures.get("add_cpu_s", 0) + figures.get("delete_cpu_s", 0)

    for name in names:
        for family in (4, 6):
            rows = [row for row in results["churn"] if row.get("family", 4) == family]
            points = [(row["routes"], churn_cpu(row["watchers"][name])) for row in rows if not row["watchers"][name].get("dead")]
            if not points:
                continue
            # IPv4 bursts as a line, the IPv6 burst(s) as hollow squares of the same colour.
            style = dict(marker="o") if family == 4 else dict(marker="s", linestyle="none", markerfacecolor="none", markersize=9)
            label = name if family == 4 else f"{name}, IPv6"
            right.plot([n for n, _ in points], [max(c, 1e-4) for _, c in points], label=label, color=color(name), **style)
            # A watcher that no longer reacted to a default-route change after the churn: a cross.
            deaf = [(row["routes"], churn_cpu(row["watchers"][name])) for row in rows if not row["still_reacting"].get(name, True)]
            if deaf:
                right.plot([n for n, _ in deaf], [max(c, 1e-4) for _, c in deaf], linestyle="none", marker="X", markersize=11,
                           color=color(name), label=f"{label}: deaf afterwards")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("routes added then deleted (log; squares: IPv6)")
    right.set_ylabel("CPU seconds, add + delete (log)")
    right.set_title("CPU under route churn (0 drawn at 0.1 ms)", fontsize=10)
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=8)
    figure.suptitle(f"reachabilityd benchmark, {results['parameters']['date']} ({results['parameters']['mode']})", fontsize=10)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)

