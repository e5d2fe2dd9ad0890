import Dispatch
import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// Why the daemon's report could not be had.
public struct DaemonReportError: Error, Sendable, CustomStringConvertible {
    /// One sentence, e.g. "reachabilityd is not running."
    public let description: String
}

extension ReachabilityManager {
    /// The daemon's `Explain()` report: the route the kernel picked per family and why it
    /// counts, every link (state, transport and why, addresses, ignored and why) and the
    /// configuration. Asked on a connection of its own, closed after the answer.
    ///
    /// - Parameter timeout: how long to wait for the answer.
    /// - Returns: the report's lines, each ending with a newline.
    /// - Throws: ``DaemonReportError`` when the daemon is not running, the bus cannot be reached
    ///   or the call fails.
    public static func daemonReport(timeout: Duration = .seconds(10)) async throws(DaemonReportError) -> String {
        try await askDaemon(BusContract.explainMethod, timeout: timeout)
    }

    /// The daemon's `Metrics()`: its state in Prometheus' text exposition format, the text it
    /// keeps in node_exporter's textfile-collector directory when configured. Asked on a
    /// connection of its own, closed after the answer.
    ///
    /// - Parameter timeout: how long to wait for the answer.
    /// - Returns: the metrics, each line ending with a newline.
    /// - Throws: ``DaemonReportError`` as ``daemonReport(timeout:)`` does.
    public static func daemonMetrics(timeout: Duration = .seconds(10)) async throws(DaemonReportError) -> String {
        try await askDaemon(BusContract.metricsMethod, timeout: timeout)
    }

    /// Calls the daemon's method `member` (no arguments, one string back).
    private static func askDaemon(_ member: String, timeout: Duration) async throws(DaemonReportError) -> String {
        let microseconds = max(UInt64(timeout.components.seconds) * 1_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000_000), 1_000)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, DaemonReportError>, Never>) in
            let queue = DispatchQueue(label: "org.reachabilityd.client.report")
            queue.async {
                ReportCall(queue: queue, member: member, continuation: continuation).start(timeoutMicroseconds: microseconds)
            }
        }
        return try outcome.get()
    }
}

/// One call of a text-returning method (`Explain()`, `Metrics()`) in flight; confined to its queue. It keeps the connection until the
/// answer, then closes it on a later turn of the queue (never from inside the connection's
/// own processing).
private final class ReportCall: @unchecked Sendable {
    private let queue: DispatchQueue
    private var continuation: CheckedContinuation<Result<String, DaemonReportError>, Never>?
    private var connection: BusConnection?

    private let member: String

    init(queue: DispatchQueue, member: String, continuation: CheckedContinuation<Result<String, DaemonReportError>, Never>) {
        self.queue = queue
        self.member = member
        self.continuation = continuation
    }

    func start(timeoutMicroseconds: UInt64) {
        do throws(SystemError) {
            let connection = try BusConnection.system(queue: queue)
            self.connection = connection
            try connection.startProcessing { [self] error in finish(.failure(DaemonReportError(description: "Lost the system bus: \(error.errnoDescription)"))) }
            try connection.call(
                destination: BusContract.busName, path: BusContract.objectPath, interface: BusContract.interface,
                member: member, timeoutMicroseconds: timeoutMicroseconds
            ) { [self] reply in
                if let error = reply.error {
                    let absent = [BusError.serviceUnknown, BusError.nameHasNoOwner].contains(error.name)
                    finish(.failure(DaemonReportError(description: absent ? "reachabilityd is not running." : "\(member) failed: \(error)")))
                } else if let text = try? reply.readString() {
                    finish(.success(text))
                } else {
                    finish(.failure(DaemonReportError(description: "\(member) returned an unexpected reply.")))
                }
            }
        } catch {
            finish(.failure(DaemonReportError(description: "\(error).")))
        }
    }

    private func finish(_ outcome: Result<String, DaemonReportError>) {
        continuation?.resume(returning: outcome)
        continuation = nil
        queue.async { [self] in
            connection?.close()
            connection = nil
        }
    }
}
