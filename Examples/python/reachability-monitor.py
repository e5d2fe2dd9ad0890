#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Follows reachabilityd from Python with python3-gi's Gio.DBusProxy: prints the status, then
every StatusChanged and every change of Connectivity (from PropertiesChanged).

    python3 reachability-monitor.py            # until interrupted
    python3 reachability-monitor.py --changes 2   # exit after two status changes

The system bus is $DBUS_SYSTEM_BUS_ADDRESS when set (Gio honours it), else the usual socket.
Exits 69 when reachabilityd is not running, as reachabilityctl does."""
import argparse
import sys

from gi.repository import Gio, GLib

NAME = INTERFACE = "org.reachabilityd.Reachability1"
PATH = "/org/reachabilityd/Reachability1"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=0, help="exit after this many status changes (0: never)")
    options = parser.parse_args()

    proxy = Gio.DBusProxy.new_for_bus_sync(Gio.BusType.SYSTEM, Gio.DBusProxyFlags.DO_NOT_AUTO_START, None,
                                           NAME, PATH, INTERFACE, None)
    if proxy.get_name_owner() is None:
        print("reachabilityd is not running", file=sys.stderr)
        return 69

    def show(prefix):
        status = proxy.get_cached_property("Status").unpack()
        interface = proxy.get_cached_property("Interface").unpack()
        connectivity = proxy.get_cached_property("Connectivity").unpack()
        print(f"{prefix}: {status} via {interface or '-'}, connectivity {connectivity}", flush=True)

    loop = GLib.MainLoop()
    seen = {"changes": 0}

    def on_signal(_proxy, _sender, signal, parameters):
        if signal != "StatusChanged":
            return
        # The argument is the truth; the cached properties catch up with the PropertiesChanged
        # that follows it.
        print(f"StatusChanged: {parameters.unpack()[0]}", flush=True)
        seen["changes"] += 1
        if options.changes and seen["changes"] >= options.changes:
            loop.quit()

    def on_properties(_proxy, changed, _invalidated):
        changed = changed.unpack()
        if "Connectivity" in changed:
            print(f"Connectivity: {changed['Connectivity']}", flush=True)

    proxy.connect("g-signal", on_signal)
    proxy.connect("g-properties-changed", on_properties)
    show("Status")
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
