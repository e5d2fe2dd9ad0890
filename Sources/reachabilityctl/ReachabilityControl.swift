#if canImport(Glibc)
import Glibc
#endif
import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// The exit codes of `reachabilityctl`, documented in `--help` and README.
enum ExitStatus {
    /// The condition holds / the command did what was asked.
    static let success: Int32 = 0
    /// `wait` timed out; `check` found the destination not reachable.
    static let conditionNotMet: Int32 = 1
    /// Bad usage.
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
    static let version = "0.1.0"
    /// The subcommands' grammars, the default (status) first.
    static let specs = [Status.spec, Monitor.spec, Wait.spec, Check.spec, Explain.spec, Metrics.spec]

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
            Output.line(version)
            exit(ExitStatus.success)
        default:
            break
        }
        // The first argument names the subcommand; without one (or with an option first), status.
        var name = Status.spec.name
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
        case Monitor.spec.name: await run(Monitor.self, arguments)
        case Wait.spec.name: await run(Wait.self, arguments)
        case Check.spec.name: await run(Check.self, arguments)
        case Explain.spec.name: await run(Explain.self, arguments)
        case Metrics.spec.name: await run(Metrics.self, arguments)
        default: await run(Status.self, arguments)
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

    let choice: Choice

    init(_ arguments: ParsedArguments) throws(UsageError) {
        choice = try arguments.choice("source", among: Choice.allCases) ?? .daemon
    }

    /// The library's source.
    var managerSource: ReachabilityManager.Source {
        switch choice {
        case .daemon: .daemon
        case .inProcess: .inProcess
        case .automatic: .automatic
        }
    }

    /// Whether an answer means "no one could answer": the daemon is absent (daemon source), or
    /// the status is unknown (the engine could not start, for the other sources).
    func isUnavailable(_ answer: FirstAnswer) -> Bool {
        choice == .daemon ? !answer.daemonAvailable : answer.snapshot.status == .unknown
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

// MARK: - status

/// `reachabilityctl status [--json]`.
struct Status: Subcommand {
    static let spec = CommandSpec(
        name: "status",
        abstract: "Show the machine's reachability: status, interface, transport, IPv4/IPv6, metered, reason.",
        discussion: ExitStatus.help(conditionNotMet: nil),
        options: [.flag("json", "Print one JSON object instead of text."), answerTimeoutSpec(default: 5), SourceOption.spec]
    )

    let json: Bool
    let answerTimeout: Double
    let source: SourceOption

    init(_ arguments: ParsedArguments) throws(UsageError) {
        json = arguments.flag("json")
        answerTimeout = try arguments.seconds("answer-timeout", default: 5)
        source = try SourceOption(arguments)
    }

    func run() async -> Int32 {
        let manager = ReachabilityManager(source: source.managerSource)
        guard let answer = await firstAnswer(of: manager, within: answerTimeout) else {
            return failure("No answer from the system bus within \(answerTimeout) s.", code: ExitStatus.daemonUnavailable)
        }
        let (snapshot, available) = (answer.snapshot, answer.daemonAvailable)
        Output.line(json ? StatusRecord(snapshot, daemonAvailable: available).json : Output.text(snapshot))
        return source.isUnavailable(answer) ? ExitStatus.daemonUnavailable : ExitStatus.success
    }
}

// MARK: - monitor

/// `reachabilityctl monitor [--json]`.
struct Monitor: Subcommand {
    static let spec = CommandSpec(
        name: "monitor",
        abstract: "Print the current state, then one line per change, until interrupted.",
        discussion: """
            A line is printed whenever any published value changes (status, interface, transport, \
            per-family reachability, metered, reason, connectivity, captive portal), and when the \
            daemon stops or starts (status unknown): time, status, interface, connectivity (with \
            the portal's URL when known) and reason. \(ExitStatus.help(conditionNotMet: nil))
            """,
        options: [.flag("json", "Print one JSON object per line instead of text."), SourceOption.spec]
    )

    let json: Bool
    let source: SourceOption

    init(_ arguments: ParsedArguments) throws(UsageError) {
        json = arguments.flag("json")
        source = try SourceOption(arguments)
    }

    func run() async -> Int32 {
        let manager = ReachabilityManager(source: source.managerSource)
        manager.startMonitoring()
        for await snapshot in manager.snapshotUpdates {
            let time = Output.now()
            if json {
                var record = StatusRecord(snapshot, daemonAvailable: manager.isDaemonAvailable)
                record.time = time
                Output.line(record.json)
            } else {
                let interface = snapshot.interface.isEmpty ? "-" : snapshot.interface
                let portal = snapshot.captivePortal.isEmpty ? "" : " \(snapshot.captivePortal)"
                Output.line("\(time) \(snapshot.status.rawValue) \(interface) connectivity=\(snapshot.connectivity.rawValue)\(portal) (\(snapshot.reason))")
            }
        }
        return ExitStatus.success
    }
}

// MARK: - wait

/// `reachabilityctl wait [--timeout SECONDS] [--transport …] [--ipv4|--ipv6] [--connectivity …] [--host NAME|ADDRESS]`.
struct Wait: Subcommand {
    static let spec = CommandSpec(
        name: "wait",
        abstract: "Block until the network is reachable (for ExecStartPre=, like nm-online).",
        discussion: """
            Returns as soon as the condition holds: the machine (or --host) is reachable, over \
            --transport when given, over IPv4 or IPv6 when --ipv4 or --ipv6 is given, with at least \
            --connectivity when given (full > portal > limited > unknown). Fails at once \
            with 69 when reachabilityd is not running when the wait starts; a daemon restarting \
            during the wait only delays the answer. A --host name whose resolver has not answered \
            when the time runs out is reported as such (exit 1, not 69). \(ExitStatus.help(conditionNotMet: "the wait timed out"))
            """,
        options: [
            .value("timeout", "seconds", "Give up after this many seconds (0: wait forever).", default: "30"),
            .value("transport", "transport", "Require this transport: \(transports.map(\.rawValue).joined(separator: ", "))."),
            .flag("ipv4", "Require IPv4 reachability (with --ipv6: both)."),
            .flag("ipv6", "Require IPv6 reachability (with --ipv4: both)."),
            .value("connectivity", "connectivity", "Require at least this connectivity: \(connectivities.map(\.rawValue).joined(separator: ", "))."),
            .value("host", "host", "Wait for this host name or address instead of the machine."),
            .value("interface", "interfaces", "Require the route to go through one of these interfaces (comma-separated names or globs)."),
            .value("carrier-timeout", "seconds", "Give up early once no link but loopback has had carrier for this long (0: never).", default: "0"),
            .flag("verbose", "On success, say on stderr how long the wait took and through which interface."),
            .flag("json", "When the wait ends, print the last state as one JSON object (with \"satisfied\" and \"waited\")."),
            SourceOption.spec,
        ]
    )

    let timeout: Double
    /// wifi, ethernet or wwan (the statuses with a transport of their own).
    static let transports: [Transport] = [.wifi, .ethernet, .wwan]
    /// Any connectivity but none: at least this one (full > portal > limited > unknown).
    static let connectivities = Connectivity.allCases.filter { $0 != .none }

    let transport: Transport?
    let ipv4: Bool
    let ipv6: Bool
    let connectivity: Connectivity?
    let host: String?
    let json: Bool
    let source: SourceOption
    /// `--interface`: names or globs, one of which the route must go through.
    let interfaces: [String]
    /// `--carrier-timeout`: 0 for never.
    let carrierTimeout: Double
    /// `--verbose`: say how long a successful wait took.
    let verbose: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        timeout = try arguments.seconds("timeout", default: 30)
        transport = try arguments.choice("transport", among: Self.transports)
        ipv4 = arguments.flag("ipv4")
        ipv6 = arguments.flag("ipv6")
        connectivity = try arguments.choice("connectivity", among: Self.connectivities)
        host = arguments.values["host"]
        json = arguments.flag("json")
        source = try SourceOption(arguments)
        interfaces = try Self.interfaces(arguments)
        carrierTimeout = try arguments.seconds("carrier-timeout", default: 0)
        verbose = arguments.flag("verbose")
        guard timeout >= 0 else { throw UsageError(message: "--timeout must not be negative.") }
        guard carrierTimeout >= 0 else { throw UsageError(message: "--carrier-timeout must not be negative.") }
    }

    /// What the options call online.
    var definition: OnlineDefinition {
        OnlineDefinition(family: ipv4 ? (ipv6 ? .both : .ipv4) : (ipv6 ? .ipv6 : .any),
                         transport: transport, interfaces: interfaces, connectivity: connectivity)
    }

    /// Whether `snapshot` satisfies the options.
    func isSatisfied(by snapshot: ReachabilitySnapshot) -> Bool {
        definition.isOnline(snapshot)
    }

    func run() async -> Int32 {
        let managerSource = source.managerSource
        let manager = host.map { ReachabilityManager(host: $0, source: managerSource) } ?? ReachabilityManager(source: managerSource)
        let source = source
        let start = WaitClock.now()
        let termination = TerminationNotice(manager: manager, start: start)
        let carrierWatch = carrierTimeout > 0 ? CarrierWatch(seconds: carrierTimeout) : nil
        manager.startMonitoring()
        let outcome = await withTaskGroup(of: Int32.self) { group in
            group.addTask {
                var first = true
                for await snapshot in manager.snapshotUpdates {
                    let answer = FirstAnswer(snapshot: snapshot, daemonAvailable: manager.isDaemonAvailable)
                    if first && source.isUnavailable(answer) { return ExitStatus.daemonUnavailable }
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
            if let carrierWatch {
                group.addTask {
                    await carrierWatch.run(start: start)
                    return ExitStatus.conditionNotMet
                }
            }
            let first = await group.next() ?? ExitStatus.conditionNotMet
            group.cancelAll()
            return first
        }
        // Timed out while the resolver had not answered about the host: that is the last state.
        let silence = outcome == ExitStatus.conditionNotMet ? host.flatMap { FirstAnswer.resolverSilence(of: manager, host: $0) } : nil
        let last = silence?.snapshot ?? manager.snapshot
        let available = manager.isDaemonAvailable
        let elapsed = WaitClock.now() - start
        manager.stopMonitoring()
        termination.cancel()
        if json {
            var record = StatusRecord(last, daemonAvailable: available)
            record.host = host
            record.resolution = manager.hostResolution
            record.satisfied = outcome == ExitStatus.success
            record.waited = elapsed
            Output.line(record.json)
        }
        switch outcome {
        case ExitStatus.success:
            if verbose { Output.write(Self.onlineLine(last, after: elapsed) + "\n", to: STDERR_FILENO) }
            return outcome
        case ExitStatus.daemonUnavailable:
            // The reason already says it when the daemon is absent; a bus problem needs the prefix.
            let reason = last.reason.hasPrefix("reachabilityd") ? last.reason : "reachabilityd is not running: \(last.reason)"
            return failure("\(reason).", code: outcome)
        case _ where silence != nil:
            return failure("Timed out after \(timeout) s: \(last.reason).", code: outcome)
        default:
            if let carrierWatch, carrierWatch.gaveUp.withLock({ $0 }) { return failure(carrierWatch.line(after: elapsed, last), code: outcome) }
            return failure("Timed out after \(timeout) s: \(last.status.rawValue) (\(last.reason)).", code: outcome)
        }
    }
}

// MARK: - check

/// `reachabilityctl check HOST|ADDRESS [--json]`.
struct Check: Subcommand {
    static let spec = CommandSpec(
        name: "check",
        abstract: "Show whether one host name or address is reachable, and through which interface.",
        discussion: """
            A literal address is checked with the daemon's CheckAddress; a host name is resolved \
            here and each address checked, the best answer wins. Exit 0 when reachable, 1 when \
            not — a name the resolver fails on, or does not answer for within --answer-timeout, \
            included (the reason says which; --json's "resolution" is resolved, failed, \
            no-answer or not-asked). \(ExitStatus.help(conditionNotMet: "the destination is not reachable"))
            """,
        options: [
            .flag("json", "Print one JSON object instead of text."),
            answerTimeoutSpec(default: 10, awaiting: "the answer: the resolver's for a host name, then the daemon's"),
            SourceOption.spec,
        ],
        positional: ("host", "A host name or a literal IPv4/IPv6 address.")
    )

    let host: String
    let json: Bool
    let answerTimeout: Double
    let source: SourceOption

    init(_ arguments: ParsedArguments) throws(UsageError) {
        host = arguments.positional ?? ""
        json = arguments.flag("json")
        answerTimeout = try arguments.seconds("answer-timeout", default: 10)
        source = try SourceOption(arguments)
        guard !host.allSatisfy(\.isWhitespace) else { throw UsageError(message: "Give a host name or an address to check.") }
    }

    func run() async -> Int32 {
        let manager = ReachabilityManager(host: host, source: source.managerSource)
        guard let answer = await firstAnswer(of: manager, host: host, within: answerTimeout) else {
            return failure("No answer from the system bus within \(answerTimeout) s.", code: ExitStatus.daemonUnavailable)
        }
        let (snapshot, available) = (answer.snapshot, answer.daemonAvailable)
        if json {
            var record = StatusRecord(snapshot, daemonAvailable: available)
            record.host = host
            record.resolution = answer.hostResolution
            Output.line(record.json)
        }
        if answer.isResolverSilence {
            return failure("\(snapshot.reason).", code: ExitStatus.conditionNotMet)
        }
        if !json {
            // Not reachable: say why (no route, or the name does not resolve).
            Output.line("\(host): \(snapshot.status.rawValue) (\(snapshot.status.localizedDescription))"
                + (snapshot.interface.isEmpty ? "" : " via \(snapshot.interface)")
                + (snapshot.status.isReachable ? "" : ": \(snapshot.reason)"))
        }
        if source.isUnavailable(answer) { return ExitStatus.daemonUnavailable }
        return snapshot.status.isReachable ? ExitStatus.success : ExitStatus.conditionNotMet
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

/// The JSON form of a snapshot, shared by every `--json`.
struct StatusRecord {
    var time: String?
    var host: String?
    /// `wait --json`: whether the condition held.
    var satisfied: Bool?
    /// For a host name: where its resolution stood (`"resolved"`, `"failed"`, `"no-answer"`, `"not-asked"`).
    var resolution: HostResolution?
    /// `wait --json`: how long the wait took, in seconds.
    var waited: Double?
    let snapshot: ReachabilitySnapshot
    let daemonAvailable: Bool

    init(_ snapshot: ReachabilitySnapshot, daemonAvailable: Bool) {
        self.snapshot = snapshot
        self.daemonAvailable = daemonAvailable
    }

    /// One compact JSON object, members sorted by name; absent optional members are left out.
    var json: String {
        var members: [String: JSONValue] = [
            "status": .string(snapshot.status.rawValue),
            "description": .string(snapshot.status.localizedDescription(language: "en")),
            "reachable": .boolean(snapshot.isReachable),
            "ipv4Reachable": .boolean(snapshot.isIPv4Reachable),
            "ipv6Reachable": .boolean(snapshot.isIPv6Reachable),
            "interface": .string(snapshot.interface),
            "transport": .string(snapshot.transport?.rawValue ?? ""),
            "metered": .boolean(snapshot.isMetered),
            "reason": .string(snapshot.reason),
            "connectivity": .string(snapshot.connectivity.rawValue),
            "ipv4Connectivity": .string(snapshot.ipv4Connectivity.rawValue),
            "ipv6Connectivity": .string(snapshot.ipv6Connectivity.rawValue),
            "captivePortal": .string(snapshot.captivePortal),
            "daemonAvailable": .boolean(daemonAvailable),
        ]
        if let time { members["time"] = .string(time) }
        if let host { members["host"] = .string(host) }
        if let satisfied { members["satisfied"] = .boolean(satisfied) }
        if let resolution { members["resolution"] = .string(Self.text(resolution)) }
        if let waited { members["waited"] = .number((waited * 1000).rounded() / 1000) }
        return JSONValue.object(members).text
    }

    /// The `"resolution"` member's value.
    static func text(_ resolution: HostResolution) -> String {
        switch resolution {
        case .notAsked: "not-asked"
        case .waiting: "no-answer"
        case .resolved: "resolved"
        case .failed: "failed"
        }
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
        try? writeAll(Array(text.utf8), to: descriptor, action: "write to descriptor \(descriptor)")
    }

    /// Now in UTC, ISO 8601 to the second: "2026-11-24T17:20:01Z".
    /// The corresponding C functions are `time`, `gmtime_r` and `strftime`.
    static func now() -> String {
        var seconds = time(nil)
        var fields = tm()
        gmtime_r(&seconds, &fields)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &fields)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
