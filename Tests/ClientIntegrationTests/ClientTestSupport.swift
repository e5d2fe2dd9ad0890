import Foundation
@testable import ReachabilityClient
import Synchronization
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Values collected from callbacks on other threads, read by the test with polling or awaited
/// with ``wait(timeout:until:)``.
final class Collected<Value: Sendable>: @unchecked Sendable {
    /// Guards `values` and wakes the waiters of ``wait(timeout:until:)`` on every append.
    private let condition = NSCondition()
    private var values: [Value] = []

    /// Appends one value.
    func append(_ value: Value) {
        condition.lock()
        values.append(value)
        condition.broadcast()
        condition.unlock()
    }

    /// Everything collected so far.
    var all: [Value] {
        condition.lock()
        defer { condition.unlock() }
        return values
    }

    /// Waits, without polling, until `accept` holds for the values collected so far.
    ///
    /// - Parameters:
    ///   - timeout: the deadline.
    ///   - accept: a predicate over every value collected so far; called under the lock.
    /// - Returns: whether `accept` held before the deadline.
    func wait(timeout: Duration, until accept: ([Value]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while !accept(values) {
            guard condition.wait(until: deadline) else { return accept(values) }
        }
        return true
    }
}

/// One status a client reported, with the moment the test saw it.
struct StatusReport: Sendable {
    /// When the handler ran or the line was read.
    var time: ContinuousClock.Instant
    /// The status's wire string (`reachable-via-ethernet`, `unknown`…).
    var status: String
    /// The reason (`reachabilityctl monitor` only; empty for the library's handler).
    var reason: String = ""
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

/// A host name's resolver for a manager in this process (``HostLookup``'s stand-in for
/// `getaddrinfo`): fails with "Name or service not known" until ``startResolving()``, then
/// gives `address`; remembers when it was asked.
final class ScriptedResolver: Sendable {
    private let address: String
    private let state = Mutex((resolves: false, calls: [ContinuousClock.Instant]()))

    /// A resolver that does not know the name yet, and will give `address` for it.
    init(address: String) {
        self.address = address
    }

    /// Answers one lookup; its signature is ``HostLookup``'s resolver's.
    func resolve(_ host: String) -> HostResolver.Outcome {
        let resolves = state.withLock { state in
            state.calls.append(.now)
            return state.resolves
        }
        return resolves ? .addresses([address]) : .failed("Name or service not known")
    }

    /// From now on the name resolves.
    func startResolving() {
        state.withLock { $0.resolves = true }
    }

    /// When each lookup was asked, in order.
    var calls: [ContinuousClock.Instant] {
        state.withLock { $0.calls }
    }
}

/// `reachabilityctl`'s documented exit codes.
enum Exit {
    static let timeout: Int32 = 1
    static let daemonAbsent: Int32 = 69
}

/// Where the client tests find `reachabilityctl`.
enum ClientTestPaths {
    /// `$REACHABILITYCTL_PATH`, else `reachabilityctl` beside the running test executable.
    static func controlBinary() throws -> String {
        try TestPaths.builtExecutable("reachabilityctl", overriddenBy: "REACHABILITYCTL_PATH")
    }
}

/// Parses one line of `--json` output into a dictionary.
func jsonObject(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    guard let dictionary = object as? [String: Any] else { throw HarnessError("not a JSON object: \(text)") }
    return dictionary
}

/// `reachabilityctl monitor --json` against the test's bus, each line read the moment it is
/// printed: its stdout is a FIFO that a thread of the test reads.
final class MonitorSubprocess {
    /// The running `reachabilityctl`.
    let process: ChildProcess
    /// Every line printed so far, parsed.
    let reports = Collected<StatusReport>()

    /// Starts the monitor and the thread that reads it.
    ///
    /// - Parameters:
    ///   - environment: the environment that points it at the test's bus.
    ///   - directory: where the FIFO and the monitor's stderr go.
    ///   - options: more options of `monitor`, e.g. `--source in-process`.
    ///   - namespace: a network namespace to run it in (`ip netns exec`), for the in-process source.
    /// - Throws: `HarnessError` when the FIFO or the process cannot be made.
    init(environment: [String: String], directory: TemporaryDirectory, options: [String] = [], namespace: String? = nil) throws {
        let fifo = directory.file("monitor.fifo")
        guard mkfifo(fifo, 0o600) == 0 else {
            throw HarnessError("Failed to make the FIFO \(fifo): \(String(cString: strerror(errno)))")
        }
        // Opened for reading before the monitor opens it for writing: a non-blocking open
        // succeeds without a writer, and the monitor's open then does not block posix_spawn.
        let descriptor = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw HarnessError("Failed to open the FIFO \(fifo): \(String(cString: strerror(errno)))")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        do {
            let command = [try ClientTestPaths.controlBinary(), "monitor", "--json"] + options
            let (executable, arguments) = namespace.map { ("/usr/sbin/ip", ["netns", "exec", $0] + command) } ?? (command[0], Array(command.dropFirst()))
            process = try ChildProcess(
                executable, arguments, environment: environment,
                standardOutput: fifo, standardError: directory.file("monitor.err")
            )
        } catch {
            close(descriptor)
            throw error
        }
        let reports = reports
        Thread.detachNewThread {
            Self.readLines(from: descriptor) { line in
                let object = (try? jsonObject(line)) ?? [:]
                reports.append(StatusReport(
                    time: .now, status: object["status"] as? String ?? "unparsable: \(line)", reason: object["reason"] as? String ?? ""
                ))
            }
            close(descriptor)
        }
    }

    deinit {
        process.terminate()
    }

    /// Waits until the last line printed satisfies `accept`.
    ///
    /// - Parameters:
    ///   - what: what is awaited, for the failure message.
    ///   - timeout: the deadline.
    ///   - accept: a predicate over the last line.
    /// - Throws: `HarnessError` with the last line, on timeout.
    func waitForLastLine(_ what: String, timeout: Duration = Poll.defaultTimeout, where accept: (StatusReport) -> Bool) throws {
        guard reports.wait(timeout: timeout, until: { $0.last.map(accept) ?? false }) else {
            throw HarnessError("Timed out after \(timeout) waiting for the monitor to print \(what); last line: \(String(describing: reports.all.last))")
        }
    }

    /// Reads `descriptor` until end of file (the monitor exited), calling `body` with each line.
    private static func readLines(from descriptor: Int32, _ body: (String) -> Void) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            pending += buffer[..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                body(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
    }
}
