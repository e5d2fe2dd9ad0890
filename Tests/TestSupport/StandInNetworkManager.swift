import Foundation

/// A stand-in for NetworkManager on the test's private bus: a small dbus-python service that owns
/// `org.freedesktop.NetworkManager` and answers what the daemon reads of it — `GetDevices` and
/// each device's properties (`IpInterface`, `Metered`, `Dhcp4Config` "/": no DHCPv4 lease) — from
/// a JSON file; ``setMetered(_:)`` changes a device's `Metered` and has the stand-in announce it
/// (`PropertiesChanged`, from the name's owner, as NetworkManager does). Debian's real
/// NetworkManager cannot run without taking over the host's links; the daemon sees no difference
/// on the bus. Stopped at ``stop()`` or `deinit`.
package final class StandInNetworkManager {
    /// NetworkManager's bus name.
    package static let busName = "org.freedesktop.NetworkManager"

    private let process: ChildProcess
    private let configurationPath: String
    private var devices: [String: UInt32]

    /// Starts the stand-in on `bus` with one device per entry of `devices` (interface name to
    /// `NMMetered` value), and returns once it owns the name.
    package init(bus: PrivateBus, directory: TemporaryDirectory, devices: [String: UInt32]) throws {
        configurationPath = directory.file("stand-in-networkmanager.json")
        self.devices = devices
        try Self.write(devices, to: configurationPath)
        process = try FaultInjection.startStandIn(
            Self.script, as: "stand_in_networkmanager.py", owning: Self.busName, on: bus, in: directory, arguments: [configurationPath]
        )
    }

    deinit {
        stop()
    }

    /// Sets `interface`'s device's `Metered` to `value` and has the stand-in announce the change.
    package func setMetered(_ value: UInt32, of interface: String) throws {
        devices[interface] = value
        try Self.write(devices, to: configurationPath)
        process.send(SIGUSR1)
    }

    /// Stops the stand-in (SIGTERM): its name loses its owner, as when NetworkManager stops.
    package func stop() {
        _ = process.terminate()
    }

    private static func write(_ devices: [String: UInt32], to path: String) throws {
        let object = devices.keys.sorted().map { ["interface": $0, "metered": devices[$0]!] as [String: Any] }
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    private static let script = #"""
# A stand-in for NetworkManager on a private bus (the integration tests' helper).
# Usage: stand_in_networkmanager.py ADDRESS CONFIGURATION_JSON; prints "ready" once it owns the
# name; on SIGUSR1 reads the configuration again and announces each device's Metered.
import json, signal, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

NAME = "org.freedesktop.NetworkManager"
DEVICE = NAME + ".Device"
PROPERTIES = "org.freedesktop.DBus.Properties"
address, configuration = sys.argv[1], sys.argv[2]

def read():
    with open(configuration) as file:
        return json.load(file)

def path(number):
    return "/org/freedesktop/NetworkManager/Devices/%d" % (number + 1)

class Manager(dbus.service.Object):
    @dbus.service.method(NAME, in_signature="", out_signature="ao")
    def GetDevices(self):
        return dbus.Array([dbus.ObjectPath(path(n)) for n in range(len(read()))], signature="o")

class Devices(dbus.service.FallbackObject):
    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}", rel_path_keyword="rel")
    def GetAll(self, interface, rel):
        devices = read()
        number = int(rel.lstrip("/")) - 1
        if interface != DEVICE or not 0 <= number < len(devices):
            raise dbus.exceptions.DBusException("no device " + rel, name="org.freedesktop.DBus.Error.UnknownObject")
        return dbus.Dictionary({
            "IpInterface": dbus.String(devices[number]["interface"]),
            "Metered": dbus.UInt32(devices[number]["metered"]),
            "Dhcp4Config": dbus.ObjectPath("/"),
        }, signature="sv")

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as", rel_path_keyword="rel")
    def PropertiesChanged(self, interface, changed, invalidated, rel=None):
        pass

def announce():
    for number, device in enumerate(read()):
        bus.send_message(changed(path(number), device["metered"]))
    return True

def changed(at, metered):
    message = dbus.lowlevel.SignalMessage(at, PROPERTIES, "PropertiesChanged")
    message.append(DEVICE, dbus.Dictionary({"Metered": dbus.UInt32(metered)}, signature="sv"), dbus.Array([], signature="s"))
    return message

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(address)
manager = Manager(bus, "/org/freedesktop/NetworkManager")
devices = Devices(bus, "/org/freedesktop/NetworkManager/Devices")
owned = dbus.service.BusName(NAME, bus, do_not_queue=True)
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, announce)
print("ready", flush=True)
GLib.MainLoop().run()
"""#
}
