#!/usr/bin/python3
"""The Varlink client: a separate process subscribed to the daemon's socket, beside the D-Bus one.

    varlink-subscriber.py SOCKET

Connects to SOCKET, calls org.reachabilityd.Reachability.Subscribe with "more" (plain socket and
json, no Varlink package: the leanest reader, as libdbus is the lighter D-Bus binding), prints
"ready" once the first reply (the current state) arrived, then for every reply whose status
differs from the one before:
  "V <CLOCK_MONOTONIC ns> <status> <generation>"
taken once the reply is parsed (as the D-Bus subscriber's time is taken in its handler), flushed
at once. The replies of changes that leave the status as it was print nothing: StatusChanged
does not announce them either. SIGTERM ends it.
"""
import json
import signal
import socket
import sys
import time

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect(sys.argv[1])
connection.sendall(json.dumps({"method": "org.reachabilityd.Reachability.Subscribe", "more": True}).encode() + b"\0")
pending, status = b"", None
while True:
    data = connection.recv(65536)
    if not data:
        sys.exit("varlink-subscriber: the daemon closed the connection")
    pending += data
    *messages, pending = pending.split(b"\0")
    for message in messages:
        reply = json.loads(message)
        if "error" in reply:
            sys.exit(f"varlink-subscriber: {reply['error']}")
        state = reply["parameters"]["state"]
        if status is None:
            print("ready", flush=True)
        elif state["status"] != status:
            print(f"V {time.monotonic_ns()} {state['status']} {state['generation']}", flush=True)
        status = state["status"]
