"""The benchmark's harness: the processes it runs (private bus, daemon, floor reader, GLib
monitors, D-Bus subscriber, Varlink subscriber), the netlink route writer, and the state the
workloads share.

Every process started here lives in the network namespace bench.py runs in (see bench.py).
All timestamps are CLOCK_MONOTONIC in nanoseconds, which every process shares.
"""
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

from .measure import cpu_seconds

BUS_NAME = "org.reachabilityd.Reachability1"
OBJECT_PATH = "/org/reachabilityd/Reachability1"
REACHABLE = "reachable-via-ethernet"
NOT_REACHABLE = "not-reachable"
GATEWAY = "10.88.0.1"
LOCAL = "10.88.0.2/24"


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


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


# --- the harness ---------------------------------------------------------------------------------

class Harness:
    """The processes a run keeps alive, the route writer, and what the workloads record: `results`
    (written to results.json) and `latency_samples` (the latency workload's, for the chart)."""

    def __init__(self, options):
        self.options = options
        self.netns = options.netns
        self.work = tempfile.mkdtemp(prefix="rbench-")
        self.results = {"parameters": {}, "startup": {}, "latency": {}, "churn": [], "idle": {}, "connectivity": {}, "explain": {}}
        self.bus = None
        self.daemon = None
        self.floor = None
        self.sdbus_floor = None
        self.glib = None
        self.module = None
        self.subscriber = None
        self.gdbus_subscriber = None
        self.varlink_subscriber = None
        self.notify = None
        self.router = None
        self.check_server = None
        self.latency_samples = {}

    def ip(self, *arguments, check=True):
        return subprocess.run(["ip", "-n", self.netns, *arguments], check=check, capture_output=True, text=True)

    def start_bus(self):
        dbus_dir = os.path.join(self.options.repo, "dbus")
        includes = "".join(f"  <include>{dbus_dir}/{name}</include>\n" for name in sorted(os.listdir(dbus_dir)) if name.endswith(".conf"))
        with open(os.path.join(self.options.repo, "scripts/private-system-bus.conf.in")) as template:
            config = (template.read().replace("@SOCKET_PATH@", f"{self.work}/system_bus_socket")
                      .replace("@OWNER_USER@", "root").replace("@INCLUDES@", includes))
        # The subscribers scale row connects thousands of clients as root (a real host's come
        # from many users; the stock per-user limit is 256).
        config = config.replace("</busconfig>", '  <limit name="max_connections_per_user">4096</limit>\n'
                                '  <limit name="max_completed_connections">4096</limit>\n</busconfig>')
        with open(f"{self.work}/bus.conf", "w") as out:
            out.write(config)
        self.bus = Child("dbus-daemon", ["dbus-daemon", f"--config-file={self.work}/bus.conf", "--nofork", "--print-address=1"],
                         log_path=f"{self.work}/bus.log")
        self.bus.wait_for_line(lambda line: line.startswith("unix:"))
        self.address = f"unix:path={self.work}/system_bus_socket"
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address, GIO_USE_NETWORK_MONITOR="netlink")
        # The daemon's runtime directory, as its unit gives it: it serves the Varlink socket there.
        self.runtime = f"{self.work}/runtime"
        os.makedirs(self.runtime, exist_ok=True)
        self.varlink_socket = f"{self.runtime}/org.reachabilityd.Reachability"

    def spawn_daemon(self, arguments=(), environment=None):
        """Starts the daemon (with `environment` added to its environment) serving the Varlink
        socket in its runtime directory, as the unit runs it; returns (child, seconds from spawn
        to READY=1)."""
        if self.notify is None:
            self.notify = NotifySocket(f"{self.work}/notify")
        mark = self.notify.mark()
        env = dict(self.env, NOTIFY_SOCKET=self.notify.path, RUNTIME_DIRECTORY=self.runtime, **(environment or {}))
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

    def settle(self, timeout=300.0, children=None):
        """Waits until no watcher's (or no one of `children`'s) CPU time moved for 0.6 s."""
        deadline = time.monotonic() + timeout
        last, still = None, 0
        while time.monotonic() < deadline:
            now = tuple(cpu_seconds(child.pid) for child in (children or self.watchers().values()) if child.alive())
            still = still + 1 if now == last else 0
            if still >= 3:
                return
            last = now
            time.sleep(0.2)
        log("warning: watchers still busy at the settle deadline")

    def spawn_subscriber(self, log_name, script="dbus-subscriber.py"):
        """Starts Benchmarks/`script` (dbus-subscriber.py, or gdbus-subscriber.py) and waits until it listens."""
        child = Child(script.removesuffix(".py"), ["/usr/bin/python3", f"{self.options.repo}/Benchmarks/{script}"], env=self.env,
                      log_path=f"{self.work}/{log_name}")
        child.wait_for_line(lambda line: line == "ready")
        return child

    def spawn_varlink_subscriber(self, log_name):
        """Starts Benchmarks/varlink-subscriber.py on the daemon's socket and waits until it has the state."""
        child = Child("varlink-subscriber", ["/usr/bin/python3", f"{self.options.repo}/Benchmarks/varlink-subscriber.py", self.varlink_socket],
                      log_path=f"{self.work}/{log_name}")
        child.wait_for_line(lambda line: line == "ready")
        return child

    def start_watchers(self):
        """The floor reader, GLib's monitor, the daemon and its D-Bus and Varlink subscribers, then
        a GLib application through the GIO module; returns once all of them are idle."""
        self.floor = Child("floor", [self.options.floor], log_path=f"{self.work}/floor.log")
        self.floor.wait_for_line(lambda line: line == "ready")
        self.glib, _, _ = self.spawn_glib()
        self.daemon, _ = self.spawn_daemon()
        self.subscriber = self.spawn_subscriber("subscriber.log")
        self.varlink_subscriber = self.spawn_varlink_subscriber("varlink-subscriber.log")
        # The C sd-bus floor: the least a truthful daemon does per change (Benchmarks/sdbus-floor.c).
        self.sdbus_floor = Child("sdbus-floor", [self.options.sdbus_floor], env=self.env, log_path=f"{self.work}/sdbus-floor.log")
        self.sdbus_floor.wait_for_line(lambda line: line == "ready")
        if self.busctl_status() != REACHABLE:
            raise RuntimeError(f"daemon status is {self.busctl_status()}, expected {REACHABLE}")
        # A GLib application through the GIO module: started once the daemon serves (without it
        # GLib would fall back to its own monitor, which the check below would catch).
        self.module, _, module_type = self.spawn_glib(monitor="reachabilityd")
        if module_type != "ReachabilitydNetworkMonitor":
            raise RuntimeError(f"GIO_USE_NETWORK_MONITOR=reachabilityd gave {module_type}: the module did not load")
        # Its baseline: the same kind of process (python3-gi, GDBus) subscribed without the module.
        self.gdbus_subscriber = self.spawn_subscriber("gdbus-subscriber.log", script="gdbus-subscriber.py")
        self.settle()

    def toggle_default_route(self, toggles):
        """`toggles` default-route writes (delete, add, ...) 10-20 ms apart, the route back at the
        end; returns [(sent_at ns, "del"|"add")], then waits 0.5 s for the watchers' events."""
        writes = []
        for index in range(toggles):
            writes.append((self.writer.delete(), "del") if index % 2 == 0 else (self.writer.add(), "add"))
            time.sleep(random.uniform(0.010, 0.020))
        if toggles % 2 == 1:
            self.writer.add()
        time.sleep(0.5)
        return writes

    def stop(self):
        for child in (self.subscriber, self.gdbus_subscriber, self.varlink_subscriber, self.daemon, self.sdbus_floor, self.glib, self.floor, self.bus, self.check_server):
            if child is not None:
                child.stop()
        if self.router is not None:
            subprocess.run(["ip", "netns", "delete", self.router], capture_output=True)

