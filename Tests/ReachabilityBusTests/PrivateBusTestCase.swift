import Dispatch
import Foundation
import ReachabilityBus
import TestSupport
import XCTest

/// A test case with a real, private `dbus-daemon` of its own (a session-type bus in a
/// temporary directory that lets anyone own and call anything; no root needed), started
/// before each test and stopped after it.
class PrivateBusTestCase: XCTestCase {
    private var directory: TemporaryDirectory?
    private var bus: PrivateBus?
    /// The private bus's address, to connect to.
    private(set) var address = ""

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw HarnessError("dbus-daemon is missing (apt-get install dbus)") }
            throw XCTSkip("dbus-daemon is not installed")
        }
        let directory = try TemporaryDirectory(prefix: "bus-tests")
        self.directory = directory
        let bus = try PrivateBus.permissive(in: directory)
        self.bus = bus
        address = bus.address
    }

    override func tearDown() {
        bus?.stop()
        directory?.remove()
    }

    /// Calls `member` on `connection` (whose queue is `queue`) expecting a `Reply`, and waits
    /// for the outcome.
    func call<Reply: BusReplyValue & Sendable>(
        on connection: BusConnection, queue: DispatchQueue, destination: String, path: String, interface: String, member: String,
        arguments: [String] = [], returning type: Reply.Type
    ) throws -> Result<Reply, BusError> {
        let replied = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<Reply, BusError>?
        try queue.sync {
            try connection.call(
                destination: destination, path: path, interface: interface, member: member, arguments: arguments, returning: type,
                timeoutMicroseconds: 5_000_000
            ) { result in
                outcome = result
                replied.signal()
            }
        }
        XCTAssertEqual(replied.wait(timeout: .now() + 5), .success, "\(member) answered")
        return try XCTUnwrap(queue.sync { outcome })
    }
}
