import Dispatch
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import ReachabilityBus
import ReachabilityCore
import ReachabilityService
import TestSupport
import XCTest

/// The interface the daemon exports, as its rows assemble it, against its source of truth,
/// dbus/org.reachabilityd.Reachability1.xml: a ``ReachabilityObject`` exported on a private
/// `dbus-daemon` (no root, no daemon) and introspected. Properties, methods and signals with
/// their arguments' names, types and directions, their annotations, and their order; and the bus
/// policy's allow lines, one per method.
final class InterfaceContractTests: XCTestCase {
    func testTheExportedInterfaceMatchesTheInterfaceFile() throws {
        // Given the object exported on a private bus
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw HarnessError("dbus-daemon is missing (apt-get install dbus)") }
            throw XCTSkip("dbus-daemon is not installed")
        }
        let directory = try TemporaryDirectory(prefix: "interface-contract")
        defer { directory.remove() }
        let bus = try PrivateBus.permissive(in: directory)
        defer { bus.stop() }
        let queue = DispatchQueue(label: "org.reachabilityd.tests.interface-contract")
        let (server, client, object) = try queue.sync { () throws -> (BusConnection, BusConnection, ReachabilityObject) in
            let server = try BusConnection.open(address: bus.address, queue: queue)
            try server.startProcessing { _ in }
            try server.requestName(BusContract.busName)
            let client = try BusConnection.open(address: bus.address, queue: queue)
            try client.startProcessing { _ in }
            let snapshot = ReachabilitySnapshot(
                status: .unknown, isIPv4Reachable: false, isIPv6Reachable: false, interface: "", transport: nil, isMetered: false, reason: ""
            )
            let methods = ReachabilityMethods(
                checkAddress: { _, _ in .invalidAddress(message: "") }, checkDestination: { _, _ in .invalidAddress(message: "") },
                explain: { "" }, metrics: { "" }, checkConnectivity: { _, _, _ in false }
            )
            return (server, client, try ReachabilityObject(connection: server, snapshot: snapshot, methods: methods))
        }
        defer {
            queue.sync {
                server.close()
                client.close()
            }
        }
        let file = try InterfaceDescription(
            xml: String(contentsOfFile: TestPaths.interfaceDescription, encoding: .utf8), interface: BusContract.interface
        )

        // When it is introspected
        let introspected = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var reply: Result<String, BusError>?
        try queue.sync {
            try client.call(
                destination: BusContract.busName, path: BusContract.objectPath, interface: "org.freedesktop.DBus.Introspectable",
                member: "Introspect", returning: String.self, timeoutMicroseconds: 5_000_000
            ) { result in
                reply = result
                introspected.signal()
            }
        }
        XCTAssertEqual(introspected.wait(timeout: .now() + 5), .success, "Introspect answered")
        let exported = try InterfaceDescription(xml: try XCTUnwrap(queue.sync { reply }).get(), interface: BusContract.interface)

        // Then
        withExtendedLifetime(object) {}
        XCTAssertEqual(file.differences(from: exported), [], "\n- only in \(TestPaths.interfaceDescription)\n+ only as exported")
        XCTAssertEqual(exported.propertyOrder, file.propertyOrder, "the properties' order")
        XCTAssertEqual(exported.memberOrder, file.memberOrder, "the methods' and signals' order")
    }

    /// Every method of the XML, and no other, is one the shipped bus policy lets anyone call:
    /// a method without its line would be refused on the system bus (`AccessDenied`).
    func testTheBusPolicyAllowsEveryMethodOfTheInterface() throws {
        // Given
        let file = try InterfaceDescription(
            xml: String(contentsOfFile: TestPaths.interfaceDescription, encoding: .utf8), interface: BusContract.interface
        )
        let policy = try XMLDocument(
            contentsOf: URL(fileURLWithPath: "\(TestPaths.dbusDirectory)/org.reachabilityd.Reachability1.conf"), options: []
        )

        // When
        let allowed = try policy.nodes(forXPath: "/busconfig/policy[@context='default']/allow[@send_interface='\(BusContract.interface)']")
            .compactMap { ($0 as? XMLElement)?.attribute(forName: "send_member")?.stringValue }

        // Then
        XCTAssertEqual(Set(allowed), Set(file.methods.map(\.name)), "the methods dbus/org.reachabilityd.Reachability1.conf allows")
    }
}
