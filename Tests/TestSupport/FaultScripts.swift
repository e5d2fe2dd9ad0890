/// The Python helpers of the fault tests, kept here so that the test target has no resources.
/// `FaultInjection.install` writes one into the test's directory; run it with
/// `FaultInjection.python`.
package enum FaultScripts {
    /// Hostile and busy D-Bus clients (dbus-python, and a hand-made connection for bytes no
    /// library would send): `hostile ADDRESS`, `burst ADDRESS COUNT OFFSET`,
    /// `probe ADDRESS STOP_FILE`, `hold`, `hold-destination`, `flood`, `subscribe`, `forge ADDRESS KIND [ARGUMENT]`.
    /// Each prints JSON.
    package static let busClient = #"""
# Hostile and busy clients of reachabilityd on a private bus (the integration tests' helper).
# Usage: bus_client.py hostile ADDRESS | burst ADDRESS COUNT OFFSET | probe ADDRESS STOP_FILE |
#        hold ADDRESS DESTINATION (asks once, prints the reply, stays connected until killed) |
#        hold-destination ADDRESS DESTINATION (the same with CheckDestination) |
#        flood ADDRESS SECONDS IN_FLIGHT OFFSET (distinct addresses, IN_FLIGHT calls pending at all times) |
#        forge ADDRESS departure VICTIM | networkd | networkmanager (a unicast signal to the daemon that
#        looks like the bus driver's, networkd's or NetworkManager's; then two Explain calls as fences)
# Each prints one JSON object.
import json, os, socket, struct, sys, time
import dbus

NAME = "org.reachabilityd.Reachability1"
PATH = "/org/reachabilityd/Reachability1"
IFACE = NAME
STATUSES = {"unknown", "not-reachable", "reachable-via-ethernet", "reachable-via-wifi", "reachable-via-wwan", "reachable-via-other"}
PROPERTIES = "org.freedesktop.DBus.Properties"

def call(bus, interface, member, signature, args, timeout=5.0):
    try:
        reply = bus.call_blocking(NAME, PATH, interface, member, signature, args, timeout=timeout)
        return {"reply": [str(v) for v in (reply if isinstance(reply, tuple) else [reply])]}
    except dbus.exceptions.DBusException as error:
        return {"error": error.get_dbus_name(), "message": (error.get_dbus_message() or "")[:200]}

def hostile(address):
    bus = dbus.bus.BusConnection(address)
    cases = {
        "wrong-type": (IFACE, "CheckAddress", "i", [42]),
        "missing-argument": (IFACE, "CheckAddress", "", []),
        "extra-argument": (IFACE, "CheckAddress", "ss", ["10.77.0.9", "x"]),
        "explain-with-argument": (IFACE, "Explain", "s", ["x"]),
        "unknown-method": (IFACE, "Bogus", "", []),
        "unknown-method-on-peer": ("org.freedesktop.DBus.Peer", "Bogus", "", []),
        "unknown-interface": ("org.example.Nope", "CheckAddress", "s", ["10.77.0.9"]),
        "unknown-property": (PROPERTIES, "Get", "ss", [IFACE, "Bogus"]),
        "unknown-property-interface": (PROPERTIES, "Get", "ss", ["org.example.Nope", "Status"]),
        "set-property": (PROPERTIES, "Set", "ssv", [IFACE, "Status", dbus.String("reachable-via-wifi", variant_level=1)]),
        "getall-wrong-type": (PROPERTIES, "GetAll", "i", [1]),
        "one-mebibyte-string": (IFACE, "CheckAddress", "s", ["1" * (1 << 20)]),
        "non-ascii-address": (IFACE, "CheckAddress", "s", ["10.77.0.9\u00e9\u2603"]),
    }
    results = {}
    for case, (interface, member, signature, args) in cases.items():
        started = time.monotonic()
        result = call(bus, interface, member, signature, args)
        result["seconds"] = time.monotonic() - started
        results[case] = result
    results["raw-valid"] = raw_check_address(address, b"10.77.0.9")
    results["raw-invalid-utf8"] = raw_check_address(address, b"10.77.\xff\xfe.9")
    results["raw-embedded-nul"] = raw_check_address(address, b"10.77.0.9\0evil")
    results["after"] = call(bus, IFACE, "CheckAddress", "s", ["10.77.0.9"])
    print(json.dumps(results))

def pad(buffer, alignment):
    buffer += b"\0" * ((alignment - len(buffer) % alignment) % alignment)

def raw_message(serial, fields, body, signature):
    # A little-endian D-Bus method call marshalled by hand, so that no library validates it.
    message = bytearray(b"l\x01\x00\x01") + struct.pack("<II", len(body), serial) + b"\0\0\0\0"
    for code, kind, value in fields + ([(8, "g", signature)] if signature else []):
        pad(message, 8)
        message += bytes([code, 1]) + kind.encode() + b"\0"
        if kind == "g":
            message += bytes([len(value)]) + value + b"\0"
        else:
            message += struct.pack("<I", len(value)) + value + b"\0"
    struct.pack_into("<I", message, 12, len(message) - 16)
    pad(message, 8)
    return bytes(message) + body

def raw_check_address(address, text):
    # CheckAddress with a string argument of arbitrary bytes, over a hand-made connection:
    # "answered" (a reply or error from the daemon arrived), "disconnected" or "timeout".
    path = address.split("path=", 1)[1].split(",")[0]
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(3)
    connection.connect(path)
    connection.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
    if not connection.recv(4096).startswith(b"OK"):
        return {"outcome": "auth-failed"}
    connection.sendall(b"BEGIN\r\n")
    connection.sendall(raw_message(1, [(1, "o", b"/org/freedesktop/DBus"), (2, "s", b"org.freedesktop.DBus"),
                                       (3, "s", b"Hello"), (6, "s", b"org.freedesktop.DBus")], b"", b""))
    body = struct.pack("<I", len(text)) + text + b"\0"
    connection.sendall(raw_message(2, [(1, "o", PATH.encode()), (2, "s", IFACE.encode()), (3, "s", b"CheckAddress"),
                                       (6, "s", NAME.encode())], body, b"s"))
    received = b""
    try:
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return {"outcome": "disconnected", "received": len(received)}
            received += chunk
            if b"reachable-via-" in received or b"org.reachabilityd.Error" in received:
                return {"outcome": "answered", "received": len(received)}
    except socket.timeout:
        return {"outcome": "timeout", "received": len(received)}
    except ConnectionResetError:
        return {"outcome": "disconnected", "received": len(received)}

EXPECTED = [
    ("10.77.0.9", ["reachable-via-ethernet", "ra0"]),
    ("198.51.100.7", ["not-reachable", ""]),
    ("2001:db8:1::9", ["not-reachable", ""]),
    ("not-an-address", "org.reachabilityd.Error.InvalidAddress"),
]

def burst(address, count, offset):
    # COUNT CheckAddress calls in a row, each checked against EXPECTED.
    bus = dbus.bus.BusConnection(address)
    wrong, examples = 0, []
    started = time.monotonic()
    for i in range(int(count)):
        text, expected = EXPECTED[(i + int(offset)) % len(EXPECTED)]
        result = call(bus, IFACE, "CheckAddress", "s", [text])
        if result.get("reply", result.get("error")) != expected:
            wrong += 1
            if len(examples) < 5:
                examples.append({"address": text, "got": result})
    print(json.dumps({"calls": int(count), "wrong": wrong, "examples": examples, "seconds": time.monotonic() - started}))

def nth_address(offset, i):
    # A caller's i-th address: IPv4 and IPv6 in turn, each new for the first 131,072 calls
    # (IPv4 then wraps; IPv6 stays new) and a valid literal for any i.
    number = i // 2
    if i % 2 == 0:
        return f"10.{200 + int(offset)}.{(number >> 8) & 255}.{number & 255}"
    return f"2001:db8:{200 + int(offset):x}::{(number >> 16) & 0xffff:x}:{number & 0xffff:x}"

def distinct(address, count, offset):
    # COUNT CheckAddress calls, each for an address not asked before (IPv4 and IPv6 in turn,
    # none of them routed but on ra0's link: all not-reachable).
    bus = dbus.bus.BusConnection(address)
    wrong, examples = 0, []
    started = time.monotonic()
    for i in range(int(count)):
        text = nth_address(offset, i)
        result = call(bus, IFACE, "CheckAddress", "s", [text])
        if result.get("reply") != ["not-reachable", ""]:
            wrong += 1
            if len(examples) < 5:
                examples.append({"address": text, "got": result})
    print(json.dumps({"calls": int(count), "wrong": wrong, "examples": examples, "seconds": time.monotonic() - started}))

def probe(address, stop_path):
    # Get(Status) every 20 ms until STOP_FILE exists; reports the latencies in seconds.
    bus = dbus.bus.BusConnection(address)
    latencies, failures = [], []
    while not os.path.exists(stop_path):
        started = time.monotonic()
        result = call(bus, PROPERTIES, "Get", "ss", [IFACE, "Status"])
        latencies.append(time.monotonic() - started)
        if "reply" not in result:
            failures.append(result)
        time.sleep(0.02)
    latencies.sort()
    print(json.dumps({"gets": len(latencies), "failures": failures[:5],
                      "max": latencies[-1] if latencies else None,
                      "median": latencies[len(latencies) // 2] if latencies else None}))

def flood(address, seconds, in_flight, offset):
    # Keeps IN_FLIGHT CheckAddress calls pending (every address new) for SECONDS; counts the
    # answers: right (a status and an interface), busy (org.reachabilityd.Error.Busy), other.
    from gi.repository import GLib
    import dbus.mainloop.glib
    bus = dbus.bus.BusConnection(address, mainloop=dbus.mainloop.glib.DBusGMainLoop())
    proxy = bus.get_object(NAME, PATH, introspect=False)
    counts = {"right": 0, "busy": 0, "other": 0, "examples": []}
    deadline = time.monotonic() + float(seconds)
    loop = GLib.MainLoop()
    state = {"next": 0, "pending": 0}

    def send():
        number = state["next"]
        state["next"] += 1
        state["pending"] += 1
        text = nth_address(offset, number)
        proxy.CheckAddress(text, dbus_interface=IFACE, reply_handler=lambda *reply: done("right" if len(reply) == 2 and str(reply[0]) in STATUSES else "other", reply),
                           error_handler=lambda error: done("busy" if error.get_dbus_name() == "org.reachabilityd.Error.Busy" else "other", error), timeout=30)

    def done(kind, detail):
        state["pending"] -= 1
        counts[kind] += 1
        if kind == "other" and len(counts["examples"]) < 3:
            counts["examples"].append(str(detail)[:200])
        if kind == "busy" and "busy_message" not in counts:
            counts["busy_message"] = detail.get_dbus_message()
        if time.monotonic() < deadline:
            send()
        elif state["pending"] == 0:
            loop.quit()

    for _ in range(int(in_flight)):
        send()
    loop.run()
    print(json.dumps(counts))

def subscribe(address):
    # Prints one JSON line per StatusChanged: {"status": S, "seconds": CLOCK_MONOTONIC at arrival};
    # first {"ready": true} once the match is in place (a call to the bus after AddMatch).
    from gi.repository import GLib
    import dbus.mainloop.glib
    bus = dbus.bus.BusConnection(address, mainloop=dbus.mainloop.glib.DBusGMainLoop())
    bus.add_signal_receiver(lambda status: print(json.dumps({"status": str(status), "seconds": time.monotonic()}), flush=True),
                            signal_name="StatusChanged", dbus_interface=IFACE, path=PATH)
    bus.get_name_owner(NAME)
    print(json.dumps({"ready": True}), flush=True)
    GLib.MainLoop().run()

def hold(address, *destinations, member="CheckAddress"):
    # A caller whose watches last: the daemon forgets a caller's watches when it disconnects.
    # One line per destination asked about, in order, with the caller's unique name.
    bus = dbus.bus.BusConnection(address)
    for destination in destinations:
        print(json.dumps(dict(call(bus, IFACE, member, "s", [destination]), unique=bus.get_unique_name())), flush=True)
    while True:
        time.sleep(3600)

def forge(address, kind, victim=""):
    # Signals any connection can send to the daemon's unique name: the bus delivers a unicast
    # signal whatever the match rules say. The daemon handles its messages in order, so when the
    # second Explain is answered it has handled the signal and whatever reply a call the signal
    # made it send got (the bus answers a call to a name nobody owns at once).
    bus = dbus.bus.BusConnection(address)
    properties = dbus.Dictionary({"IpInterface": dbus.String("ra0", variant_level=1)}, signature="sv")
    signal = {
        "departure": ("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", "sss", [victim, victim, ""]),
        "networkd": ("/org/freedesktop/network1/link/_32", PROPERTIES, "PropertiesChanged", "sa{sv}as",
                     ["org.freedesktop.network1.Link", properties, []]),
        "networkmanager": ("/org/freedesktop/NetworkManager/Devices/1", PROPERTIES, "PropertiesChanged", "sa{sv}as",
                           ["org.freedesktop.NetworkManager.Device", properties, []]),
    }[kind]
    message = dbus.lowlevel.SignalMessage(*signal[:3])
    message.set_destination(bus.get_name_owner(NAME))
    message.append(*signal[4], signature=signal[3])
    bus.send_message(message)
    fences = [call(bus, IFACE, "Explain", "", []) for _ in range(2)]
    print(json.dumps({"sent": kind, "fences": ["error" not in fence for fence in fences]}), flush=True)

if __name__ == "__main__":
    {"forge": forge, "hostile": hostile, "burst": burst, "distinct": distinct, "probe": probe, "hold": hold,
     "hold-destination": lambda address, *destinations: hold(address, *destinations, member="CheckDestination"), "flood": flood, "subscribe": subscribe}[sys.argv[1]](*sys.argv[2:])
"""#

    /// Forged rtnetlink datagrams sent to the daemon's netlink sockets from a user process:
    /// `forge.py PID COUNT monitor|query`, run inside the daemon's namespace. Prints one JSON
    /// object.
    package static let netlinkForger = #"""
# Sends forged rtnetlink datagrams from a user process to reachabilityd's netlink sockets.
# Run inside the daemon's namespace: forge.py PID COUNT monitor|query
# "monitor" is the daemon's subscribed socket, "query" its request/response socket (no groups). The
# datagrams alternate RTM_NEWLINK (ra0 up with carrier) and RTM_NEWROUTE (default via
# 10.77.0.1 dev ra0, table main): they claim a default route that does not exist.
# Prints {"ports": [[port, groups], ...], "target": port, "sent": n, "refused": n (queue full),
# "rejected": n (ECONNREFUSED: the daemon's socket only accepts the kernel)}.
import json, os, socket, struct, sys

pid, count, which = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
inodes = set()
for descriptor in os.listdir(f"/proc/{pid}/fd"):
    try:
        target = os.readlink(f"/proc/{pid}/fd/{descriptor}")
    except OSError:
        continue
    if target.startswith("socket:["):
        inodes.add(int(target[8:-1]))
ports = []
with open("/proc/net/netlink") as table:
    next(table)
    for line in table:
        fields = line.split()
        if fields[1] == "0" and int(fields[9]) in inodes:
            ports.append((int(fields[2]) & 0xffffffff, int(fields[3], 16)))
# The monitor is subscribed to links (RTNLGRP_LINK, bit 0); the neighbour socket only to RTNLGRP_NEIGH.
chosen = [port for port, groups in ports if (groups & 1 != 0) == (which == "monitor") and (which == "monitor" or groups == 0)]
if len(chosen) != 1:
    print(json.dumps({"ports": ports, "error": f"expected one {which} socket"}))
    sys.exit(1)

def attribute(kind, payload):
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * ((4 - length % 4) % 4)

def message(kind, flags, body, sequence):
    return struct.pack("=IHHII", 16 + len(body), kind, flags, sequence, 0) + body

RTM_NEWLINK, RTM_NEWROUTE = 16, 24
IFF_UP, IFF_RUNNING, IFF_LOWER_UP = 0x1, 0x40, 0x10000
NLM_F_CREATE_EXCL = 0x600
index = socket.if_nametoindex("ra0")
link = struct.pack("=BxHiII", socket.AF_UNSPEC, 1, index, IFF_UP | IFF_RUNNING | IFF_LOWER_UP, 0xffffffff) \
    + attribute(3, b"ra0\0")
route = struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, 254, 3, 0, 1, 0) \
    + attribute(15, struct.pack("=I", 254)) + attribute(5, socket.inet_aton("10.77.0.1")) \
    + attribute(4, struct.pack("=i", index))
sender = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
sender.bind((0, 0))
sent = refused = rejected = 0
for number in range(count):
    datagram = message(RTM_NEWLINK, 0, link, number) if number % 2 == 0 \
        else message(RTM_NEWROUTE, NLM_F_CREATE_EXCL, route, number)
    # A full receive queue refuses at once (EAGAIN) rather than blocking the sender.
    try:
        sender.sendto(datagram, socket.MSG_DONTWAIT, (chosen[0], 0))
        sent += 1
    except BlockingIOError:
        refused += 1
    # A socket connected to the kernel (port 0) refuses unicast from user processes.
    except ConnectionRefusedError:
        rejected += 1
print(json.dumps({"ports": ports, "target": chosen[0], "sent": sent, "refused": refused, "rejected": rejected}))
"""#
}
