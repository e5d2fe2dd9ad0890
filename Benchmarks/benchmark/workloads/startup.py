"""startup: time from spawn to READY=1 and RSS at READY, with the default table and with many
routes (IPv4 /32s; and, under ipv6, IPv6 /64s), beside GLib's monitor getting ready."""
import subprocess
import time

from ..harness import log, route_prefixes
from ..measure import memory, percentiles


def run(harness, label, runs, glib_runs=None):
    """`runs` daemon starts to READY=1 and `glib_runs` (default: half as many) GLib monitor starts,
    recorded under `label`."""
    times, rss, lost = [], [], 0
    for _ in range(runs):
        child, seconds = harness.spawn_daemon()
        times.append(seconds * 1000)
        rss.append(memory(child.pid)["rss_kib"])
        # A SIGTERM sent within a few ms of READY=1 can be lost (Dispatch registers the signal
        # source asynchronously, after the daemon set SIGTERM to SIG_IGN): give it time.
        time.sleep(0.2)
        child.stop()
        if child.process.returncode != 0:
            lost += 1
            log(f"warning: reachabilityd ended with {child.process.returncode} after SIGTERM (killed after 5 s)")
    glib_times, glib_rss = [], []
    for _ in range(glib_runs or max(1, runs // 2)):
        child, seconds, backend = harness.spawn_glib(timeout=300)
        glib_times.append(seconds * 1000)
        glib_rss.append(memory(child.pid)["rss_kib"])
        child.stop()
    harness.results["startup"][label] = {
        "reachabilityd_ms": percentiles(times), "reachabilityd_rss_kib": max(rss), "sigterm_not_honoured": lost,
        "glib_ms": percentiles(glib_times), "glib_rss_kib": max(glib_rss), "glib_backend": backend,
    }
    log(f"start-up {label}: READY p50 {percentiles(times)['p50']:.1f} ms, RSS {max(rss)} KiB; "
        f"GLib {percentiles(glib_times)['p50']:.1f} ms ({backend}), RSS {max(glib_rss)} KiB")


def run_with_routes(harness, count, family, runs, glib_runs=None):
    """`run` with `count` IPv`family` routes in the table, added before and deleted after."""
    log(f"adding {count} IPv{family} routes for the start-up measurement")
    route_table(harness, count, family, "add")
    run(harness, f"{count:,} {'IPv6 ' if family == 6 else ''}routes", runs, glib_runs)
    route_table(harness, count, family, "del")


def route_table(harness, count, family, verb):
    """Adds (`verb` "add") or deletes ("del") the `count` routes of `route_prefixes` on rb0."""
    path = f"{harness.work}/startup-{verb}-v{family}.batch"
    with open(path, "w") as out:
        for prefix in route_prefixes(count, family):
            out.write(f"route {verb} {prefix} dev rb0\n")
    subprocess.run(["ip", "-n", harness.netns, "-batch", path], check=True, capture_output=True)
