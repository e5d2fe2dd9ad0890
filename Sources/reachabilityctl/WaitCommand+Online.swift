// What `reachabilityctl wait` needs to feed network-online.target (reachabilityd-wait-online.service):
// the early give-up without carrier, the lines the journal keeps, and saying where the wait
// stood when systemd stops it.
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityClient
import ReachabilityCore
import ReachabilityEngine
import RTNetlink
import Synchronization
import SystemSupport

extension WaitCommand {
    /// `--interface`: comma-separated names or globs; empty for any.
    static func interfaces(_ arguments: ParsedArguments) throws(UsageError) -> [String] {
        guard let text = arguments.values["interface"] else { return [] }
        let names = text.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
        guard !names.isEmpty else { throw UsageError(message: "Give at least one interface name or glob to '--interface'.") }
        return names
    }

    /// The success line of `--verbose`: "Online after 3.2 s via eth0 (reachable-via-ethernet)."
    static func onlineLine(_ snapshot: ReachabilitySnapshot, after seconds: Double) -> String {
        "Online after \(WaitClock.format(seconds)) s" + (snapshot.interface.isEmpty ? "" : " via \(snapshot.interface)")
            + " (\(snapshot.status.rawValue))."
    }

    /// Where the wait stood, for the line said when it ends unsatisfied: "not-reachable (no default route in any table)".
    static func standing(_ snapshot: ReachabilitySnapshot) -> String {
        "\(snapshot.status.rawValue) (\(snapshot.reason))"
    }
}

/// The monotonic clock of a wait.
enum WaitClock {
    /// Seconds on `CLOCK_MONOTONIC`.
    static func now() -> Double { clockSeconds(CLOCK_MONOTONIC) }

    /// Seconds to one decimal: "3.2", "120.0".
    static func format(_ seconds: Double) -> String {
        let tenths = Int((max(seconds, 0) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// `--carrier-timeout`: watches the links' carrier (a link dump every half second on a netlink
/// route socket of its own, as the daemon reads them) and returns once no link that could lead
/// out (``NoCarrierGiveUp/countsCarrier(of:in:configuration:)``, under the daemon's
/// configuration files) has had carrier for that long.
final class CarrierWatch: Sendable {
    /// How long without carrier before giving up.
    let seconds: Double
    /// Set once the watch gave up (read after the wait to tell why it ended).
    let gaveUp = Mutex(false)

    /// A watch giving up after `seconds` without carrier.
    init(seconds: Double) {
        self.seconds = seconds
    }

    /// Whether any link that could lead out has carrier; nil when the kernel could not be asked
    /// (the watch then never gives up).
    static func anyCarrier(using client: NetlinkQueryClient, configuration: DaemonConfiguration) -> Bool? {
        guard let dump = try? client.dump({ NetlinkRequest.dumpLinks(sequence: $0) }) else { return nil }
        return NoCarrierGiveUp.anyCarrier(in: LinkDescriptions.of(dump: dump.messages), configuration: configuration)
    }

    /// Returns when the rule gives up; cancelled, it returns at the next poll.
    func run(start: Double) async {
        guard let client = try? NetlinkQueryClient() else {
            Output.write("reachabilityctl: Cannot read the links' carrier (netlink); --carrier-timeout is ignored.\n", to: STDERR_FILENO)
            return await Self.sleepUntilCancelled()
        }
        // The daemon's ignore rules (a configuration that does not parse: the defaults, its errors logged).
        let configuration = ConfigurationFiles.clientFiles.load() ?? .default
        var rule = NoCarrierGiveUp(seconds: seconds, start: start)
        while !Task.isCancelled {
            // A dump that fails counts as carrier: never give up on a guess.
            if rule.observe(anyCarrier: Self.anyCarrier(using: client, configuration: configuration) ?? true, at: WaitClock.now()) {
                gaveUp.withLock { $0 = true }
                return
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Sleeps until the task is cancelled.
    private static func sleepUntilCancelled() async {
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
    }

    /// The line said when it gave up.
    func line(after elapsed: Double, _ snapshot: ReachabilitySnapshot) -> String {
        "Gave up after \(WaitClock.format(elapsed)) s: no link that could lead out has had carrier for \(WaitClock.format(seconds)) s; "
            + "\(WaitCommand.standing(snapshot))."
    }
}

/// systemd stopping the wait (a shorter `TimeoutStartSec=`, shutdown) sends SIGTERM: say where
/// the wait stood, in the same form as a timeout, then end by the signal as if not caught.
final class TerminationNotice {
    private let source: any DispatchSourceSignal

    /// Catches SIGTERM from now on; the line names how long the wait ran and `manager`'s state.
    init(manager: ReachabilityManager, start: Double) {
        signal(SIGTERM, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: DispatchQueue(label: "org.reachabilityd.ctl.sigterm"))
        source.setEventHandler {
            let elapsed = WaitClock.now() - start
            Output.write(Output.errorPrefix + "reachabilityctl: Stopped (SIGTERM) after \(WaitClock.format(elapsed)) s: \(WaitCommand.standing(manager.snapshot)).\n",
                         to: STDERR_FILENO)
            // End by the signal from this very thread, unblocked here (Dispatch's threads block
            // signals). Sent to the process instead, the signal source could read it again before
            // a thread able to take it did: under load one wait wrote its line 98 times.
            signal(SIGTERM, SIG_DFL)
            var terminate = sigset_t()
            sigemptyset(&terminate)
            sigaddset(&terminate, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &terminate, nil)
            raise(SIGTERM)
            _exit(128 + SIGTERM)
        }
        source.resume()
    }

    /// Stops catching SIGTERM.
    func cancel() {
        source.cancel()
        signal(SIGTERM, SIG_DFL)
    }
}

extension Output {
    /// `<3>` when stderr is the journal (a unit's `ExecStart=`), so that the line is an error
    /// entry there (`journalctl -p err`); "" on a terminal or a pipe.
    static let errorPrefix = stderrIsTheJournal() ? "<\(LogLevel.error.rawValue)>" : ""
}
