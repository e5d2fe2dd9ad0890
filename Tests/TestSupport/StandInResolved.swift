import Foundation

/// A stand-in for systemd-resolved on the test's private bus: a small dbus-python service that
/// owns `org.freedesktop.resolve1` and answers the reads the daemon makes of resolved — the
/// manager's `DNS` and `FallbackDNS` (`a(iiay)`) and each link's `DefaultRoute` (`b`) — from a
/// JSON file read at every call, so a test changes what it says with ``configure(servers:defaultRoutes:)``.
/// Debian's real resolved cannot run without starting a host service; the daemon sees no
/// difference on the bus. Stopped at ``stop()`` or `deinit`.
package final class StandInResolved {
    /// resolved's bus name.
    package static let busName = "org.freedesktop.resolve1"

    private let process: ChildProcess
    private let configurationPath: String

    /// Starts the stand-in on `bus` with `servers` and `defaultRoutes`, and returns once it
    /// owns the name.
    ///
    /// - Parameters:
    ///   - bus: the test's bus (the stand-in is let own the name on it).
    ///   - directory: where its script, configuration and output go.
    ///   - servers: the `DNS` entries, `(link, address)`: link 0 for a global server.
    ///   - defaultRoutes: each link's `DefaultRoute`; a link left out has no link object.
    package init(bus: PrivateBus, directory: TemporaryDirectory, servers: [(link: Int32, address: String)], defaultRoutes: [Int32: Bool] = [:]) throws {
        try bus.allowStandIn(for: Self.busName)
        let script = try FaultInjection.install(Self.script, as: "stand_in_resolved.py", in: directory)
        configurationPath = directory.file("stand-in-resolved.json")
        let output = directory.file("stand-in-resolved.out")
        try Self.write(servers: servers, defaultRoutes: defaultRoutes, to: configurationPath)
        let process = try ChildProcess(FaultInjection.python, [script, bus.address, configurationPath], standardOutput: output, standardError: output)
        self.process = process
        try Poll.until("the stand-in resolved to own its name", observe: { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }) { printed in
            if let ended = process.poll() { throw HarnessError("stand_in_resolved.py ended (\(ended)): \(printed)") }
            return printed.contains("ready")
        }
    }

    deinit {
        stop()
    }

    /// Changes what the stand-in answers from its next call on.
    package func configure(servers: [(link: Int32, address: String)], defaultRoutes: [Int32: Bool] = [:]) throws {
        try Self.write(servers: servers, defaultRoutes: defaultRoutes, to: configurationPath)
    }

    /// Stops the stand-in (SIGTERM): its name loses its owner, as when resolved stops.
    package func stop() {
        _ = process.terminate()
    }

    private static func write(servers: [(link: Int32, address: String)], defaultRoutes: [Int32: Bool], to path: String) throws {
        let object: [String: Any] = [
            "dns": servers.map { ["link": $0.link, "address": $0.address] as [String: Any] },
            "default_routes": Dictionary(uniqueKeysWithValues: defaultRoutes.map { (String($0.key), $0.value) }),
        ]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    private static let script = #"""
# A stand-in for systemd-resolved on a private bus (the integration tests' helper).
# Usage: stand_in_resolved.py ADDRESS CONFIGURATION_JSON; prints "ready" once it owns the name.
import json, socket, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

NAME = "org.freedesktop.resolve1"
PROPERTIES = "org.freedesktop.DBus.Properties"
address, configuration = sys.argv[1], sys.argv[2]

def read():
    with open(configuration) as file:
        return json.load(file)

def servers(entries):
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
            return servers(read()["dns"])
        if interface == NAME + ".Manager" and name == "FallbackDNS":
            return servers([])
        raise unknown(name)

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
