"""connectivity: the opt-in active check against testbed/servers/connectivity-server.py in a
router namespace (rb1 moves there): default route deleted/added N times with checks off, then on;
route write → ConnectivityChanged(full) at the subscriber beside the check's own round trip
(curl), CPU per cycle (on minus off), RSS/private memory growth; the check helper's (the
daemon's child that runs the exchanges) CPU and memory beside the daemon's."""
import os
import subprocess
import time

from ..harness import GATEWAY, NOT_REACHABLE, REACHABLE, Child, log
from ..measure import cpu_seconds, memory, percentiles


def run(harness, cycles):
    """The opt-in active check against a server in a router namespace. A cycle deletes the
    default route and adds it back; with checks on, the route's return starts a check, and the
    subscriber times `ConnectivityChanged(full)` from the route's write. The same cycles with
    checks off give the baseline the check's CPU is the excess over; RSS is read after a
    warm-up (libcurl loaded) and after every cycle's check."""
    url = start_router(harness)
    # The round trip's floor: curl (the same libcurl), a fresh connection each, bound to rb0.
    floor = []
    for _ in range(max(20, cycles // 10)):
        result = subprocess.run(["curl", "-s", "-o", "/dev/null", "--interface", "rb0", "-w", "%{time_total}", url],
                                capture_output=True, text=True, check=True)
        floor.append(float(result.stdout) * 1000)
    configuration = f"{harness.work}/connectivity.conf"
    with open(configuration, "w") as out:
        out.write("")
    daemon, _ = harness.spawn_daemon(["--config", configuration])
    subscriber = harness.spawn_subscriber("subscriber-connectivity.log")
    reachable = lambda line: line.startswith("S ") and line.split()[2] == REACHABLE
    try:
        # Checks off: the baseline.
        cpu_before = cpu_seconds(daemon.pid)
        off = [route_cycle(harness, subscriber, reachable) for _ in range(cycles)]
        cpu_off = cpu_seconds(daemon.pid) - cpu_before
        rss_off = memory(daemon.pid)
        # Checks on (SIGHUP), then a warm-up of 20 cycles: libcurl and TLS are loaded.
        with open(configuration, "w") as out:
            out.write(f"[Connectivity]\nCheckURL={url}\nCheckIntervalSec=300\nCheckTimeoutSec=5\n")
        full = lambda line: line.startswith("C ") and line.split()[2] == "full"
        mark = len(subscriber.snapshot())
        daemon.process.send_signal(1)  # SIGHUP
        subscriber.wait_for_line(full, start=mark)
        for _ in range(20):
            route_cycle(harness, subscriber, full)
        rss_warm = memory(daemon.pid)
        helper = check_helper(daemon.pid)
        helper_cpu_before = cpu_seconds(helper) if helper else 0
        cpu_before = cpu_seconds(daemon.pid)
        on = []
        for index in range(cycles):
            on.append(route_cycle(harness, subscriber, full))
            if (index + 1) % max(1, cycles // 4) == 0:
                log(f"connectivity: {index + 1} checks, RSS {memory(daemon.pid)['rss_kib']} KiB")
        cpu_on = cpu_seconds(daemon.pid) - cpu_before
        rss_after = memory(daemon.pid)
        helper_cpu = cpu_seconds(helper) - helper_cpu_before if helper else 0
        helper_memory = memory(helper) if helper else {"rss_kib": 0, "private_kib": 0}
    finally:
        subscriber.stop()
        daemon.stop()
    harness.results["connectivity"] = {
        "cycles": cycles, "round_trip_floor_ms": percentiles(floor),
        "route_to_reachable_checks_off_ms": percentiles(off), "route_to_full_ms": percentiles(on),
        "cpu_ms_per_cycle_off": cpu_off * 1000 / cycles, "cpu_ms_per_cycle_on": cpu_on * 1000 / cycles,
        "memory_checks_off": rss_off, "memory_after_warm_up": rss_warm, "memory_after_checks": rss_after,
        "helper_cpu_ms_per_cycle": helper_cpu * 1000 / cycles, "helper_memory_after_checks": helper_memory,
    }
    c = harness.results["connectivity"]
    log(f"connectivity: route → full p50 {c['route_to_full_ms']['p50']:.3f} ms, p99 {c['route_to_full_ms']['p99']:.3f}; "
        f"round-trip floor p50 {c['round_trip_floor_ms']['p50']:.3f}; CPU/cycle {c['cpu_ms_per_cycle_off']:.3f} → "
        f"{c['cpu_ms_per_cycle_on']:.3f} ms; RSS {rss_off['rss_kib']} → {rss_warm['rss_kib']} → {rss_after['rss_kib']} KiB; "
        f"check helper CPU/cycle {c['helper_cpu_ms_per_cycle']:.3f} ms, RSS {helper_memory['rss_kib']} KiB")


def check_helper(daemon_pid):
    """The daemon's check helper: its child started with --connectivity-check-helper; None for
    a daemon that runs the exchanges itself (REACHABILITYD_BENCH_BINARY of an older build)."""
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                arguments = cmdline.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        if parent == daemon_pid and b"--connectivity-check-helper" in arguments:
            return int(entry)
    return None


def start_router(harness):
    """Moves rb1 into a router namespace of its own (GATEWAY) running the connectivity tests'
    servers (testbed/servers/connectivity-server.py); returns the check URL."""
    harness.router = f"{harness.netns}-router"
    state = f"{harness.work}/router"
    os.makedirs(state)
    subprocess.run(["ip", "netns", "add", harness.router], check=True)
    harness.ip("link", "set", "rb1", "netns", harness.router)
    for arguments in (["addr", "add", f"{GATEWAY}/24", "dev", "rb1"], ["link", "set", "rb1", "up"], ["link", "set", "lo", "up"]):
        subprocess.run(["ip", "-n", harness.router, *arguments], check=True)
    harness.check_server = Child("check-server", ["ip", "netns", "exec", harness.router, "/usr/bin/python3",
                                                  f"{harness.options.repo}/testbed/servers/connectivity-server.py", state],
                                 log_path=f"{harness.work}/check-server.log")
    deadline = time.monotonic() + 60
    while not os.path.exists(f"{state}/ready"):
        if time.monotonic() > deadline or not harness.check_server.alive():
            raise RuntimeError(f"the check server did not start: {harness.check_server.snapshot()}")
        time.sleep(0.05)
    return f"http://{GATEWAY}:8080/check"


def route_cycle(harness, subscriber, answer):
    """Deletes the default route, waits for not-reachable, adds it back; returns the ms from
    the add to the subscriber's first line satisfying `answer` after it."""
    mark = len(subscriber.snapshot())
    harness.writer.delete()
    subscriber.wait_for_line(lambda line: line.startswith("S ") and line.split()[2] == NOT_REACHABLE, start=mark)
    mark = len(subscriber.snapshot())
    sent_at = harness.writer.add()
    _, line = subscriber.wait_for_line(answer, start=mark)
    return (int(line.split()[1]) - sent_at) / 1e6
