import ArgumentParser
// FoundationEssentials (JSON, dates), not Foundation: no ICU in the binary.
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import ReachabilityClient

/// The exit codes of `reachabilityctl`, documented in `--help` and README.
enum ExitStatus {
    /// The condition holds / the command did what was asked.
    static let success: Int32 = 0
    /// `wait` timed out; `check` found the destination not reachable.
    static let conditionNotMet: Int32 = 1
    /// Bad usage (swift-argument-parser's validation failure code).
    static let usage: Int32 = 64
    /// reachabilityd is not running (its bus name has no owner) or the system bus is unreachable.
    static let daemonUnavailable: Int32 = 69

    /// The text for the top-level `--help`.
    static let help = """
        Exit status: 0 success; 1 `wait` timed out or `check` found the destination not \
        reachable; 64 usage error; 69 reachabilityd is not running or the system bus is \
        unreachable.
        """

    /// The exit statuses of one subcommand, for its `--help`.
    ///
    /// - Parameter condition: what exit status 1 means for it, or nil when it never exits 1.
    static func help(conditionNotMet condition: String?) -> String {
        "Exit status: 0 success; " + (condition.map { "1 \($0); " } ?? "")
            + "64 usage error; 69 reachabilityd is not running or the system bus is unreachable."
    }
}

/// `reachabilityctl`: query and wait for the reachability that reachabilityd publishes.
@main
struct ReachabilityControl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachabilityctl",
        abstract: "Query, watch and wait for network reachability as reachabilityd publishes it.",
        discussion: """
            Talks to reachabilityd on the D-Bus system bus ($DBUS_SYSTEM_BUS_ADDRESS when set).

            \(ExitStatus.help)
            """,
        version: "0.1.0",
        subcommands: [Status.self, Monitor.self, Wait.self, Check.self, Explain.self, Metrics.self],
        defaultSubcommand: Status.self
    )

    /// Parses and runs; a first argument that is neither an option nor a subcommand is a usage
    /// error naming the subcommands (the parser would otherwise report it as an argument of the
    /// default subcommand, `status`, and show only its usage).
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let names = configuration.subcommands.map { $0._commandName }
        if let first = arguments.first, !first.hasPrefix("-"), !names.contains(first) {
            Self.exit(withError: ValidationError("Unknown subcommand '\(first)'; the subcommands are \(names.joined(separator: ", "))."))
        }
        await main(arguments)
    }
}

// MARK: - Where answers come from

/// `--source daemon|in-process|automatic`, shared by every subcommand.
struct SourceOptions: ParsableArguments {
    /// The choices, as typed.
    enum Choice: String, ExpressibleByArgument, CaseIterable {
        case daemon
        case inProcess = "in-process"
        case automatic
    }

    @Option(name: .long, help: ArgumentHelp("""
        Where answers come from: daemon (reachabilityd on the system bus), in-process (the same \
        engine run in reachabilityctl), or automatic (the daemon when running, else in-process).
        """, valueName: "source"))
    var source: Choice = .daemon

    /// The library's source.
    var managerSource: ReachabilityManager.Source {
        switch source {
        case .daemon: .daemon
        case .inProcess: .inProcess
        case .automatic: .automatic
        }
    }

    /// Whether an answer means "no one could answer": the daemon is absent (daemon source), or
    /// the status is unknown (the engine could not start, for the other sources).
    func isUnavailable(_ answer: FirstAnswer) -> Bool {
        source == .daemon ? !answer.daemonAvailable : answer.snapshot.status == .unknown
    }
}

// MARK: - status

/// `reachabilityctl status [--json]`.
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the machine's reachability: status, interface, transport, IPv4/IPv6, metered, reason.",
        discussion: ExitStatus.help(conditionNotMet: nil)
    )

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("How long to wait for the daemon's answer.", valueName: "seconds"))
    var answerTimeout: Double = 5

    @OptionGroup var sourceOptions: SourceOptions

    func run() async throws {
        let manager = ReachabilityManager(source: sourceOptions.managerSource)
        guard let answer = await firstAnswer(of: manager, within: answerTimeout) else {
            throw failure("No answer from the system bus within \(answerTimeout) s.", code: ExitStatus.daemonUnavailable)
        }
        let (snapshot, available) = (answer.snapshot, answer.daemonAvailable)
        if json {
            Output.line(Output.json(StatusRecord(snapshot, daemonAvailable: available)))
        } else {
            Output.line(Output.text(snapshot))
        }
        if sourceOptions.isUnavailable(answer) { throw ExitCode(ExitStatus.daemonUnavailable) }
    }
}

// MARK: - monitor

/// `reachabilityctl monitor [--json]`.
struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the current state, then one line per change, until interrupted.",
        discussion: """
            A line is printed whenever any published value changes (status, interface, transport, \
            per-family reachability, metered, reason, connectivity, captive portal), and when the \
            daemon stops or starts (status unknown): time, status, interface, connectivity (with \
            the portal's URL when known) and reason. \(ExitStatus.help(conditionNotMet: nil))
            """
    )

    @Flag(name: .long, help: "Print one JSON object per line instead of text.")
    var json = false

    @OptionGroup var sourceOptions: SourceOptions

    func run() async throws {
        let manager = ReachabilityManager(source: sourceOptions.managerSource)
        manager.startMonitoring()
        for await snapshot in manager.snapshotUpdates {
            let time = Date().formatted(.iso8601)
            if json {
                var record = StatusRecord(snapshot, daemonAvailable: manager.isDaemonAvailable)
                record.time = time
                Output.line(Output.json(record))
            } else {
                let interface = snapshot.interface.isEmpty ? "-" : snapshot.interface
                let portal = snapshot.captivePortal.isEmpty ? "" : " \(snapshot.captivePortal)"
                Output.line("\(time) \(snapshot.status.rawValue) \(interface) connectivity=\(snapshot.connectivity.rawValue)\(portal) (\(snapshot.reason))")
            }
        }
    }
}

// MARK: - wait

/// The transports `wait --transport` accepts.
enum TransportChoice: String, ExpressibleByArgument, CaseIterable {
    case wifi, ethernet, wwan

    /// The status that means reachable over this transport.
    var status: ReachabilityStatus {
        switch self {
        case .wifi: .reachableViaWiFi
        case .ethernet: .reachableViaEthernet
        case .wwan: .reachableViaWWAN
        }
    }
}

/// The connectivity `wait --connectivity` can require, by its wire string (any but `none`): at
/// least this one (full > portal > limited > unknown).
struct ConnectivityChoice: ExpressibleByArgument {
    /// The connectivity asked for.
    let required: Connectivity

    init?(argument: String) {
        guard let connectivity = Connectivity(rawValue: argument), connectivity != .none else { return nil }
        required = connectivity
    }

    static var allValueStrings: [String] { Connectivity.allCases.filter { $0 != .none }.map(\.rawValue) }

    /// Whether `connectivity` is at least this.
    func isMet(by connectivity: Connectivity) -> Bool {
        connectivity.rank >= required.rank
    }
}

/// `reachabilityctl wait [--timeout SECONDS] [--transport …] [--ipv4|--ipv6] [--connectivity …] [--host NAME|ADDRESS]`.
struct Wait: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Block until the network is reachable (for ExecStartPre=, like nm-online).",
        discussion: """
            Returns as soon as the condition holds: the machine (or --host) is reachable, over \
            --transport when given, over IPv4 or IPv6 when --ipv4 or --ipv6 is given, with at least \
            --connectivity when given (full > portal > limited > unknown). Fails at once \
            with 69 when reachabilityd is not running when the wait starts; a daemon restarting \
            during the wait only delays the answer. \(ExitStatus.help(conditionNotMet: "the wait timed out"))
            """
    )

    // Unconditional: "--timeout -1" is a negative number, to be refused as such, not a missing value.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Give up after this many seconds (0: wait forever).", valueName: "seconds"))
    var timeout: Double = 30

    @Option(name: .long, help: ArgumentHelp("Require this transport: wifi, ethernet or wwan.", valueName: "transport"))
    var transport: TransportChoice?

    @Flag(name: .customLong("ipv4"), help: "Require IPv4 reachability.")
    var ipv4 = false

    @Flag(name: .customLong("ipv6"), help: "Require IPv6 reachability.")
    var ipv6 = false

    @Option(name: .long, help: ArgumentHelp("Require at least this connectivity: unknown, limited, portal or full.", valueName: "connectivity"))
    var connectivity: ConnectivityChoice?

    @Option(name: .long, help: ArgumentHelp("Wait for this host name or address instead of the machine.", valueName: "host"))
    var host: String?

    @Flag(name: .long, help: "When the wait ends, print the last state as one JSON object (with \"satisfied\").")
    var json = false

    @OptionGroup var sourceOptions: SourceOptions

    func validate() throws {
        guard timeout >= 0 else { throw ValidationError("--timeout must not be negative.") }
        guard !(ipv4 && ipv6) else { throw ValidationError("Give at most one of --ipv4 and --ipv6.") }
    }

    /// Whether `snapshot` satisfies the options.
    func isSatisfied(by snapshot: ReachabilitySnapshot) -> Bool {
        guard snapshot.status.isReachable else { return false }
        if let transport, snapshot.status != transport.status { return false }
        if ipv4 && !snapshot.isIPv4Reachable { return false }
        if ipv6 && !snapshot.isIPv6Reachable { return false }
        if let connectivity, !connectivity.isMet(by: snapshot.connectivity) { return false }
        return true
    }

    func run() async throws {
        let source = sourceOptions.managerSource
        let manager = host.map { ReachabilityManager(host: $0, source: source) } ?? ReachabilityManager(source: source)
        let options = sourceOptions
        manager.startMonitoring()
        let outcome = await withTaskGroup(of: Int32.self) { group in
            group.addTask {
                var first = true
                for await snapshot in manager.snapshotUpdates {
                    let answer = FirstAnswer(snapshot: snapshot, daemonAvailable: manager.isDaemonAvailable)
                    if first && options.isUnavailable(answer) { return ExitStatus.daemonUnavailable }
                    first = false
                    if isSatisfied(by: snapshot) { return ExitStatus.success }
                }
                return ExitStatus.conditionNotMet  // cancelled: the timeout won
            }
            if timeout > 0 {
                group.addTask {
                    try? await Task.sleep(for: .seconds(timeout))
                    return ExitStatus.conditionNotMet
                }
            }
            let first = await group.next() ?? ExitStatus.conditionNotMet
            group.cancelAll()
            return first
        }
        let last = manager.snapshot
        let available = manager.isDaemonAvailable
        manager.stopMonitoring()
        if json {
            var record = StatusRecord(last, daemonAvailable: available)
            record.host = host
            record.satisfied = outcome == ExitStatus.success
            Output.line(Output.json(record))
        }
        switch outcome {
        case ExitStatus.success:
            return
        case ExitStatus.daemonUnavailable:
            // The reason already says it when the daemon is absent; a bus problem needs the prefix.
            let reason = last.reason.hasPrefix("reachabilityd") ? last.reason : "reachabilityd is not running: \(last.reason)"
            throw failure("\(reason).", code: outcome)
        default:
            throw failure("Timed out after \(timeout) s: \(last.status.rawValue) (\(last.reason)).", code: outcome)
        }
    }
}

// MARK: - check

/// `reachabilityctl check HOST|ADDRESS [--json]`.
struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show whether one host name or address is reachable, and through which interface.",
        discussion: """
            A literal address is checked with the daemon's CheckAddress; a host name is resolved \
            here and each address checked, the best answer wins. Exit 0 when reachable, 1 when \
            not. \(ExitStatus.help(conditionNotMet: "the destination is not reachable"))
            """
    )

    @Argument(help: ArgumentHelp("A host name or a literal IPv4/IPv6 address.", valueName: "host"))
    var host: String

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("How long to wait for the daemon's answer.", valueName: "seconds"))
    var answerTimeout: Double = 10

    @OptionGroup var sourceOptions: SourceOptions

    func validate() throws {
        guard !host.allSatisfy(\.isWhitespace) else { throw ValidationError("Give a host name or an address to check.") }
    }

    func run() async throws {
        let manager = ReachabilityManager(host: host, source: sourceOptions.managerSource)
        guard let answer = await firstAnswer(of: manager, within: answerTimeout) else {
            throw failure("No answer from the system bus within \(answerTimeout) s.", code: ExitStatus.daemonUnavailable)
        }
        let (snapshot, available) = (answer.snapshot, answer.daemonAvailable)
        if json {
            var record = StatusRecord(snapshot, daemonAvailable: available)
            record.host = host
            Output.line(Output.json(record))
        } else {
            // Not reachable: say why (no route, or the name does not resolve).
            Output.line("\(host): \(snapshot.status.rawValue) (\(snapshot.status.localizedDescription))"
                + (snapshot.interface.isEmpty ? "" : " via \(snapshot.interface)")
                + (snapshot.status.isReachable ? "" : ": \(snapshot.reason)"))
        }
        if sourceOptions.isUnavailable(answer) { throw ExitCode(ExitStatus.daemonUnavailable) }
        if !snapshot.status.isReachable { throw ExitCode(ExitStatus.conditionNotMet) }
    }
}

// MARK: - Helpers

extension ReachabilityManager {
    /// A manager for a literal address, or else for a host name.
    convenience init(host: String, source: Source) {
        if IPAddress(host) != nil {
            self.init(address: host, source: source)
        } else {
            self.init(domain: host, source: source)
        }
    }
}

/// The first answer a manager got: its snapshot, and whether the daemon gave it.
struct FirstAnswer: Sendable {
    var snapshot: ReachabilitySnapshot
    var daemonAvailable: Bool
}

/// Starts `manager`, returns its first answer (or nil when none arrives within `seconds`), and
/// stops it.
func firstAnswer(of manager: ReachabilityManager, within seconds: Double) async -> FirstAnswer? {
    manager.startMonitoring()
    defer { manager.stopMonitoring() }
    return await withTaskGroup(of: FirstAnswer?.self) { group in
        group.addTask {
            for await snapshot in manager.snapshotUpdates {
                return FirstAnswer(snapshot: snapshot, daemonAvailable: manager.isDaemonAvailable)
            }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Prints `message` to stderr and returns the exit code to throw.
func failure(_ message: String, code: Int32) -> ExitCode {
    Output.write("reachabilityctl: \(message)\n", to: STDERR_FILENO)
    return ExitCode(code)
}

/// The JSON form of a snapshot, shared by every `--json`.
struct StatusRecord: Codable {
    var time: String?
    var host: String?
    var status: String
    var description: String
    var reachable: Bool
    var ipv4Reachable: Bool
    var ipv6Reachable: Bool
    var interface: String
    var transport: String
    var metered: Bool
    var reason: String
    var connectivity: String
    var ipv4Connectivity: String
    var ipv6Connectivity: String
    var captivePortal: String
    var daemonAvailable: Bool
    /// `wait --json`: whether the condition held.
    var satisfied: Bool?

    init(_ snapshot: ReachabilitySnapshot, daemonAvailable: Bool) {
        status = snapshot.status.rawValue
        description = snapshot.status.localizedDescription(language: "en")
        reachable = snapshot.isReachable
        ipv4Reachable = snapshot.isIPv4Reachable
        ipv6Reachable = snapshot.isIPv6Reachable
        interface = snapshot.interface
        transport = snapshot.transport?.rawValue ?? ""
        metered = snapshot.isMetered
        reason = snapshot.reason
        connectivity = snapshot.connectivity.rawValue
        ipv4Connectivity = snapshot.ipv4Connectivity.rawValue
        ipv6Connectivity = snapshot.ipv6Connectivity.rawValue
        captivePortal = snapshot.captivePortal
        self.daemonAvailable = daemonAvailable
    }
}

/// Writing to stdout, one flushed line at a time (monitor output is read through pipes).
enum Output {
    /// Writes `text` and a newline to stdout at once.
    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Writes all of `text` to `descriptor` (a closed pipe ends the writing: EPIPE, SIGPIPE
    /// being the default action, ends the process as for any command-line tool).
    /// The corresponding C function is `write`.
    static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Compact JSON with sorted keys.
    static func json(_ record: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(record)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The human form of `status`, in the style of `networkctl status`.
    static func text(_ snapshot: ReachabilitySnapshot) -> String {
        func yesNo(_ flag: Bool) -> String { flag ? "yes" : "no" }
        let rows: [(String, String)] = [
            ("Status", "\(snapshot.status.rawValue) (\(snapshot.status.localizedDescription))"),
            ("Interface", snapshot.interface.isEmpty ? "-" : snapshot.interface),
            ("Transport", snapshot.transport?.rawValue ?? "-"),
            ("IPv4", snapshot.isIPv4Reachable ? "reachable" : "not reachable"),
            ("IPv6", snapshot.isIPv6Reachable ? "reachable" : "not reachable"),
            ("Metered", yesNo(snapshot.isMetered)),
            ("Online", "\(snapshot.connectivity.rawValue) (\(snapshot.connectivity.localizedDescription))"
                + (snapshot.captivePortal.isEmpty ? "" : ", portal: \(snapshot.captivePortal)")),
            ("Reason", snapshot.reason),
        ]
        return rows.map { "\(String(repeating: " ", count: 9 - $0.0.count))\($0.0): \($0.1)" }.joined(separator: "\n")
    }
}
