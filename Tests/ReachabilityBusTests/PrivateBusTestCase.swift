import Foundation
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
}
