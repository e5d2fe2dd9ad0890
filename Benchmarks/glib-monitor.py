#!/usr/bin/python3
"""A GLib application: g_network_monitor_get_default() in its own process.

Prints "ready <CLOCK_MONOTONIC ns> <backend type>" once the monitor exists, then
"<CLOCK_MONOTONIC ns> <available 0|1>" for every `network-changed` signal, flushed at once.
The benchmark and the tests (GioModuleTests) choose the monitor with GIO_USE_NETWORK_MONITOR:
netlink (GLib's own, so that GLib does not try NetworkManager or the portal on the real system
bus) or reachabilityd (the GIO module, from GIO_MODULE_DIR).
"""
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

monitor = Gio.NetworkMonitor.get_default()
print(f"ready {time.monotonic_ns()} {type(monitor).__gtype__.name}", flush=True)


def changed(_monitor, available):
    print(f"{time.monotonic_ns()} {int(available)}", flush=True)


monitor.connect("network-changed", changed)
loop = GLib.MainLoop()
GLib.unix_signal_add(GLib.PRIORITY_HIGH, 15, loop.quit)  # SIGTERM
GLib.unix_signal_add(GLib.PRIORITY_HIGH, 2, loop.quit)  # SIGINT
loop.run()
sys.exit(0)
