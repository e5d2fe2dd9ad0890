import Foundation

/// A stand-in for systemd-resolved on the test's private bus: a small dbus-python service that
/// owns `org.freedesktop.resolve1` and answers the reads the daemon makes of resolved — the
/// manager's `DNS` and `FallbackDNS` (`a(iiay)`) and each link's `DefaultRoute` (`b`) — and the
/// lookups it makes of resolved (`ResolveHostname`, recorded in ``calls``), from a JSON file read
/// at every call, so a test changes what it says with ``configure(servers:defaultRoutes:hostnames:)``.
/// Debian's real resolved cannot run without starting a host service; the daemon sees no
/// difference on the bus. Stopped at ``stop()`` or `deinit`.
package final class StandInResolved {
    /// resolved's bus name.
    package static let busName = "org.freedesktop.resolve1"

    private let process: ChildProcess
    private let configurationPath: String
    private let callsPath: String

    /// Starts the stand-in on `bus` with `servers` and `defaultRoutes`, and returns once it
    /// owns the name.
    ///
    /// - Parameters:
    ///   - bus: the test's bus (the stand-in is let own the name on it).
    ///   - directory: where its script, configuration and output go.
    ///   - servers: the `DNS` entries, `(link, address)`: link 0 for a global server.
    ///   - defaultRoutes: each link's `DefaultRoute`; a link left out has no link object.
    ///   - hostnames: the addresses `ResolveHostname` answers per name (IPv6 ones for family
    ///     `AF_INET6`, IPv4 ones for `AF_INET`); a name left out, or without an address of the
    ///     family, answers `org.freedesktop.resolve1.NoSuchRR`.
    package init(
        bus: PrivateBus, directory: TemporaryDirectory, servers: [(link: Int32, address: String)], defaultRoutes: [Int32: Bool] = [:],
        hostnames: [String: [String]] = [:]
    ) throws {
        configurationPath = directory.file("stand-in-resolved.json")
        callsPath = directory.file("stand-in-resolved.calls")
        try Self.write(servers: servers, defaultRoutes: defaultRoutes, hostnames: hostnames, to: configurationPath)
        process = try FaultInjection.startStandIn(
            Self.script, as: "stand_in_resolved.py", owning: Self.busName, on: bus, in: directory, arguments: [configurationPath, callsPath]
        )
    }

    deinit {
        stop()
    }

    /// Changes what the stand-in answers from its next call on.
    package func configure(servers: [(link: Int32, address: String)], defaultRoutes: [Int32: Bool] = [:], hostnames: [String: [String]] = [:]) throws {
        try Self.write(servers: servers, defaultRoutes: defaultRoutes, hostnames: hostnames, to: configurationPath)
    }

    /// The `ResolveHostname` calls made so far, one "ResolveHostname IFINDEX NAME FAMILY FLAGS"
    /// line each.
    package var calls: [String] {
        ((try? String(contentsOfFile: callsPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Stops the stand-in (SIGTERM): its name loses its owner, as when resolved stops.
    package func stop() {
        _ = process.terminate()
    }

    private static func write(servers: [(link: Int32, address: String)], defaultRoutes: [Int32: Bool], hostnames: [String: [String]], to path: String) throws {
        let object: [String: Any] = [
            "dns": servers.map { ["link": $0.link, "address": $0.address] as [String: Any] },
            "default_routes": Dictionary(uniqueKeysWithValues: defaultRoutes.map { (String($0.key), $0.value) }),
            "hostnames": hostnames,
        ]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    private static let script = #"""
# A stand-in for systemd-resolved on a private bus (the integration tests' helper).
# Usage: stand_in_resolved.py ADDRESS CONFIGURATION_JSON CALLS; prints "ready" once it owns the
# name, and appends a line to CALLS for each ResolveHostname call.
import json, socket, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

NAME = "org.freedesktop.resolve1"
PROPERTIES = "org.freedesktop.DBus.Properties"
address, configuration, calls = sys.argv[1], sys.argv[2], sys.argv[3]

def read():
    with open(configuration) as file:
        return json.load(file)

def link_addresses(entries):
    def entry(server):
        family = socket.AF_INET6 if ":" in server["address"] else socket.AF_INET
        packed = socket.inet_pton(family, server["address"])
        return dbus.Struct((dbus.Int32(server["link"]), dbus.Int32(family), dbus.Array([dbus.Byte(b) for b in packed], signature="y")))
    return dbus.Array([entry(server) for server in entries], signature="(iiay)")

def unknown(what):
    return dbus.exceptions.DBusException(what, name="org.freedesktop.DBus.Error.UnknownProperty")

class Manager(dbus.service.Object):
    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface == NAME + ".Manager" and name == "DNS":
            return link_addresses(read()["dns"])
        if interface == NAME + ".Manager" and name == "FallbackDNS":
            return link_addresses([])
        raise unknown(name)

    @dbus.service.method(NAME + ".Manager", in_signature="isit", out_signature="a(iiay)st")
    def ResolveHostname(self, ifindex, name, family, flags):
        with open(calls, "a") as file:
            print("ResolveHostname", int(ifindex), name, int(family), int(flags), file=file, flush=True)
        wanted = socket.AF_INET6 if family == socket.AF_INET6 else socket.AF_INET
        found = [{"link": int(ifindex), "address": a} for a in read()["hostnames"].get(name, []) if (":" in a) == (wanted == socket.AF_INET6)]
        if not found:
            raise dbus.exceptions.DBusException("'" + name + "' does not have any RR of the requested type", name=NAME + ".NoSuchRR")
        return (link_addresses(found), name, dbus.UInt64(0))

class Links(dbus.service.FallbackObject):
    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v", rel_path_keyword="path")
    def Get(self, interface, name, path):
        routes = read()["default_routes"]
        link = path.lstrip("/")
        index = link[2:] if link.startswith("_3") else ""
        if index not in routes:
            raise dbus.exceptions.DBusException("no link " + path, name="org.freedesktop.DBus.Error.UnknownObject")
        if interface == NAME + ".Link" and name == "DefaultRoute":
            return dbus.Boolean(routes[index])
        raise unknown(name)

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(address)
manager = Manager(bus, "/org/freedesktop/resolve1")
links = Links(bus, "/org/freedesktop/resolve1/link")
owned = dbus.service.BusName(NAME, bus, do_not_queue=True)
print("ready", flush=True)
GLib.MainLoop().run()
"""#
}
