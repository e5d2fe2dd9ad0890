#!/usr/bin/python3
"""The D-Bus hop floor: emits COUNT `org.reachabilityd.BenchFloor.Ping(t sent_ns)` signals on
$DBUS_SYSTEM_BUS_ADDRESS, 10-20 ms apart, with libdbus (dbus-python) like the subscriber.

sent_ns is CLOCK_MONOTONIC taken just before the message is built and sent; the subscriber
prints "F <received ns> <sent ns>", so emitter -> bus daemon -> subscriber latency sits beside
the daemon's. Usage: dbus-emitter.py COUNT
"""
import random
import sys
import time

import dbus
import dbus.lowlevel

PATH = "/org/reachabilityd/BenchFloor"
INTERFACE = "org.reachabilityd.BenchFloor"

bus = dbus.SystemBus()
for _ in range(int(sys.argv[1])):
    sent = time.monotonic_ns()
    message = dbus.lowlevel.SignalMessage(PATH, INTERFACE, "Ping")
    message.append(dbus.UInt64(sent))
    bus.send_message(message)
    bus.flush()
    time.sleep(random.uniform(0.010, 0.020))
