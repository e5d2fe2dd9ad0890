#!/usr/bin/python3
"""A plain GDBus subscriber: the GIO module's application without the module.

The same kind of process as Benchmarks/glib-monitor.py with the module (python3-gi, GLib's main
loop, GDBus: its worker thread reads the bus, the signal is dispatched in the main context), so
that "GLib application through the module" minus this row is the module's own cost. Connects to
$DBUS_SYSTEM_BUS_ADDRESS, prints "ready", then for every signal from the daemon's object:
  "S <CLOCK_MONOTONIC ns> <status>"  for StatusChanged
  "P <CLOCK_MONOTONIC ns> <names>"   for PropertiesChanged (comma-separated property names)
flushed at once. SIGTERM ends it.
"""
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

PATH = "/org/reachabilityd/Reachability1"
INTERFACE = "org.reachabilityd.Reachability1"

bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)


def status_changed(_bus, _sender, _path, _interface, _signal, parameters):
    print(f"S {time.monotonic_ns()} {parameters[0]}", flush=True)


def properties_changed(_bus, _sender, _path, _interface, _signal, parameters):
    # The names only, read in place: unpack() would convert every value (Interfaces too) to
    # Python, CPU the other watchers of the same change would wait for.
    changed = parameters.get_child_value(1)
    names = {changed.get_child_value(entry).get_child_value(0).get_string() for entry in range(changed.n_children())}
    names |= set(parameters.get_child_value(2).get_strv())
    print(f"P {time.monotonic_ns()} {','.join(sorted(names))}", flush=True)


bus.signal_subscribe(None, INTERFACE, "StatusChanged", PATH, None, Gio.DBusSignalFlags.NONE, status_changed)
bus.signal_subscribe(None, "org.freedesktop.DBus.Properties", "PropertiesChanged", PATH, INTERFACE,
                     Gio.DBusSignalFlags.NONE, properties_changed)
# A round trip to the bus daemon guarantees the matches (sent before it) are installed.
bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", None, None,
              Gio.DBusCallFlags.NONE, -1, None)
print("ready", flush=True)
loop = GLib.MainLoop()
GLib.unix_signal_add(GLib.PRIORITY_HIGH, 15, loop.quit)  # SIGTERM
GLib.unix_signal_add(GLib.PRIORITY_HIGH, 2, loop.quit)  # SIGINT
loop.run()
sys.exit(0)
