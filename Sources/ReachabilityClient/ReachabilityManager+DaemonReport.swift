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
    /// configuration. Asked through the system bus's hub (on a connection of its own, closed
    /// after the answer, unless a manager of the process keeps one); with no system bus but the
    /// daemon's Varlink socket there, through that socket (as ``Source/daemon`` follows it).
    ///
    /// - Parameter timeout: how long to wait for the answer.
    /// - Returns: the report's lines, each ending with a newline.
    /// - Throws: ``DaemonReportError`` when the daemon is not running, the bus cannot be reached
    ///   or the call fails.
    public static func daemonReport(timeout: Duration = .seconds(10)) async throws(DaemonReportError) -> String {
        try await daemonReport(timeout: timeout, varlinkSocket: nil)
    }

    /// ``daemonReport(timeout:)``, through the Varlink socket at `varlinkSocket` when given.
    package static func daemonReport(timeout: Duration, varlinkSocket: String?) async throws(DaemonReportError) -> String {
        try await askDaemon(BusContract.explainMethod, replying: "report", timeout: timeout, varlinkSocket: varlinkSocket)
    }

    /// The daemon's `Metrics()`: its state in Prometheus' text exposition format, the text it
    /// keeps in node_exporter's textfile-collector directory when configured. Asked as
    /// ``daemonReport(timeout:)`` is.
    ///
    /// - Parameter timeout: how long to wait for the answer.
    /// - Returns: the metrics, each line ending with a newline.
    /// - Throws: ``DaemonReportError`` as ``daemonReport(timeout:)`` does.
    public static func daemonMetrics(timeout: Duration = .seconds(10)) async throws(DaemonReportError) -> String {
        try await daemonMetrics(timeout: timeout, varlinkSocket: nil)
    }

    /// ``daemonMetrics(timeout:)``, through the Varlink socket at `varlinkSocket` when given.
    package static func daemonMetrics(timeout: Duration, varlinkSocket: String?) async throws(DaemonReportError) -> String {
        try await askDaemon(BusContract.metricsMethod, replying: "metrics", timeout: timeout, varlinkSocket: varlinkSocket)
    }

    /// The daemon's `CheckConnectivity()`: with a connectivity check configured
    /// (`[Connectivity] CheckURL=`), the check runs now for each family that has a route, and
    /// the answer is `Connectivity` once it finished (a "Retry" after logging in to a captive
    /// portal). A check in flight is shared rather than repeated, and one user starts at most one
    /// check per 10 s: inside that window the answer is the current `Connectivity`, at once, as
    /// it is without a check configured. Asked as ``daemonReport(timeout:)`` is; the change
    /// reaches every manager's handlers as usual.
    ///
    /// - Parameter timeout: how long to wait for the answer (the check takes up to the daemon's
    ///   `CheckTimeoutSec=`, twice when a failure after `full` is checked again).
    /// - Returns: the overall connectivity after the check.
    /// - Throws: ``DaemonReportError`` as ``daemonReport(timeout:)`` does.
    public static func checkConnectivity(timeout: Duration = .seconds(30)) async throws(DaemonReportError) -> Connectivity {
        try await checkConnectivity(timeout: timeout, varlinkSocket: nil)
    }

    /// ``checkConnectivity(timeout:)``, through the Varlink socket at `varlinkSocket` when given.
    package static func checkConnectivity(timeout: Duration, varlinkSocket: String?) async throws(DaemonReportError) -> Connectivity {
        let word = try await askDaemon(BusContract.checkConnectivityMethod, replying: "connectivity", timeout: timeout, varlinkSocket: varlinkSocket)
        guard let connectivity = Connectivity(rawValue: word) else {
            throw DaemonReportError(description: "\(BusContract.checkConnectivityMethod) returned an unknown connectivity \"\(word)\".")
        }
        return connectivity
    }

    /// Calls the daemon's method `member` (no arguments, one string back, named `key` on Varlink):
    /// on the Varlink socket at `varlinkSocket`, else on the one that stands in for a missing
    /// system bus (``VarlinkSource/insteadOfSystemBus``), else through the system bus's hub, as
    /// every client call to the daemon goes.
    private static func askDaemon(_ member: String, replying key: String, timeout: Duration, varlinkSocket: String?) async throws(DaemonReportError) -> String {
        if let path = varlinkSocket ?? VarlinkSource.insteadOfSystemBus {
            let reply = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[String: JSONValue], VarlinkCallFailure>, Never>) in
                DispatchQueue.global().async { continuation.resume(returning: VarlinkMethodCall.call(member, path: path, timeout: timeout)) }
            }
            switch reply {
            case .success(let parameters):
                guard case .string(let text)? = parameters[key] else { throw DaemonReportError(description: "\(member) returned an unexpected reply.") }
                return text
            case .failure(let failure):
                throw DaemonReportError(description: failure.description)
            }
        }
        let microseconds = max(UInt64(timeout.components.seconds) * 1_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000_000), 1_000)
        let hub = BusHub.hub(for: .system)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, DaemonReportError>, Never>) in
            hub.queue.async {
                hub.callDaemonOnce(member: member, returning: String.self, timeoutMicroseconds: microseconds) { reply in
                    continuation.resume(returning: meaning(of: reply, to: member, hub: hub))
                }
            }
        }
        return try outcome.get()
    }

    /// What the reply to `member` means for its caller; on the hub's queue.
    private static func meaning(of reply: Result<String, BusError>?, to member: String, hub: BusHub) -> Result<String, DaemonReportError> {
        switch reply {
        case .success(let text)?:
            return .success(text)
        case .failure(let error)? where [BusError.serviceUnknown, BusError.nameHasNoOwner].contains(error.name):
            return .failure(DaemonReportError(description: "reachabilityd is not running."))
        case .failure(let error)? where error.name == BusError.inconsistentMessage:
            return .failure(DaemonReportError(description: "\(member) returned an unexpected reply."))
        case .failure(let error)?:
            return .failure(DaemonReportError(description: "\(member) failed: \(error)"))
        case nil:
            if case .busUnavailable(let why)? = hub.state { return .failure(DaemonReportError(description: "Cannot reach the system bus: \(why).")) }
            return .failure(DaemonReportError(description: "Lost the system bus."))
        }
    }
}
