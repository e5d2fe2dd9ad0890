#!/usr/bin/python3
"""The D-Bus client: a separate process subscribed to the daemon's signals.

dbus-python (libdbus) on a GLib main loop: libdbus is the lighter of the two stock Python
bindings (GDBus parses and dispatches more per message). Connects to $DBUS_SYSTEM_BUS_ADDRESS,
then prints "ready", and for every signal from the daemon's object:
  "S <CLOCK_MONOTONIC ns> <status>"  for StatusChanged
  "P <CLOCK_MONOTONIC ns> <names>"   for PropertiesChanged (comma-separated property names)
  "C <CLOCK_MONOTONIC ns> <value>"   for ConnectivityChanged
and for the C sd-bus floor's (sdbus-floor.c) StatusChanged:
  "Q <CLOCK_MONOTONIC ns> <status>"
flushed at once. SIGTERM ends it.
"""
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

PATH = "/org/reachabilityd/Reachability1"
INTERFACE = "org.reachabilityd.Reachability1"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()


def status_changed(status):
    print(f"S {time.monotonic_ns()} {status}", flush=True)


def connectivity_changed(connectivity):
    print(f"C {time.monotonic_ns()} {connectivity}", flush=True)


def properties_changed(interface, changed, invalidated):
    names = sorted(set(map(str, changed.keys())) | set(map(str, invalidated)))
    print(f"P {time.monotonic_ns()} {','.join(names)}", flush=True)


def floor_status_changed(status):
    print(f"Q {time.monotonic_ns()} {status}", flush=True)


bus.add_signal_receiver(floor_status_changed, signal_name="StatusChanged", dbus_interface="org.reachabilityd.BenchFloor",
                        path="/org/reachabilityd/BenchFloor")
bus.add_signal_receiver(status_changed, signal_name="StatusChanged", dbus_interface=INTERFACE, path=PATH)
bus.add_signal_receiver(connectivity_changed, signal_name="ConnectivityChanged", dbus_interface=INTERFACE, path=PATH)
bus.add_signal_receiver(properties_changed, signal_name="PropertiesChanged",
                        dbus_interface="org.freedesktop.DBus.Properties", path=PATH)
# A round trip to the bus daemon guarantees the matches are installed before "ready".
bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus").GetId(dbus_interface="org.freedesktop.DBus")
print("ready", flush=True)
loop = GLib.MainLoop()
GLib.unix_signal_add(GLib.PRIORITY_HIGH, 15, loop.quit)
GLib.unix_signal_add(GLib.PRIORITY_HIGH, 2, loop.quit)
loop.run()
sys.exit(0)
