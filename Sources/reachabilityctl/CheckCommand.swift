#if canImport(Glibc)
import Glibc
#endif
import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// `reachabilityctl check HOST|ADDRESS [--json]`, and `reachabilityctl check --unmetered` (for `ExecCondition=`).
struct CheckCommand: Subcommand {
    static let spec = CommandSpec(
        program: ReachabilityControl.program,
        name: "check",
        abstract: "Show whether one host name or address is reachable, and through which interface.",
        discussion: """
            A literal address is checked with the daemon's CheckDestination (CheckAddress with an \
            older daemon); a host name is resolved here and each address checked, the best answer \
            wins (over Varlink too: CheckDestination per address). Through NAT64 the text says where to connect; --json has "via" (direct, clat, \
            nat64) and "address" (where to connect). Exit 0 when reachable, 1 when \
            not — a name the resolver fails on, or does not answer for within --answer-timeout, \
            included (the reason says which; --json's "resolution" is resolved, failed, \
            no-answer or not-asked). With --unmetered and no host, checks the machine's network \
            instead, once, without waiting: exit 0 when it is reachable and not metered (Metered \
            false), 1 when it is metered or not reachable — what systemd's ExecCondition= needs to \
            skip a unit's start (1 to 254 skip it). \(ExitStatus.help(conditionNotMet: "the destination is not reachable, or the network metered"))
            """,
        options: [
            .flag("json", "Print one JSON object instead of text."),
            .flag("unmetered", "Check the machine's network instead of a host: reachable and not metered (for ExecCondition=)."),
            answerTimeoutSpec(default: 10, awaiting: "the answer: the resolver's for a host name, then the daemon's"),
            SourceOption.spec,
            SourceOption.varlinkSpec,
        ],
        positional: ("host", "A host name or a literal IPv4/IPv6 address (none with --unmetered)."),
        isPositionalOptional: true
    )

    let host: String
    let json: Bool
    let answerTimeout: Double
    let source: SourceOption
    /// `--unmetered`: check the machine's network for being reachable and not metered.
    let unmetered: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        host = arguments.positional ?? ""
        json = arguments.flag("json")
        answerTimeout = try arguments.seconds("answer-timeout", default: 10)
        source = try SourceOption(arguments)
        unmetered = arguments.flag("unmetered")
        if unmetered {
            guard arguments.positional == nil else { throw UsageError(message: "'--unmetered' checks the machine's network; give no host.") }
        } else {
            guard !host.allSatisfy(\.isWhitespace) else { throw UsageError(message: "Give a host name or an address to check.") }
        }
    }

    func run() async -> Int32 {
        if unmetered { return await checkUnmetered() }
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
                + (snapshot.status.isReachable ? Self.path(of: snapshot) : "")
                + (snapshot.status.isReachable ? "" : ": \(snapshot.reason)"))
        }
        if source.isUnavailable(answer) { return ExitStatus.daemonUnavailable }
        return snapshot.status.isReachable ? ExitStatus.success : ExitStatus.conditionNotMet
    }

    /// `--unmetered`: the machine's first answer, against ``OnlineDefinition/isUnmeteredRequired``.
    private func checkUnmetered() async -> Int32 {
        let manager = ReachabilityManager(source: source.managerSource)
        guard let answer = await firstAnswer(of: manager, within: answerTimeout) else {
            return failure("No answer from the system bus within \(answerTimeout) s.", code: ExitStatus.daemonUnavailable)
        }
        let snapshot = answer.snapshot
        if json { Output.line(StatusRecord(snapshot, daemonAvailable: answer.daemonAvailable).json) }
        if source.isUnavailable(answer) { return failure("reachabilityd is not running: \(snapshot.reason).", code: ExitStatus.daemonUnavailable) }
        if OnlineDefinition(isUnmeteredRequired: true).isOnline(snapshot) { return ExitStatus.success }
        if !json {
            Output.line(snapshot.status.isReachable
                ? "Metered: \(snapshot.interface) (\(snapshot.meteredReason.rawValue))."
                : "Not reachable: \(snapshot.reason).")
        }
        return ExitStatus.conditionNotMet
    }

    /// How a connection gets there, when it is not straight to the address: ", through NAT64 at
    /// 64:ff9b::808:808 (connect there)" or ", through the CLAT".
    static func path(of snapshot: ReachabilitySnapshot) -> String {
        switch snapshot.destinationPath {
        case .nat64?: ", through NAT64 at \(snapshot.destinationAddress) (connect there)"
        case .clat?: ", through the CLAT"
        case .direct?, nil: ""
        }
    }
}
