import Foundation
@testable import ReachabilityClient
import Synchronization
import XCTest

/// Values collected from callbacks on other threads, read by the test with polling.
final class Collected<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    /// Appends one value.
    func append(_ value: Value) {
        values.withLock { $0.append(value) }
    }

    /// Everything collected so far.
    var all: [Value] {
        values.withLock { $0 }
    }
}

extension DaemonTestCase {
    /// A manager talking to the test's private bus.
    ///
    /// - Parameter target: what it reports on.
    /// - Returns: a stopped manager.
    /// - Throws: `HarnessError` when the bus is missing.
    func makeManager(_ target: MonitoredTarget = .machine) throws -> ReachabilityManager {
        guard let bus else { throw HarnessError("PrivateBus missing: set-up did not finish") }
        return ReachabilityManager(target: target, endpoint: .address(bus.address))
    }

    /// Waits until `collected` holds exactly `expected`.
    ///
    /// - Parameters:
    ///   - collected: the values delivered so far.
    ///   - expected: the awaited sequence.
    /// - Throws: `HarnessError` with what was delivered, on timeout or when more arrived.
    func waitForDeliveries<Value: Sendable & Equatable>(_ collected: Collected<Value>, _ expected: [Value]) throws {
        try Poll.until("deliveries \(expected)", observe: { collected.all }) { delivered in
            if delivered.count > expected.count || delivered != Array(expected.prefix(delivered.count)) {
                throw HarnessError("delivered \(delivered), expected \(expected)")
            }
            return delivered == expected
        }
    }

    /// Waits until `manager.status` is `status`.
    ///
    /// - Returns: how long it took.
    @discardableResult
    func waitForManager(_ manager: ReachabilityManager, status: ReachabilityStatus, timeout: Duration = Poll.defaultTimeout) throws -> Duration {
        let start = ContinuousClock.now
        try Poll.until("manager status \(status.rawValue)", timeout: timeout, observe: { manager.status }) { $0 == status }
        return ContinuousClock.now - start
    }

    /// Runs `reachabilityctl ARGUMENTS…` against the test's bus.
    ///
    /// - Parameters:
    ///   - arguments: the subcommand and its options.
    ///   - timeout: how long it may take.
    /// - Returns: how it ended and what it printed.
    func reachabilityctl(_ arguments: [String], timeout: Duration = .seconds(15)) throws -> CommandResult {
        try Command.run(ClientTestPaths.controlBinary(), arguments, environment: try controlEnvironment(), timeout: timeout)
    }

    /// The environment that points `reachabilityctl` at the test's bus.
    func controlEnvironment() throws -> [String: String] {
        guard let bus else { throw HarnessError("PrivateBus missing: set-up did not finish") }
        return ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "LANG": "C"]
    }
}

/// Where the client tests find `reachabilityctl`.
enum ClientTestPaths {
    /// `$REACHABILITYCTL_PATH`, else `reachabilityctl` beside the running test executable.
    static func controlBinary() throws -> String {
        let path: String
        if let configured = ProcessInfo.processInfo.environment["REACHABILITYCTL_PATH"], !configured.isEmpty {
            path = configured
        } else {
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            path = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("reachabilityctl").path
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError("No reachabilityctl at \(path): build the reachabilityctl product or set REACHABILITYCTL_PATH")
        }
        return path
    }
}

/// Parses one line of `--json` output into a dictionary.
func jsonObject(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    guard let dictionary = object as? [String: Any] else { throw HarnessError("not a JSON object: \(text)") }
    return dictionary
}
