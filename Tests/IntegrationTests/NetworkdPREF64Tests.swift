import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The NAT64 prefixes systemd-networkd records from the router advertisements it handles itself
/// (`UsePREF64=yes`; the kernel then hands the option to nobody), read from a stand-in for
/// networkd on the test's bus: `Link.Describe()` answers with the JSON the test writes. networkd
/// signals nothing when an advertisement's PREF64 changes, but installs the advertisement's
/// routes again (`proto ra`, a refreshed lifetime): the test does that with `ip route replace`.
final class NetworkdPREF64Tests: DaemonTestCase {
    /// Lets root (the stand-in) own networkd's name, and anyone call it.
    override var extraBusPolicy: String? {
        """
        <policy user="root"><allow own="org.freedesktop.network1"/></policy>
        <policy context="default"><allow send_destination="org.freedesktop.network1"/></policy>
        """
    }

    /// `networkd-standin.py ADDRESS INDEX RECORD LOG`: owns `org.freedesktop.network1`, exports
    /// link INDEX, answers its `Describe()` with the file RECORD's text (read at each call,
    /// appending a line to LOG), and prints `owned`.
    private static let standIn = #"""
    import sys

    import dbus
    import dbus.service
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib


    class Link(dbus.service.Object):
        @dbus.service.method("org.freedesktop.network1.Link", in_signature="", out_signature="s")
        def Describe(self):
            with open(sys.argv[4], "a") as log:
                log.write("describe\n")
            with open(sys.argv[3]) as record:
                return record.read()


    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(sys.argv[1])
    link = Link(bus, "/org/freedesktop/network1/link/_3" + sys.argv[2])
    name = dbus.service.BusName("org.freedesktop.network1", bus)
    print("owned", flush=True)
    GLib.MainLoop().run()
    """#

    func testAPrefixThatAppearsOrGoesOnAConfiguredLinkIsLearnedAtTheAdvertisementsRouteRefresh() throws {
        // Given ra0 configured by "networkd": a global address, the default route an advertisement
        // installed (proto ra), and a record of the link without PREF64
        let netns = try netns
        try bringUpLinkLocalOnBothLinks()
        try netns.ip("addr", "add", "2001:db8:77::2/64", "dev", "ra0", "nodad")
        try netns.ip("-6", "route", "add", "default", "via", "fe80::3", "dev", "ra0", "proto", "ra", "expires", "1800")
        let index = try XCTUnwrap(try netns.ip("-o", "link", "show", "ra0").split(separator: ":").first).trimmingCharacters(in: .whitespaces)
        let directory = try XCTUnwrap(directory)
        let record = directory.file("networkd-record.json"), log = directory.file("networkd-describe.log")
        try #"{"Index":\#(index),"NDisc":{}}"#.write(toFile: record, atomically: true, encoding: .utf8)
        let script = try FaultInjection.install(Self.standIn, as: "networkd-standin.py", in: directory)
        let output = directory.file("networkd-standin.out")
        let standIn = try ChildProcess(FaultInjection.python, [script, try XCTUnwrap(bus).address, index, record, log],
                                       standardOutput: output, standardError: directory.file("networkd-standin.err"))
        defer { _ = standIn.terminate() }
        try Poll.until("the stand-in to own networkd's name", observe: { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }) {
            if let ended = standIn.poll() { throw HarnessError("networkd-standin.py ended (\(ended))") }
            return $0.hasPrefix("owned")
        }
        try startDaemon()
        let describes = { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count }
        try Poll.until("the daemon to ask about ra0", observe: describes) { $0 >= 1 }
        try waitForProperties("IPv6 through the advertised route, no NAT64 prefix") {
            $0.bool(.ipv6Reachable) == true && $0.string(.nat64Prefix) == ""
        }

        // When the next advertisement carries PREF64: networkd records it and installs the
        // advertisement's route again (no property it signals changes)
        try #"{"Index":\#(index),"NDisc":{"PREF64":[{"PrefixString":"64:ff9b::","PrefixLength":96,"ConfigProviderString":"fe80::3"}]}}"#
            .write(toFile: record, atomically: true, encoding: .utf8)
        try netns.ip("-6", "route", "replace", "default", "via", "fe80::3", "dev", "ra0", "proto", "ra", "expires", "1800")

        // Then the prefix is learned
        try waitForProperties("NAT64Prefix from networkd's record") { $0.string(.nat64Prefix) == "64:ff9b::/96" }
        XCTAssertTrue(try busctl.explain().contains("64:ff9b::/96 from systemd-networkd (RFC 8781) by fe80::3 on ra0"))

        // When a later advertisement no longer carries it
        try #"{"Index":\#(index),"NDisc":{}}"#.write(toFile: record, atomically: true, encoding: .utf8)
        try netns.ip("-6", "route", "replace", "default", "via", "fe80::3", "dev", "ra0", "proto", "ra", "expires", "1800")

        // Then it goes at once, not halfway to the end of its lifetime
        try waitForProperties("NAT64Prefix withdrawn from networkd's record") { $0.string(.nat64Prefix) == "" }
    }
}
