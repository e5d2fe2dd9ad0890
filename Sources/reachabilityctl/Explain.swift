import ArgumentParser
import Dispatch
import Foundation
import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// `reachabilityctl explain`: the daemon's own report of what it looked at.
struct Explain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the daemon's report: the route picked per family, every link and why, the configuration.",
        discussion: "Calls the daemon's Explain method. \(ExitStatus.help)"
    )

    @Option(name: .long, help: ArgumentHelp("How long to wait for the daemon's answer.", valueName: "seconds"))
    var answerTimeout: Double = 10

    func run() async throws {
        switch await DaemonMethod.call(BusContract.explainMethod, timeout: answerTimeout) {
        case .success(let report):
            Output.line(report.hasSuffix("\n") ? String(report.dropLast()) : report)
        case .failure(let message):
            throw failure(message, code: ExitStatus.daemonUnavailable)
        }
    }
}

/// One method call to the daemon, on a connection of its own.
enum DaemonMethod {
    /// The outcome: the string the method returned, or why there is none.
    enum Outcome: Sendable {
        case success(String)
        case failure(String)
    }

    /// Calls `member` (no arguments, one string back) on the daemon's object over the system bus.
    ///
    /// - Parameters:
    ///   - member: the method's name.
    ///   - timeout: how long to wait for the reply, in seconds.
    /// - Returns: the returned string, or a message saying why there is none.
    static func call(_ member: String, timeout: Double) async -> Outcome {
        await withCheckedContinuation { continuation in
            let queue = DispatchQueue(label: "org.reachabilityd.ctl.call")
            queue.async {
                let call = PendingCall(queue: queue, continuation: continuation)
                call.start(member: member, timeoutMicroseconds: UInt64(max(timeout, 0.001) * 1_000_000))
            }
        }
    }
}

/// A call in flight; confined to its queue. It keeps the connection until the answer, then
/// closes it on a later turn of the queue (never from inside the connection's own processing).
private final class PendingCall: @unchecked Sendable {
    private let queue: DispatchQueue
    private var continuation: CheckedContinuation<DaemonMethod.Outcome, Never>?
    private var connection: BusConnection?

    init(queue: DispatchQueue, continuation: CheckedContinuation<DaemonMethod.Outcome, Never>) {
        self.queue = queue
        self.continuation = continuation
    }

    func start(member: String, timeoutMicroseconds: UInt64) {
        do throws(SystemError) {
            let connection = try BusConnection.system(queue: queue)
            self.connection = connection
            try connection.startProcessing { [self] error in finish(.failure("Lost the system bus: \(error.errnoDescription)")) }
            try connection.call(
                destination: BusContract.busName, path: BusContract.objectPath, interface: BusContract.interface,
                member: member, timeoutMicroseconds: timeoutMicroseconds
            ) { [self] reply in
                if let error = reply.error {
                    let absent = [BusError.serviceUnknown, BusError.nameHasNoOwner].contains(error.name)
                    finish(.failure(absent ? "reachabilityd is not running." : "\(member) failed: \(error)"))
                } else if let text = try? reply.readString() {
                    finish(.success(text))
                } else {
                    finish(.failure("\(member) returned an unexpected reply."))
                }
            }
        } catch {
            finish(.failure("\(error)."))
        }
    }

    private func finish(_ outcome: DaemonMethod.Outcome) {
        continuation?.resume(returning: outcome)
        continuation = nil
        queue.async { [self] in
            connection?.close()
            connection = nil
        }
    }
}
