import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// `reachabilityctl metrics`: the daemon's state as Prometheus metrics.
struct MetricsCommand: Subcommand {
    static let spec = CommandSpec(
        program: ReachabilityControl.program,
        name: "metrics",
        abstract: "Print the daemon's metrics in Prometheus' text format (what it keeps for node_exporter).",
        discussion: "Calls the daemon's Metrics method; [Metrics] TextfileDirectory= makes the daemon keep the same text "
            + "in node_exporter's textfile-collector directory. \(ExitStatus.help(conditionNotMet: nil))",
        options: [answerTimeoutSpec(default: 10), SourceOption.varlinkSpec]
    )

    let answerTimeout: Double
    /// The Varlink socket asked, when `--varlink` was given.
    let varlinkSocket: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        varlinkSocket = SourceOption.varlinkSocket(arguments)
        answerTimeout = try arguments.seconds("answer-timeout", default: 10)
    }

    func run() async -> Int32 {
        do throws(DaemonReportError) {
            let metrics = try await ReachabilityManager.daemonMetrics(timeout: answerDuration(answerTimeout), varlinkSocket: varlinkSocket)
            Output.line(metrics.hasSuffix("\n") ? String(metrics.dropLast()) : metrics)
            return ExitStatus.success
        } catch {
            return failure(error.description, code: ExitStatus.daemonUnavailable)
        }
    }
}
