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
        let microseconds = max(UInt64(timeout.components.seconds) * 1_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000_000), 1_000)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, DaemonReportError>, Never>) in
            let queue = DispatchQueue(label: "org.reachabilityd.client.report")
            queue.async {
                ReportCall(queue: queue, continuation: continuation).start(timeoutMicroseconds: microseconds)
            }
        }
        return try outcome.get()
    }
}

/// One `Explain()` call in flight; confined to its queue. It keeps the connection until the
/// answer, then closes it on a later turn of the queue (never from inside the connection's
/// own processing).
private final class ReportCall: @unchecked Sendable {
    private let queue: DispatchQueue
    private var continuation: CheckedContinuation<Result<String, DaemonReportError>, Never>?
    private var connection: BusConnection?

    init(queue: DispatchQueue, continuation: CheckedContinuation<Result<String, DaemonReportError>, Never>) {
        self.queue = queue
        self.continuation = continuation
    }

    func start(timeoutMicroseconds: UInt64) {
        let member = BusContract.explainMethod
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
