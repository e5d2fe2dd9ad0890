#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Asks g_network_monitor_get_default() what any GLib application would get (the tests run it
with the module from the build tree: GIO_EXTRA_MODULES=.build/gio, and GIO_USE_NETWORK_MONITOR
naming reachabilityd or GLib's netlink monitor, to print both answers side by side).

    monitor-query.py state                 "<type> available=0|1 metered=0|1 connectivity=<nick>"
    monitor-query.py can-reach HOST PORT   "reachable", or "error <domain> <code> <message>"
                                           (GNetworkAddress, resolving names as GLib does)
    monitor-query.py connect HOST PORT     "connected", or the error as above: what the
                                           application then gets (GSocketClient, 5 s timeout)
"""
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402


def main(arguments):
    monitor = Gio.NetworkMonitor.get_default()
    if arguments[:1] == ["state"]:
        connectivity = monitor.get_connectivity().value_nick
        print(f"{type(monitor).__gtype__.name} available={int(monitor.get_network_available())} "
              f"metered={int(monitor.get_network_metered())} connectivity={connectivity}")
        return 0
    if arguments[:1] in (["can-reach"], ["connect"]) and len(arguments) == 3:
        destination = Gio.NetworkAddress.new(arguments[1], int(arguments[2]))
        try:
            if arguments[0] == "can-reach":
                monitor.can_reach(destination, None)
                print("reachable")
            else:
                client = Gio.SocketClient.new()
                client.set_timeout(5)
                client.connect(destination, None).close(None)
                print("connected")
        except GLib.Error as error:
            code = Gio.IOErrorEnum(error.code).value_nick if error.domain == "g-io-error-quark" else error.code
            print(f"error {error.domain} {code} {error.message}")
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
