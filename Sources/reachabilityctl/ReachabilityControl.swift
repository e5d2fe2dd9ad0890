#if canImport(Glibc)
import Glibc
#endif
import ReachabilityClient
import ReachabilityCore
import ReachabilityInProcess
import SystemSupport

/// The exit codes of `reachabilityctl`, documented in `--help` and README.
enum ExitStatus {
    /// The condition holds / the command did what was asked.
    static let success: Int32 = 0
    /// `wait` timed out; `check` found the destination not reachable; `check-connectivity` found
    /// connectivity not full.
    static let conditionNotMet: Int32 = 1
    /// Bad usage.
    static let usage: Int32 = 64
    /// reachabilityd is not running (its bus name has no owner) or the system bus is unreachable.
    static let daemonUnavailable: Int32 = 69

    /// The text for the top-level `--help`.
    static let help = """
        Exit status: 0 success; 1 `wait` timed out, `check` found the destination not \
        reachable, `check-connectivity` not full or `node-problem` the problem; 2 `node-problem` cannot tell; 64 usage \
        error; 69 reachabilityd is not running or the system bus is unreachable.
        """

    /// The exit statuses of one subcommand, for its `--help`.
    ///
    /// - Parameter condition: what exit status 1 means for it, or nil when it never exits 1.
    static func help(conditionNotMet condition: String?) -> String {
        "Exit status: 0 success; " + (condition.map { "1 \($0); " } ?? "")
            + "64 usage error; 69 reachabilityd is not running or the system bus is unreachable."
    }
}

/// A subcommand: its grammar, how it reads its arguments, and what it does.
protocol Subcommand {
    /// The grammar and help.
    static var spec: CommandSpec { get }
    /// Reads the parsed arguments; a wrong value is a usage error.
    init(_ arguments: ParsedArguments) throws(UsageError)
    /// Runs and returns the exit status.
    func run() async -> Int32
}

/// `reachabilityctl`: query and wait for the reachability that reachabilityd publishes.
@main
enum ReachabilityControl {
    /// The program's name in usage lines.
    static let program = "reachabilityctl"
    /// The subcommands' grammars, the default (status) first.
    static let specs = [StatusCommand.spec, MonitorCommand.spec, WaitCommand.spec, CheckCommand.spec, ExplainCommand.spec, MetricsCommand.spec, CheckConnectivityCommand.spec, NodeProblemCommand.spec]

    static var help: String {
        var lines = [
            "OVERVIEW: Query, watch and wait for network reachability as reachabilityd publishes it.", "",
            "Talks to reachabilityd on the D-Bus system bus ($DBUS_SYSTEM_BUS_ADDRESS when set).", "",
            ExitStatus.help, "",
            "USAGE: reachabilityctl <subcommand>", "",
            "OPTIONS:", CommandSpec.row("--version", "Show the version."), CommandSpec.row("-h, --help", "Show help information."), "",
            "SUBCOMMANDS:",
        ]
        for (index, spec) in specs.enumerated() {
            lines.append(CommandSpec.row(spec.name + (index == 0 ? " (default)" : ""), spec.abstract))
        }
        lines += ["", "  See 'reachabilityctl <subcommand> --help' for detailed help."]
        return lines.joined(separator: "\n")
    }

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "--help", "-h":
            Output.line(help)
            exit(ExitStatus.success)
        case "help":
            // "help SUBCOMMAND" as "SUBCOMMAND --help"; "help" alone as "--help".
            arguments.removeFirst()
            guard !arguments.isEmpty else {
                Output.line(help)
                exit(ExitStatus.success)
            }
            arguments = [arguments[0], "--help"]
        case "--version":
            Output.line(ReleaseVersion.current)
            exit(ExitStatus.success)
        default:
            break
        }
        // The first argument names the subcommand; without one (or with an option first), status.
        var name = StatusCommand.spec.name
        if let first = arguments.first, !first.hasPrefix("-") {
            guard specs.contains(where: { $0.name == first }) else {
                let names = specs.map(\.name).joined(separator: ", ")
                Output.write("reachabilityctl: Unknown subcommand '\(first)'; the subcommands are \(names).\n", to: STDERR_FILENO)
                exit(ExitStatus.usage)
            }
            name = first
            arguments.removeFirst()
        }
        let status: Int32 = switch name {
        case MonitorCommand.spec.name: await run(MonitorCommand.self, arguments)
        case WaitCommand.spec.name: await run(WaitCommand.self, arguments)
        case CheckCommand.spec.name: await run(CheckCommand.self, arguments)
        case ExplainCommand.spec.name: await run(ExplainCommand.self, arguments)
        case MetricsCommand.spec.name: await run(MetricsCommand.self, arguments)
        case CheckConnectivityCommand.spec.name: await run(CheckConnectivityCommand.self, arguments)
        case NodeProblemCommand.spec.name: await run(NodeProblemCommand.self, arguments)
        default: await run(StatusCommand.self, arguments)
        }
        exit(status)
    }

    /// Parses `arguments` for `Command` and runs it; prints help or a usage error instead when asked or wrong.
    private static func run<Command: Subcommand>(_: Command.Type, _ arguments: [String]) async -> Int32 {
        let spec = Command.spec
        let command: Command
        do throws(UsageError) {
            guard let parsed = try spec.parse(arguments) else {
                Output.line(spec.help)
                return ExitStatus.success
            }
            command = try Command(parsed)
        } catch {
            Output.write("reachabilityctl: \(error.message)\nUsage: \(spec.usage)\n  See 'reachabilityctl \(spec.name) --help' for more.\n",
                         to: STDERR_FILENO)
            return ExitStatus.usage
        }
        return await command.run()
    }
}

// MARK: - Shared options

/// `--source daemon|in-process|automatic`, shared by every subcommand that follows the status.
struct SourceOption {
    /// The choices, as typed.
    enum Choice: String, CaseIterable {
        case daemon
        case inProcess = "in-process"
        case automatic
    }

    static let spec = OptionSpec.value("source", "source", """
        Where answers come from: daemon (reachabilityd on the system bus), in-process (the same \
        engine run in reachabilityctl), or automatic (the daemon when running, else in-process).
        """, default: "daemon")

    /// `--varlink[=PATH]`: the daemon's Varlink socket instead of the bus, for a container or
    /// early boot without a system bus; every subcommand that asks the daemon takes it.
    static let varlinkSpec = OptionSpec.optionalValue("varlink", "path", """
        Ask reachabilityd through its Varlink socket instead of the system bus: at PATH, else $REACHABILITYD_SOCKET, else \(VarlinkContract.socketPath).
        """, implied: "", choices: [])

    let choice: Choice
    /// The Varlink socket asked, when `--varlink` was given.
    let varlinkSocket: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        choice = try arguments.choice("source", among: Choice.allCases) ?? .daemon
        varlinkSocket = Self.varlinkSocket(arguments)
        if varlinkSocket != nil, arguments.values["source"] != nil { throw UsageError(message: "'--varlink' and '--source' exclude each other.") }
    }

    /// The socket `--varlink[=PATH]` names; nil without `--varlink` (the library then asks the
    /// socket only when the system bus is missing).
    static func varlinkSocket(_ arguments: ParsedArguments) -> String? {
        arguments.values["varlink"].map { $0.isEmpty ? ReachabilityManager.Source.varlinkSocketPath : $0 }
    }

    /// The library's source. With no system bus but the daemon's Varlink socket there, the
    /// library itself asks the socket for the daemon (``ReachabilityManager/Source``).
    var managerSource: ReachabilityManager.Source {
        if let varlinkSocket { return .varlink(path: varlinkSocket) }
        return switch choice {
        case .daemon: .daemon
        case .inProcess: .inProcess
        case .automatic: .automatic
        }
    }

    /// Whether an answer means "no one could answer": the daemon is absent (daemon or Varlink
    /// source), or the status is unknown (the engine could not start, for the other sources).
    func isUnavailable(_ answer: FirstAnswer) -> Bool {
        choice == .daemon || varlinkSocket != nil ? !answer.daemonAvailable : answer.snapshot.status == .unknown
    }
}

/// `--answer-timeout SECONDS`, with the subcommand's default.
///
/// - Parameters:
///   - seconds: the default.
///   - awaited: what is waited for, for the help.
func answerTimeoutSpec(default seconds: Int, awaiting awaited: String = "the daemon's answer") -> OptionSpec {
    .value("answer-timeout", "seconds", "How long to wait for \(awaited).", default: String(seconds))
}

/// `--answer-timeout`'s seconds as the time a call to the daemon waits: at least 1 ms (a
/// timeout of 0 would be sd-bus's default instead).
func answerDuration(_ seconds: Double) -> Duration {
    .milliseconds(Int64(max(seconds, 0.001) * 1000))
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
    /// Where the resolution of the host name stood, for a manager of one.
    var hostResolution: HostResolution?
    /// No answer came because the system resolver had not answered about the host name: the
    /// snapshot is "not reachable", its reason says so.
    var isResolverSilence = false

    /// The answer when the time ran out while the system resolver had not answered about `host`
    /// (the daemon is asked about a name's addresses only once it has them): not reachable,
    /// "could not resolve HOST: the resolver did not answer within N s". Nil when the resolver
    /// is not what was waited for. Read before the manager stops.
    static func resolverSilence(of manager: ReachabilityManager, host: String, now: ContinuousClock.Instant = .now) -> FirstAnswer? {
        guard case .waiting(let since)? = manager.hostResolution else { return nil }
        let waited = now - since
        let seconds = (Double(waited.components.seconds) * 10 + Double(waited.components.attoseconds) / 1e17).rounded() / 10
        let snapshot = ReachabilitySnapshot(
            status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false, interface: "", transport: nil, isMetered: false,
            reason: "could not resolve \(host): the resolver did not answer within \(seconds) s"
        )
        return FirstAnswer(snapshot: snapshot, daemonAvailable: manager.isDaemonAvailable, hostResolution: manager.hostResolution, isResolverSilence: true)
    }
}

/// Starts `manager`, returns its first answer, and stops it. When none arrives within
/// `seconds`: the resolver's silence about `host` when that is what held it up, else nil
/// (the bus or the daemon did not answer).
func firstAnswer(of manager: ReachabilityManager, host: String? = nil, within seconds: Double) async -> FirstAnswer? {
    manager.startMonitoring()
    defer { manager.stopMonitoring() }
    return await withTaskGroup(of: FirstAnswer?.self) { group in
        group.addTask {
            for await snapshot in manager.snapshotUpdates {
                return FirstAnswer(snapshot: snapshot, daemonAvailable: manager.isDaemonAvailable, hostResolution: manager.hostResolution)
            }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return host.flatMap { FirstAnswer.resolverSilence(of: manager, host: $0) }
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// Prints `message` to stderr (as an error when stderr is the journal) and returns `code`.
func failure(_ message: String, code: Int32) -> Int32 {
    Output.write(Output.errorPrefix + "reachabilityctl: \(message)\n", to: STDERR_FILENO)
    return code
}
