import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// `reachabilityctl check-connectivity [--json]`: a fresh connectivity verdict, now.
struct CheckConnectivityCommand: Subcommand {
    static let spec = CommandSpec(
        program: ReachabilityControl.program,
        name: "check-connectivity",
        abstract: "Run the daemon's connectivity check now and print the connectivity it found.",
        discussion: """
            Calls the daemon's CheckConnectivity method: with [Connectivity] CheckURL= the check runs \
            now (e.g. after logging in to a captive portal) and the answer comes when it finished; a \
            check in flight is shared; one user starts at most one check per 10 s (inside that window, \
            and without CheckURL=, the current connectivity at once). Prints full, portal, limited, \
            unknown or none. \(ExitStatus.help(conditionNotMet: "the connectivity is not full"))
            """,
        options: [answerTimeoutSpec(default: 30), SourceOption.varlinkSpec, .flag("json", "Print one JSON object, {\"connectivity\": WORD}, instead of the word.")]
    )

    let answerTimeout: Double
    /// The Varlink socket asked, when `--varlink` was given.
    let varlinkSocket: String?
    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        varlinkSocket = SourceOption.varlinkSocket(arguments)
        answerTimeout = try arguments.seconds("answer-timeout", default: 30)
        json = arguments.flag("json")
    }

    func run() async -> Int32 {
        do throws(DaemonReportError) {
            let connectivity = try await ReachabilityManager.checkConnectivity(timeout: answerDuration(answerTimeout), varlinkSocket: varlinkSocket)
            Output.line(json ? JSONValue.object(["connectivity": .string(connectivity.rawValue)]).text : connectivity.rawValue)
            return connectivity == .full ? ExitStatus.success : ExitStatus.conditionNotMet
        } catch {
            return failure(error.description, code: ExitStatus.daemonUnavailable)
        }
    }
}
