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
           the GIO module (gio/, GIO_USE_NETWORK_MONITOR=reachabilityd) emits network-changed
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
All timestamps are CLOCK_MONOTONIC in nanoseconds, which every process shares.
"""
import argparse
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
BUS_NAME = "org.reachabilityd.Reachability1"
OBJECT_PATH = "/org/reachabilityd/Reachability1"
REACHABLE = "reachable-via-ethernet"
NOT_REACHABLE = "not-reachable"
GATEWAY = "10.88.0.1"
WORKLOADS = ("startup", "latency", "churn", "ipv6", "idle", "connectivity", "explain")
LOCAL = "10.88.0.2/24"


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- /proc -------------------------------------------------------------------------------------

def cpu_seconds(pid):
    """utime + stime of a process, in seconds (clock-tick resolution)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def status_fields(pid):
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            values[key] = value.split()[0] if value.split() else ""
    return values


def memory(pid):
    """RSS, peak RSS (VmHWM), private memory (Private_Clean + Private_Dirty: pages no other
    process maps, file-backed ones included, e.g. a static binary's code) and of that the
    anonymous part (heap, stacks, relocated data), in KiB."""
    fields = status_fields(pid)
    private = anonymous = 0
    with open(f"/proc/{pid}/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith(("Private_Clean:", "Private_Dirty:")):
                private += int(line.split()[1])
            elif line.startswith("Anonymous:"):
                anonymous = int(line.split()[1])
    return {"rss_kib": int(fields["VmRSS"]), "hwm_kib": int(fields["VmHWM"]), "private_kib": private, "anonymous_kib": anonymous}


def context_switches(pid):
    """Voluntary + involuntary context switches per live thread of the process: {tid: count}."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = status_fields(f"{pid}/task/{task}")
        except FileNotFoundError:
            continue
        counts[task] = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
    return counts


def thread_cpu_ns(pid):
    """Nanoseconds on CPU per live thread (first field of /proc/PID/task/TID/schedstat): {tid: ns}.
    Precise where utime+stime count 10 ms ticks; threads that end in between are missed."""
    times = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as schedstat:
                times[task] = int(schedstat.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return times


def wakeups_between(before, after):
    """Context switches between two `context_switches` readings: threads alive at the end count
    from 0 when they were born in between; the switches of threads that died in between are
    not visible in /proc and are missed (Dispatch's worker threads come and go)."""
    return sum(count - before.get(tid, 0) for tid, count in after.items())


def reset_peak_rss(pid):
    """Resets VmHWM to the current RSS (`echo 5 > /proc/PID/clear_refs`, Linux >= 4.0)."""
    with open(f"/proc/{pid}/clear_refs", "w") as clear:
        clear.write("5")


def percentiles(values):
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(fraction):
        return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]

    return {"n": len(ordered), "p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "max": ordered[-1]}


# --- child processes -----------------------------------------------------------------------------

class Child:
    """A child process whose stdout lines are collected by a thread: (receive time, line)."""

    def __init__(self, name, argv, env=None, log_path=None):
        self.name = name
        self.lines = []
        self.condition = threading.Condition()
        stderr = open(log_path, "ab") if log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=stderr, bufsize=0)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    @property
    def pid(self):
        return self.process.pid

    def _read(self):
        for raw in self.process.stdout:
            with self.condition:
                self.lines.append(raw.decode().rstrip("\n"))
                self.condition.notify_all()

    def wait_for_line(self, predicate, timeout=10.0, start=0):
        deadline = time.monotonic() + timeout
        with self.condition:
            while True:
                for index in range(start, len(self.lines)):
                    if predicate(self.lines[index]):
                        return index, self.lines[index]
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.process.poll() is not None:
                    raise RuntimeError(f"{self.name}: no expected line within {timeout} s (exit {self.process.poll()})")
                self.condition.wait(remaining)

    def snapshot(self):
        with self.condition:
            return list(self.lines)

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.thread.join(timeout=2)


class NotifySocket:
    """The NOTIFY_SOCKET the daemon sends READY=1 and STATUS= to, read continuously by a thread.

    It must be read all the time, as systemd does: sd_notify() sends with a blocking sendmsg(),
    so a daemon whose notification socket fills up stops in the middle of publishing a change.
    """

    def __init__(self, path):
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(path)
        self.ready_times = []
        self.condition = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            message = self.socket.recv(4096)
            received = time.monotonic_ns()
            if b"READY=1" in message.split(b"\n"):
                with self.condition:
                    self.ready_times.append(received)
                    self.condition.notify_all()

    def mark(self):
        with self.condition:
            return len(self.ready_times)

    def wait_ready(self, mark, timeout=60.0):
        """Returns the CLOCK_MONOTONIC ns at which the first READY=1 after `mark` arrived."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while len(self.ready_times) <= mark:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError("no READY=1")
                self.condition.wait(remaining)
            return self.ready_times[mark]


def route_prefixes(count, family):
    """`count` distinct prefixes the probe routes cannot depend on: IPv4 /32s in 100.64.0.0/10,
    IPv6 /64s in 2001:db8::/32 (documentation ranges, routed to rb0 by the workloads)."""
    for index in range(count):
        if family == 6:
            yield f"2001:db8:{index >> 16:x}:{index & 0xffff:x}::/64"
        else:
            yield f"100.{64 + (index >> 16)}.{(index >> 8) & 255}.{index & 255}/32"


# --- netlink route writer ------------------------------------------------------------------------

class RouteWriter:
    """Adds and deletes `default via GATEWAY dev LINK` with one netlink message each (NLM_F_ACK)."""

    RTM_NEWROUTE, RTM_DELROUTE = 24, 25
    NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400

    def __init__(self, link):
        self.socket = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.socket.bind((0, 0))
        self.index = socket.if_nametoindex(link)
        self.sequence = 0
        attributes = struct.pack("HH4s", 8, 5, socket.inet_aton(GATEWAY)) + struct.pack("HHI", 8, 4, self.index)
        # rtmsg: family, dst_len, src_len, tos, table main, protocol static, scope, type unicast, flags
        self.add_body = struct.pack("BBBBBBBBI", socket.AF_INET, 0, 0, 0, 254, 4, 0, 1, 0) + attributes
        self.delete_body = struct.pack("BBBBBBBBI", socket.AF_INET, 0, 0, 0, 254, 0, 255, 0, 0) + attributes

    def _request(self, kind, flags, body):
        self.sequence += 1
        message = struct.pack("IHHII", 16 + len(body), kind, flags, self.sequence, 0) + body
        sent_at = time.monotonic_ns()
        self.socket.send(message)
        reply = self.socket.recv(65536)
        length, reply_type, _, _, _ = struct.unpack_from("IHHII", reply)
        if reply_type == 2:
            (code,) = struct.unpack_from("i", reply, 16)
            if code != 0:
                raise OSError(-code, f"netlink route request failed: {os.strerror(-code)}")
        return sent_at

    def add(self):
        return self._request(self.RTM_NEWROUTE, self.NLM_F_REQUEST | self.NLM_F_ACK | self.NLM_F_CREATE | self.NLM_F_EXCL, self.add_body)

    def delete(self):
        return self._request(self.RTM_DELROUTE, self.NLM_F_REQUEST | self.NLM_F_ACK, self.delete_body)


# --- the benchmark -------------------------------------------------------------------------------

class Bench:
    def __init__(self, options):
        self.options = options
        self.netns = options.netns
        self.work = tempfile.mkdtemp(prefix="rbench-")
        self.results = {"parameters": {}, "startup": {}, "latency": {}, "churn": [], "idle": {}, "connectivity": {}, "explain": {}}
        self.bus = None
        self.daemon = None
        self.floor = None
        self.glib = None
        self.module = None
        self.subscriber = None
        self.notify = None
        self.router = None
        self.check_server = None
        self.latency_samples = {}

    # Processes

    def ip(self, *arguments, check=True):
        return subprocess.run(["ip", "-n", self.netns, *arguments], check=check, capture_output=True, text=True)

    def start_bus(self):
        dbus_dir = os.path.join(self.options.repo, "dbus")
        includes = "".join(f"  <include>{dbus_dir}/{name}</include>\n" for name in sorted(os.listdir(dbus_dir)) if name.endswith(".conf"))
        with open(os.path.join(self.options.repo, "scripts/private-system-bus.conf.in")) as template:
            config = (template.read().replace("@SOCKET_PATH@", f"{self.work}/system_bus_socket")
                      .replace("@OWNER_USER@", "root").replace("@INCLUDES@", includes))
        with open(f"{self.work}/bus.conf", "w") as out:
            out.write(config)
        self.bus = Child("dbus-daemon", ["dbus-daemon", f"--config-file={self.work}/bus.conf", "--nofork", "--print-address=1"],
                         log_path=f"{self.work}/bus.log")
        self.bus.wait_for_line(lambda line: line.startswith("unix:"))
        self.address = f"unix:path={self.work}/system_bus_socket"
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address, GIO_USE_NETWORK_MONITOR="netlink")

    def spawn_daemon(self, arguments=()):
        """Starts the daemon; returns (child, seconds from spawn to READY=1)."""
        if self.notify is None:
            self.notify = NotifySocket(f"{self.work}/notify")
        mark = self.notify.mark()
        env = dict(self.env, NOTIFY_SOCKET=self.notify.path)
        started = time.monotonic_ns()
        child = Child("reachabilityd", [self.options.daemon, *arguments], env=env, log_path=f"{self.work}/reachabilityd.log")
        ready = self.notify.wait_ready(mark)
        return child, (ready - started) / 1e9

    def spawn_glib(self, timeout=30, monitor="netlink"):
        """Starts Benchmarks/glib-monitor.py with GLib's netlink monitor, or with the GIO module
        (monitor="reachabilityd"); returns (child, seconds to ready, the monitor's type name)."""
        started = time.monotonic_ns()
        env = dict(self.env, GIO_USE_NETWORK_MONITOR=monitor, GIO_MODULE_DIR=self.options.gio_modules)
        child = Child(f"glib-{monitor}", ["/usr/bin/python3", f"{self.options.repo}/Benchmarks/glib-monitor.py"], env=env,
                      log_path=f"{self.work}/glib-{monitor}.log")
        _, line = child.wait_for_line(lambda line: line.startswith("ready "), timeout=timeout)
        return child, (int(line.split()[1]) - started) / 1e9, line.split()[2]

    def busctl_status(self):
        result = subprocess.run(["busctl", f"--address={self.address}", "get-property", BUS_NAME, OBJECT_PATH, BUS_NAME, "Status"],
                                capture_output=True, text=True)
        return result.stdout.strip().split(" ", 1)[-1].strip('"') if result.returncode == 0 else f"error: {result.stderr.strip()}"

    def configure_link(self):
        self.ip("addr", "add", LOCAL, "dev", "rb0")
        self.ip("link", "set", "rb1", "up")
        self.ip("link", "set", "rb0", "up")
        self.writer = RouteWriter("rb0")
        self.writer.add()

    def watchers(self):
        return {"reachabilityd": self.daemon, "netlink floor (C)": self.floor, "GLib GNetworkMonitor": self.glib}

    def floor_counts(self):
        start = len(self.floor.snapshot())
        self.floor.process.send_signal(10)  # SIGUSR1
        _, line = self.floor.wait_for_line(lambda line: line.startswith("counts "), start=start)
        datagrams, messages, overruns, most = map(int, line.split()[1:])
        return {"datagrams": datagrams, "messages": messages, "overruns": overruns, "most_per_datagram": most}

    def settle(self, timeout=300.0):
        """Waits until no watcher's CPU time moved for 0.6 s."""
        deadline = time.monotonic() + timeout
        last, still = None, 0
        while time.monotonic() < deadline:
            now = tuple(cpu_seconds(child.pid) for child in self.watchers().values() if child.alive())
            still = still + 1 if now == last else 0
            if still >= 3:
                return
            last = now
            time.sleep(0.2)
        log("warning: watchers still busy at the settle deadline")

    # Workloads

    def startup(self, label, runs, glib_runs=None):
        times, rss, lost = [], [], 0
        for _ in range(runs):
            child, seconds = self.spawn_daemon()
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
            child, seconds, backend = self.spawn_glib(timeout=300)
            glib_times.append(seconds * 1000)
            glib_rss.append(memory(child.pid)["rss_kib"])
            child.stop()
        self.results["startup"][label] = {
            "reachabilityd_ms": percentiles(times), "reachabilityd_rss_kib": max(rss), "sigterm_not_honoured": lost,
            "glib_ms": percentiles(glib_times), "glib_rss_kib": max(glib_rss), "glib_backend": backend,
        }
        log(f"start-up {label}: READY p50 {percentiles(times)['p50']:.1f} ms, RSS {max(rss)} KiB; "
            f"GLib {percentiles(glib_times)['p50']:.1f} ms ({backend}), RSS {max(glib_rss)} KiB")

    def idle(self, label, seconds):
        before = {name: (cpu_seconds(c.pid), context_switches(c.pid)) for name, c in self.watchers().items() if c.alive()}
        time.sleep(seconds)
        figures = {}
        for name, child in self.watchers().items():
            if not child.alive() or name not in before:
                continue
            cpu, switches = cpu_seconds(child.pid) - before[name][0], wakeups_between(before[name][1], context_switches(child.pid))
            figures[name] = dict(memory(child.pid), cpu_s=round(cpu, 3), wakeups_per_min=round(switches * 60 / seconds, 1))
        self.results["idle"][label] = {"window_s": seconds, "watchers": figures}
        log(f"idle {label} ({seconds} s): " + "; ".join(f"{n}: {f['rss_kib']} KiB RSS, {f['private_kib']} KiB private, "
                                                      f"{f['wakeups_per_min']}/min, {f['cpu_s']} CPU-s" for n, f in figures.items()))

    def latency(self, toggles):
        marks = {"daemon": len(self.subscriber.snapshot()), "floor": len(self.floor.snapshot()), "glib": len(self.glib.snapshot()),
                 "module": len(self.module.snapshot())}
        writes = []  # (sent_at ns, "del"|"add")
        for index in range(toggles):
            if index % 2 == 0:
                writes.append((self.writer.delete(), "del"))
            else:
                writes.append((self.writer.add(), "add"))
            time.sleep(random.uniform(0.010, 0.020))
        if toggles % 2 == 1:
            self.writer.add()
        time.sleep(0.5)

        def events(lines, parse):
            return [event for event in (parse(line) for line in lines) if event is not None]

        daemon = events(self.subscriber.snapshot()[marks["daemon"]:],
                        lambda l: (int(l.split()[1]), "del" if l.split()[2] == NOT_REACHABLE else "add") if l.startswith("S ") else None)
        # The daemon emits PropertiesChanged (naming Status) first, then StatusChanged.
        properties = events(self.subscriber.snapshot()[marks["daemon"]:],
                            lambda l: (int(l.split()[1]), None) if l.startswith("P ") and "Status" in l.split()[2].split(",") else None)
        floor = events(self.floor.snapshot()[marks["floor"]:],
                       lambda l: (int(l.split()[0]), l.split()[1]) if l.split()[1:2] in (["new"], ["del"]) and l[0].isdigit() else None)
        floor = [(t, "add" if kind == "new" else kind) for t, kind in floor]
        def network_changed(line):
            return (int(line.split()[0]), "add" if line.split()[1] == "1" else "del") if line[0].isdigit() else None
        glib = events(self.glib.snapshot()[marks["glib"]:], network_changed)
        module = events(self.module.snapshot()[marks["module"]:], network_changed)
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
        mark = len(self.subscriber.snapshot())
        subprocess.run(["/usr/bin/python3", f"{self.options.repo}/Benchmarks/dbus-emitter.py", str(toggles)], env=self.env, check=True)
        time.sleep(0.5)
        hops = [(int(l.split()[1]) - int(l.split()[2])) / 1e6 for l in self.subscriber.snapshot()[mark:] if l.startswith("F ")]
        name = "D-Bus hop floor (libdbus emitter → subscriber)"
        figures[name] = dict(percentiles(hops), missing=toggles - len(hops), events=len(hops))
        samples[name] = hops
        log(f"latency {name}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures[name].items()))
        self.results["latency"] = {"toggles": toggles, "watchers": figures}
        self.latency_samples = samples

    def churn(self, count, family=4):
        add_path, delete_path = f"{self.work}/add-{count}-v{family}.batch", f"{self.work}/del-{count}-v{family}.batch"
        with open(add_path, "w") as add, open(delete_path, "w") as delete:
            for prefix in route_prefixes(count, family):
                add.write(f"route add {prefix} dev rb0\n")
                delete.write(f"route del {prefix} dev rb0\n")
        # A fresh GLib monitor for every burst: one that an earlier burst left deaf would read
        # nothing and show 0 CPU at every N.
        self.glib.stop()
        self.glib, _, _ = self.spawn_glib()
        signals_before = len([l for l in self.subscriber.snapshot() if l[:2] in ("S ", "P ")])
        floor_before = self.floor_counts()
        row = {"routes": count, "family": family, "watchers": {}}
        phases = {}
        for phase, path in (("add", add_path), ("delete", delete_path)):
            before = {name: cpu_seconds(c.pid) for name, c in self.watchers().items() if c.alive()}
            before_threads = {name: thread_cpu_ns(c.pid) for name, c in self.watchers().items() if c.alive()}
            for child in self.watchers().values():
                if child.alive():
                    reset_peak_rss(child.pid)
            started = time.monotonic()
            subprocess.run(["ip", "-n", self.netns, "-batch", path], check=True, capture_output=True)
            phases[phase] = time.monotonic() - started
            self.settle()
            for name, child in self.watchers().items():
                figures = row["watchers"].setdefault(name, {})
                if not child.alive() or name not in before:
                    figures["dead"] = True
                    continue
                figures[f"{phase}_cpu_s"] = round(cpu_seconds(child.pid) - before[name], 3)
                figures[f"{phase}_thread_cpu_ms"] = round(wakeups_between(before_threads[name], thread_cpu_ns(child.pid)) / 1e6, 2)
                figures["peak_rss_kib"] = max(figures.get("peak_rss_kib", 0), memory(child.pid)["hwm_kib"])
        floor_after = self.floor_counts()
        row["ip_batch_s"] = {phase: round(seconds, 2) for phase, seconds in phases.items()}
        row["floor_messages"] = floor_after["messages"] - floor_before["messages"]
        row["floor_overruns"] = floor_after["overruns"] - floor_before["overruns"]
        row["floor_most_messages_per_datagram"] = floor_after["most_per_datagram"]
        row["daemon_signals"] = len([l for l in self.subscriber.snapshot() if l[:2] in ("S ", "P ")]) - signals_before
        row["status_after"] = self.busctl_status()
        row["status_right"] = row["status_after"] == REACHABLE
        row["still_reacting"] = self.still_reacting()
        self.results["churn"].append(row)
        log(f"churn {count} IPv{family}: " + json.dumps(row))

    def still_reacting(self):
        """Deletes and re-adds the default route: which watchers notice within 2 s?"""
        marks = {name: len(child.snapshot()) for name, child in (("reachabilityd", self.subscriber), ("netlink floor (C)", self.floor), ("GLib GNetworkMonitor", self.glib))}
        self.writer.delete()
        time.sleep(0.3)
        self.writer.add()
        deadline = time.monotonic() + 2
        reacting = {}
        while time.monotonic() < deadline:
            reacting = {
                "reachabilityd": any(l.startswith(f"S ") and l.endswith(REACHABLE) for l in self.subscriber.snapshot()[marks["reachabilityd"]:]),
                "netlink floor (C)": any(l.endswith(" new") for l in self.floor.snapshot()[marks["netlink floor (C)"]:]),
                "GLib GNetworkMonitor": any(l[0].isdigit() for l in self.glib.snapshot()[marks["GLib GNetworkMonitor"]:]),
            }
            if all(reacting.values()):
                break
            time.sleep(0.05)
        return reacting

    def run(self):
        options = self.options
        self.results["parameters"] = {
            "mode": "smoke" if options.smoke else "full", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "kernel": os.uname().release, "cpus": os.cpu_count(), "load_average_at_start": os.getloadavg(),
            "daemon": options.daemon, "toggles": options.toggles, "routes": options.routes,
            "idle_seconds": options.idle_seconds, "startup_routes": options.startup_routes,
            "ipv6_routes": options.ipv6_routes, "ipv6_startup_routes": options.ipv6_startup_routes, "checks": options.checks,
            "workloads": sorted(options.workloads),
        }
        wanted = options.workloads
        self.start_bus()
        self.configure_link()
        if "startup" in wanted:
            self.startup("default table", options.startup_runs)

        self.floor = Child("floor", [options.floor], log_path=f"{self.work}/floor.log")
        self.floor.wait_for_line(lambda line: line == "ready")
        self.glib, _, _ = self.spawn_glib()
        self.daemon, _ = self.spawn_daemon()
        self.subscriber = Child("subscriber", ["/usr/bin/python3", f"{options.repo}/Benchmarks/dbus-subscriber.py"], env=self.env,
                                log_path=f"{self.work}/subscriber.log")
        self.subscriber.wait_for_line(lambda line: line == "ready")
        if self.busctl_status() != REACHABLE:
            raise RuntimeError(f"daemon status is {self.busctl_status()}, expected {REACHABLE}")
        # A GLib application through the GIO module: started once the daemon serves (without it
        # GLib would fall back to its own monitor, which the check below would catch).
        self.module, _, module_type = self.spawn_glib(monitor="reachabilityd")
        if module_type != "ReachabilitydNetworkMonitor":
            raise RuntimeError(f"GIO_USE_NETWORK_MONITOR=reachabilityd gave {module_type}: the module did not load")
        self.settle()
        if "idle" in wanted:
            self.idle("after start", options.idle_seconds)
        if "latency" in wanted:
            self.latency(options.toggles)
        if "ipv6" in wanted:
            # IPv6 on rb0 (no address: none is needed to route a prefix to the link);
            # 2001:4860:4860::8888 stays unroutable, so the status does not change.
            with open("/proc/sys/net/ipv6/conf/rb0/disable_ipv6", "w") as switch:
                switch.write("0")
            self.settle()
            self.churn(options.ipv6_routes, family=6)
        if "churn" in wanted:
            for count in options.routes:
                self.churn(count)
        if "explain" in wanted:
            self.explain(options.explain_pairs, options.explain_calls)
        if "idle" in wanted:
            self.idle("after all workloads", options.idle_seconds)
        self.results["memory_after_workloads"] = {name: memory(c.pid) for name, c in self.watchers().items() if c.alive()}

        self.daemon.stop()
        self.results["daemon_exit_status"] = self.daemon.process.returncode
        for child in (self.subscriber, self.module, self.glib, self.floor):
            child.stop()
        if "startup" in wanted:
            self.startup_with_routes(options.startup_routes, 4, max(1, options.startup_runs // 2))
        if "ipv6" in wanted:
            # GLib needs most of a minute per start with 300k IPv6 routes: one run of it.
            self.startup_with_routes(options.ipv6_startup_routes, 6, max(1, options.startup_runs // 4), glib_runs=1)
        if "connectivity" in wanted:
            self.connectivity(options.checks)

    def start_router(self):
        """Moves rb1 into a router namespace of its own (GATEWAY) running the connectivity tests'
        servers (testbed/servers/connectivity-server.py); returns the check URL."""
        self.router = f"{self.netns}-router"
        state = f"{self.work}/router"
        os.makedirs(state)
        subprocess.run(["ip", "netns", "add", self.router], check=True)
        self.ip("link", "set", "rb1", "netns", self.router)
        for arguments in (["addr", "add", f"{GATEWAY}/24", "dev", "rb1"], ["link", "set", "rb1", "up"], ["link", "set", "lo", "up"]):
            subprocess.run(["ip", "-n", self.router, *arguments], check=True)
        self.check_server = Child("check-server", ["ip", "netns", "exec", self.router, "/usr/bin/python3",
                                                   f"{self.options.repo}/testbed/servers/connectivity-server.py", state],
                                  log_path=f"{self.work}/check-server.log")
        deadline = time.monotonic() + 60
        while not os.path.exists(f"{state}/ready"):
            if time.monotonic() > deadline or not self.check_server.alive():
                raise RuntimeError(f"the check server did not start: {self.check_server.snapshot()}")
            time.sleep(0.05)
        return f"http://{GATEWAY}:8080/check"

    def route_cycle(self, subscriber, answer):
        """Deletes the default route, waits for not-reachable, adds it back; returns the ms from
        the add to the subscriber's first line satisfying `answer` after it."""
        mark = len(subscriber.snapshot())
        self.writer.delete()
        subscriber.wait_for_line(lambda line: line.startswith("S ") and line.split()[2] == NOT_REACHABLE, start=mark)
        mark = len(subscriber.snapshot())
        sent_at = self.writer.add()
        _, line = subscriber.wait_for_line(answer, start=mark)
        return (int(line.split()[1]) - sent_at) / 1e6

    def connectivity(self, cycles):
        """The opt-in active check against a server in a router namespace. A cycle deletes the
        default route and adds it back; with checks on, the route's return starts a check, and the
        subscriber times `ConnectivityChanged(full)` from the route's write. The same cycles with
        checks off give the baseline the check's CPU is the excess over; RSS is read after a
        warm-up (libcurl loaded) and after every cycle's check."""
        url = self.start_router()
        # The round trip's floor: curl (the same libcurl), a fresh connection each, bound to rb0.
        floor = []
        for _ in range(max(20, cycles // 10)):
            result = subprocess.run(["curl", "-s", "-o", "/dev/null", "--interface", "rb0", "-w", "%{time_total}", url],
                                    capture_output=True, text=True, check=True)
            floor.append(float(result.stdout) * 1000)
        configuration = f"{self.work}/connectivity.conf"
        with open(configuration, "w") as out:
            out.write("")
        daemon, _ = self.spawn_daemon(["--config", configuration])
        subscriber = Child("subscriber", ["/usr/bin/python3", f"{self.options.repo}/Benchmarks/dbus-subscriber.py"], env=self.env,
                           log_path=f"{self.work}/subscriber-connectivity.log")
        subscriber.wait_for_line(lambda line: line == "ready")
        reachable = lambda line: line.startswith("S ") and line.split()[2] == REACHABLE
        try:
            # Checks off: the baseline.
            cpu_before = cpu_seconds(daemon.pid)
            off = [self.route_cycle(subscriber, reachable) for _ in range(cycles)]
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
                self.route_cycle(subscriber, full)
            rss_warm = memory(daemon.pid)
            cpu_before = cpu_seconds(daemon.pid)
            on = []
            for index in range(cycles):
                on.append(self.route_cycle(subscriber, full))
                if (index + 1) % max(1, cycles // 4) == 0:
                    log(f"connectivity: {index + 1} checks, RSS {memory(daemon.pid)['rss_kib']} KiB")
            cpu_on = cpu_seconds(daemon.pid) - cpu_before
            rss_after = memory(daemon.pid)
        finally:
            subscriber.stop()
            daemon.stop()
        self.results["connectivity"] = {
            "cycles": cycles, "round_trip_floor_ms": percentiles(floor),
            "route_to_reachable_checks_off_ms": percentiles(off), "route_to_full_ms": percentiles(on),
            "cpu_ms_per_cycle_off": cpu_off * 1000 / cycles, "cpu_ms_per_cycle_on": cpu_on * 1000 / cycles,
            "memory_checks_off": rss_off, "memory_after_warm_up": rss_warm, "memory_after_checks": rss_after,
        }
        c = self.results["connectivity"]
        log(f"connectivity: route → full p50 {c['route_to_full_ms']['p50']:.3f} ms, p99 {c['route_to_full_ms']['p99']:.3f}; "
            f"round-trip floor p50 {c['round_trip_floor_ms']['p50']:.3f}; CPU/cycle {c['cpu_ms_per_cycle_off']:.3f} → "
            f"{c['cpu_ms_per_cycle_on']:.3f} ms; RSS {rss_off['rss_kib']} → {rss_warm['rss_kib']} → {rss_after['rss_kib']} KiB")

    def explain(self, pairs, calls):
        """Explain() on a host with PAIRS more veth pairs: the daemon's CPU per call and the size."""
        batch = f"{self.work}/explain-links.batch"
        with open(batch, "w") as out:
            out.write("".join(f"link add xm{n} type veth peer name xn{n}\n" for n in range(pairs)))
        self.ip("-batch", batch)
        self.settle()
        links = len(self.ip("-o", "link", "show").stdout.splitlines())
        argv = ["busctl", f"--address={self.address}", "call", BUS_NAME, OBJECT_PATH, BUS_NAME, "Explain"]
        before = cpu_seconds(self.daemon.pid)
        sizes = [len(subprocess.run(argv, check=True, capture_output=True).stdout) for _ in range(calls)]
        cpu_ms = (cpu_seconds(self.daemon.pid) - before) * 1000 / calls
        with open(batch, "w") as out:
            out.write("".join(f"link del xm{n}\n" for n in range(pairs)))
        self.ip("-batch", batch)
        self.settle()
        self.results["explain"] = {"links": links, "calls": calls, "cpu_ms_per_call": round(cpu_ms, 3), "bytes": max(sizes)}
        log(f"explain: {links} links, {calls} calls: {cpu_ms:.2f} ms of the daemon's CPU per call, at most {max(sizes)} bytes")

    def startup_with_routes(self, count, family, runs, glib_runs=None):
        log(f"adding {count} IPv{family} routes for the start-up measurement")
        self.churn_table(count, family, "add")
        self.startup(f"{count:,} {'IPv6 ' if family == 6 else ''}routes", runs, glib_runs)
        self.churn_table(count, family, "del")

    def churn_table(self, count, family, verb):
        path = f"{self.work}/startup-{verb}-v{family}.batch"
        with open(path, "w") as out:
            for prefix in route_prefixes(count, family):
                out.write(f"route {verb} {prefix} dev rb0\n")
        subprocess.run(["ip", "-n", self.netns, "-batch", path], check=True, capture_output=True)

    def stop(self):
        for child in (self.subscriber, self.daemon, self.glib, self.floor, self.bus, self.check_server):
            if child is not None:
                child.stop()
        if self.router is not None:
            subprocess.run(["ip", "netns", "delete", self.router], capture_output=True)


# --- report --------------------------------------------------------------------------------------

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
    lines += ["| routes added + deleted | watcher | CPU-s add | CPU-s delete | on-CPU ms, add + delete (schedstat) | peak RSS MiB | still reacting |",
              "|---|---|---|---|---|---|---|"]
    for row in results["churn"]:
        routes = f"{row['routes']:,}" + (" IPv6" if row.get("family") == 6 else "")
        for name, f in row["watchers"].items():
            reacting = row["still_reacting"].get(name)
            if f.get("dead"):
                lines.append(f"| {routes} | {name} | dead | dead | – | – | no |")
                continue
            thread_ms = f.get("add_thread_cpu_ms", 0) + f.get("delete_thread_cpu_ms", 0)
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
        for key, value in (("PropertiesChanged", "C9"), ("module", "C3"), ("reachabilityd", "C0"), ("floor (C)", "C1"), ("GLib", "C2"), ("hop", "C4")):
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
        # On-CPU time from schedstat when recorded (ns precision), else utime+stime (10 ms ticks).
        if "add_thread_cpu_ms" in figures:
            return (figures["add_thread_cpu_ms"] + figures.get("delete_thread_cpu_ms", 0)) / 1000
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

    own, wanted = os.stat("/proc/self/ns/net"), os.stat(f"/run/netns/{options.netns}")
    if (own.st_dev, own.st_ino) != (wanted.st_dev, wanted.st_ino):
        sys.exit(f"bench.py must run inside namespace {options.netns} (use Benchmarks/run.sh)")
    os.makedirs(options.out, exist_ok=True)
    bench = Bench(options)
    try:
        bench.run()
    except BaseException:
        log(f"failed; logs kept in {bench.work}")
        raise
    finally:
        bench.stop()
    with open(os.path.join(options.out, "results.json"), "w") as out:
        json.dump(dict(bench.results, latency_samples_ms=bench.latency_samples), out, indent=1)
    text = table(bench.results)
    with open(os.path.join(options.out, "table.md"), "w") as out:
        out.write(text + "\n")
    print(text)
    chart(bench.results, bench.latency_samples, os.path.join(options.out, "chart.png"))
    log(f"wrote {options.out}/results.json, table.md, chart.png")
    if not options.smoke and options.workloads == set(WORKLOADS) and options.toggles == 1000:
        publish(text, bench.latency_samples, bench.results, options.repo)
    failures = [row["routes"] for row in bench.results["churn"] if not row["status_right"] or not row["still_reacting"].get("reachabilityd")]
    if failures or bench.results.get("daemon_exit_status") != 0:
        sys.exit(f"reachabilityd was wrong or silent after churn of {failures} routes, or exited "
                 f"{bench.results.get('daemon_exit_status')}; logs and batch files kept in {bench.work}")
    shutil.rmtree(bench.work, ignore_errors=True)


if __name__ == "__main__":
    main()
