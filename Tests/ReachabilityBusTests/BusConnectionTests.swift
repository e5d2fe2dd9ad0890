import Dispatch
import Foundation
import ReachabilityBus
import SystemSupport
import TestSupport
import XCTest

/// The bus core against a real, private `dbus-daemon` (a session-type bus in a temporary
/// directory; no root needed): calls, replies, errors, matches and names.
final class BusConnectionTests: PrivateBusTestCase {
    private let queue = DispatchQueue(label: "org.reachabilityd.tests.bus")

    /// Opens a processing connection on the queue; closes it after `body`.
    private func withConnection(_ body: (BusConnection) throws -> Void) throws {
        let connection = try queue.sync { () throws -> BusConnection in
            let connection = try BusConnection.open(address: address, queue: queue)
            try connection.startProcessing { _ in }
            return connection
        }
        defer { queue.sync { connection.close() } }
        try body(connection)
    }

    /// Calls `member` of the bus daemon expecting a `Reply` and waits for the outcome.
    private func callBusDaemon<Reply: BusReplyValue & Sendable>(
        _ connection: BusConnection, member: String, destination: String = BusDriver.name, returning type: Reply.Type
    ) throws -> Result<Reply, BusError> {
        try call(
            on: connection, queue: queue, destination: destination, path: BusDriver.path, interface: BusDriver.interface, member: member,
            returning: type
        )
    }

    func testThatACallGetsItsReply() throws {
        try withConnection { connection in
            // When
            let reply = try callBusDaemon(connection, member: "GetId", returning: String.self)

            // Then: the bus's 32-hex-digit id
            XCTAssertEqual(try reply.get().count, 32, "\(reply)")
        }
    }

    func testThatAFailedCallCarriesTheBusError() throws {
        try withConnection { connection in
            // When a name nobody owns is called
            let reply = try callBusDaemon(connection, member: "GetId", destination: "org.reachabilityd.Nobody", returning: String.self)

            // Then
            guard case .failure(let error) = reply else { return XCTFail("answered: \(reply)") }
            XCTAssertEqual(error.name, BusError.serviceUnknown)
        }
    }

    func testThatATypedCallGetsItsValueOrTellsThatTheReplyIsNotOne() throws {
        try withConnection { connection in
            // An array of strings
            XCTAssertTrue(try callBusDaemon(connection, member: "ListNames", returning: [String].self).get().contains(BusDriver.name))

            // A reply that is not what the caller expects is an error, not a guess
            guard case .failure(let error) = try callBusDaemon(connection, member: "GetId", returning: UInt32.self) else {
                return XCTFail("a string read as an integer")
            }
            XCTAssertEqual(error.name, BusError.inconsistentMessage)
        }
    }

    func testThatAMatchDeliversTheSignalsItNames() throws {
        try withConnection { connection in
            // Given a match on NameOwnerChanged for one name
            let name = "org.reachabilityd.Test\(getpid())"
            let received = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var owners: [String] = []
            let slot = try queue.sync {
                try connection.addMatch(BusSignalMatch(sender: BusDriver.name, member: "NameOwnerChanged", arguments: [0: name])) { message in
                    if let owned = try? message.readString(), owned == name { owners.append(owned) }
                    received.signal()
                }
            }
            defer { withExtendedLifetime(slot) {} }

            // When the name is taken
            try queue.sync { try connection.requestName(name) }

            // Then
            XCTAssertEqual(received.wait(timeout: .now() + 5), .success, "NameOwnerChanged arrived")
            XCTAssertEqual(queue.sync { owners }, [name])
        }
    }

    func testThatANameOwnerWatchTellsTheOwnerThenEachChange() throws {
        try withConnection { connection in
            // Given a watch on a name nobody owns yet
            let name = "org.reachabilityd.Watched\(getpid())"
            let told = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var events: [NameOwnerEvent] = []
            let watch = try queue.sync {
                try NameOwnerWatch(of: name, on: connection) { event in
                    events.append(event)
                    told.signal()
                }
            }
            defer { withExtendedLifetime(watch) {} }
            XCTAssertEqual(told.wait(timeout: .now() + 5), .success, "the first lookup answered")

            // When another connection takes the name, then releases it (another: a connection's
            // own synchronous name calls may read the signal before processing resumes)
            let owner = try queue.sync { try BusConnection.open(address: address, queue: queue) }
            defer { queue.sync { owner.close() } }
            try queue.sync { try owner.requestName(name) }
            XCTAssertEqual(told.wait(timeout: .now() + 5), .success, "the taking was told")
            try queue.sync { try owner.releaseName(name) }
            XCTAssertEqual(told.wait(timeout: .now() + 5), .success, "the release was told")

            // Then: no owner, this connection, no owner again
            let seen = queue.sync { events }
            XCTAssertEqual(seen.count, 3, "\(seen)")
            XCTAssertEqual(seen.first, .initialOwner(nil))
            XCTAssertEqual(seen.dropFirst().first?.owner?.hasPrefix(":"), true, "\(seen)")
            XCTAssertEqual(seen.last, .ownerChanged(nil))
        }
    }

    func testThatAConnectionToNoBusFailsWithTheErrno() {
        // Given, When
        let result = Result { () throws(SystemError) -> BusConnection in
            try BusConnection.open(address: "unix:path=/nonexistent/reachabilityd-test-bus", queue: queue)
        }

        // Then
        guard case .failure(let error) = result else { return XCTFail("connected to a bus that does not exist") }
        XCTAssertEqual(error.errno, ENOENT, "\(error)")
        XCTAssertTrue("\(error)".contains("connect to unix:path=/nonexistent"), "\(error)")
    }
}
