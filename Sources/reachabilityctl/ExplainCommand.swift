import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// `reachabilityctl explain`: the daemon's own report of what it looked at.
struct ExplainCommand: Subcommand {
    static let spec = CommandSpec(
        program: ReachabilityControl.program,
        name: "explain",
        abstract: "Print the daemon's report: the route picked per family, every link and why, the configuration.",
        discussion: "Calls the daemon's Explain method. \(ExitStatus.help(conditionNotMet: nil))",
        options: [answerTimeoutSpec(default: 10), SourceOption.varlinkSpec, .flag("json", "Print one JSON object, {\"report\": TEXT}, instead of the text.")]
    )

    let answerTimeout: Double
    /// The Varlink socket asked, when `--varlink` was given.
    let varlinkSocket: String?
    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        varlinkSocket = SourceOption.varlinkSocket(arguments)
        answerTimeout = try arguments.seconds("answer-timeout", default: 10)
        json = arguments.flag("json")
    }

    func run() async -> Int32 {
        do throws(DaemonReportError) {
            let report = try await ReachabilityManager.daemonReport(timeout: answerDuration(answerTimeout), varlinkSocket: varlinkSocket)
            Output.line(json ? JSONValue.object(["report": .string(report)]).text : report.hasSuffix("\n") ? String(report.dropLast()) : report)
            return ExitStatus.success
        } catch {
            return failure(error.description, code: ExitStatus.daemonUnavailable)
        }
    }
}
