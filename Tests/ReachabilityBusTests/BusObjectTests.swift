import Dispatch
import Foundation
import ReachabilityBus
import SystemSupport
import TestSupport
import XCTest

/// An exported ``BusObject`` against a real, private `dbus-daemon` (a session-type bus in a
/// temporary directory; no root needed): a method answered at once, one answered later, a
/// property read, container properties both ways, and a signal. The object serves an interface
/// of the test's own at a test name and path.
final class BusObjectTests: PrivateBusTestCase {
    private let queue = DispatchQueue(label: "org.reachabilityd.tests.bus-object")
    private let serviceName = "org.reachabilityd.TestObject\(getpid())"
    private let path = "/org/reachabilityd/TestObject"
    private let interfaceName = "org.reachabilityd.TestObject"
    /// `Changed(s state)`.
    private let changed = BusSignal("Changed", [("state", "s")])
    private var server: BusConnection?
    private var client: BusConnection?

    override func setUpWithError() throws {
        try super.setUpWithError()
        (server, client) = try queue.sync { () throws -> (BusConnection, BusConnection) in
            let server = try BusConnection.open(address: address, queue: queue)
            try server.startProcessing { _ in }
            try server.requestName(serviceName)
            let client = try BusConnection.open(address: address, queue: queue)
            try client.startProcessing { _ in }
            return (server, client)
        }
    }

    override func tearDown() {
        queue.sync {
            server?.close()
            client?.close()
        }
        server = nil
        client = nil
        super.tearDown()
    }

    /// Every string of a reply body, in order.
    private struct Strings: BusReplyValue, Sendable, Equatable {
        var values: [String] = []

        init(reading reply: BusMessage) throws(SystemError) {
            while let string = try? reply.readString() { values.append(string) }
        }
    }

    /// A property's value as `Get` returns it: a variant holding a string.
    private struct StringVariant: BusReplyValue, Sendable {
        let value: String

        init(reading reply: BusMessage) throws(SystemError) {
            try reply.enterVariant(holding: "s")
            value = try reply.readString()
        }
    }

    /// Calls `member` of the test object and waits for the outcome.
    private func call<Reply: BusReplyValue & Sendable>(
        _ member: String, interface: String? = nil, arguments: [String] = [], returning type: Reply.Type
    ) throws -> Result<Reply, BusError> {
        try call(
            on: try XCTUnwrap(client), queue: queue, destination: serviceName, path: path, interface: interface ?? interfaceName, member: member,
            arguments: arguments, returning: type
        )
    }

    /// Calls `member` of the test object and waits for the strings it returns, or its error.
    private func call(_ member: String, interface: String? = nil, arguments: [String] = []) throws -> Result<[String], BusError> {
        try call(member, interface: interface, arguments: arguments, returning: Strings.self).map(\.values)
    }

    /// Exports the test interface at the test path: `methods`, a `Status` property and the `Changed` signal.
    private func export(methods: [BusMethod], status: String = "reachable") throws -> BusObject {
        try queue.sync {
            try BusObject(
                on: try XCTUnwrap(server), path: path,
                interface: BusInterface(name: interfaceName, properties: [("Status", "s")], methods: methods, signals: [changed]),
                properties: { $0 == "Status" ? .string(status) : nil }
            )
        }
    }

    func testThatAMethodAnsweredLaterRepliesWhenItsAnswerIsReady() throws {
        // Given a method that answers 200 ms after the call, from a timer on the queue
        nonisolated(unsafe) var started = 0
        let object = try export(methods: [
            .replyingLater("Later", returns: [("answer", "s")]) { [queue] _, reply in
                started += 1
                queue.asyncAfter(deadline: .now() + .milliseconds(200)) { reply(.values([.string("later")])) }
            },
        ])
        defer { withExtendedLifetime(object) {} }

        // When it is called
        let began = DispatchTime.now()
        let answer = try call("Later")

        // Then the caller gets the answer given later, not before it
        XCTAssertEqual(try answer.get(), ["later"])
        XCTAssertGreaterThanOrEqual(DispatchTime.now().uptimeNanoseconds - began.uptimeNanoseconds, 200_000_000)
        XCTAssertEqual(queue.sync { started }, 1)
    }

    func testThatAMethodAnsweredAtOnceRepliesWithItsValuesOrItsError() throws {
        // Given Check answering its argument back, and an error for "bad"
        let invalid = BusError(name: "org.reachabilityd.Error.InvalidAddress", message: "not an address")
        let object = try export(methods: [
            .replying("Check", takes: [("address", "s")], returns: [("status", "s"), ("address", "s")]) { call in
                guard let text = try? call.arguments.readString() else { return .invalidArguments }
                if text == "bad" { return .error(invalid) }
                return .values([.string("checked"), .string(text)])
            },
        ])
        defer { withExtendedLifetime(object) {} }

        // Then
        XCTAssertEqual(try call("Check", arguments: ["192.0.2.1"]).get(), ["checked", "192.0.2.1"])
        XCTAssertEqual(try call("Check", arguments: ["bad"]), .failure(invalid))
        // Arguments of other types than the row declares are refused before the handler runs
        guard case .failure(let error) = try call("Check") else { return XCTFail("Check without its argument answered") }
        XCTAssertEqual(error.name, "org.freedesktop.DBus.Error.InvalidArgs")
    }

    func testThatAPropertyIsReadThroughTheObject() throws {
        // Given
        let object = try export(methods: [], status: "not-reachable")
        defer { withExtendedLifetime(object) {} }

        // When Get(Status) is called
        let status = try call("Get", interface: BusDriver.propertiesInterface, arguments: [interfaceName, "Status"], returning: StringVariant.self)

        // Then
        XCTAssertEqual(try status.get().value, "not-reachable")
    }

    func testThatAnEmittedSignalReachesAMatchWithoutARearmByTheSender() throws {
        // Given a match on the object's Changed
        let object = try export(methods: [])
        let received = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var statuses: [String] = []
        let slot = try queue.sync {
            try XCTUnwrap(client).addMatch(BusSignalMatch(path: path, interface: interfaceName, member: changed.name)) { message in
                if let status = try? message.readString() { statuses.append(status) }
                received.signal()
            }
        }
        defer { withExtendedLifetime((object, slot)) {} }
        // (The match is in place once a later call on the client is answered.)
        _ = try call("Ping", interface: "org.freedesktop.DBus.Peer")

        // When the object emits it
        try queue.sync { try object.emit(changed, [.string("reachable")]) }

        // Then
        XCTAssertEqual(received.wait(timeout: .now() + 5), .success, "Changed arrived")
        XCTAssertEqual(queue.sync { statuses }, ["reachable"])
    }

    func testThatContainerPropertiesRoundTripThroughGetAllAndPropertiesChanged() throws {
        // Given an interface of one property of each container type, and their values
        let interface = BusInterface(name: "org.reachabilityd.TestContainers", properties: [("Names", "as"), ("Options", "a{sv}"), ("Interfaces", "aa{sv}")])
        let values: [String: BusValue] = [
            "Names": .strings(["192.0.2.53", "2001:db8::53"]),
            "Options": .dictionary(["Name": .string("eth0"), "Up": .boolean(true), "Index": .unsignedInteger(2), "Empty": .strings([])]),
            "Interfaces": .dictionaries([
                ["Name": .string("eth0"), "DNS": .strings(["192.0.2.53"]), "Route": .dictionary(["Gateway": .string("192.0.2.1")])],
                [:],
            ]),
        ]
        let object = try queue.sync {
            try BusObject(on: try XCTUnwrap(server), path: path, interface: interface, properties: { values[$0] })
        }
        let changed = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var announced: [String: BusValue] = [:]
        let slot = try queue.sync {
            try XCTUnwrap(client).addMatch(
                BusSignalMatch(path: path, interface: BusDriver.propertiesInterface, member: "PropertiesChanged")
            ) { message in
                _ = try? message.readString()
                announced = (try? message.readPropertyDictionary()) ?? [:]
                changed.signal()
            }
        }
        defer { withExtendedLifetime((object, slot)) {} }
        _ = try call("Ping", interface: "org.freedesktop.DBus.Peer")

        // When they are read with GetAll, and announced with PropertiesChanged
        let all = try call("GetAll", interface: BusDriver.propertiesInterface, arguments: [interface.name], returning: [String: BusValue].self)
        try queue.sync { try object.emitPropertiesChanged(["Names", "Options", "Interfaces"].map { (name: $0, value: values[$0]!) }) }

        // Then both carry the values as served
        XCTAssertEqual(try all.get(), values)
        XCTAssertEqual(changed.wait(timeout: .now() + 5), .success, "PropertiesChanged arrived")
        XCTAssertEqual(queue.sync { announced }, values)
    }
}
