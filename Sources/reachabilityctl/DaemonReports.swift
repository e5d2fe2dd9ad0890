import ReachabilityClient
import ReachabilityCore

/// `reachabilityctl explain`: the daemon's own report of what it looked at.
struct Explain: Subcommand {
    static let spec = CommandSpec(
        name: "explain",
        abstract: "Print the daemon's report: the route picked per family, every link and why, the configuration.",
        discussion: "Calls the daemon's Explain method. \(ExitStatus.help(conditionNotMet: nil))",
        options: [answerTimeoutSpec(default: 10), .flag("json", "Print one JSON object, {\"report\": TEXT}, instead of the text.")]
    )

    let answerTimeout: Double
    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        answerTimeout = try arguments.seconds("answer-timeout", default: 10)
        json = arguments.flag("json")
    }

    func run() async -> Int32 {
        do throws(DaemonReportError) {
            let report = try await ReachabilityManager.daemonReport(timeout: .milliseconds(Int64(max(answerTimeout, 0.001) * 1000)))
            Output.line(json ? JSONValue.object(["report": .string(report)]).text : report.hasSuffix("\n") ? String(report.dropLast()) : report)
            return ExitStatus.success
        } catch {
            return failure(error.description, code: ExitStatus.daemonUnavailable)
        }
    }
}

/// `reachabilityctl metrics`: the daemon's state as Prometheus metrics.
struct Metrics: Subcommand {
    static let spec = CommandSpec(
        name: "metrics",
        abstract: "Print the daemon's metrics in Prometheus' text format (what it keeps for node_exporter).",
        discussion: "Calls the daemon's Metrics method; [Metrics] TextfileDirectory= makes the daemon keep the same text "
            + "in node_exporter's textfile-collector directory. \(ExitStatus.help(conditionNotMet: nil))",
        options: [answerTimeoutSpec(default: 10)]
    )

    let answerTimeout: Double

    init(_ arguments: ParsedArguments) throws(UsageError) {
        answerTimeout = try arguments.seconds("answer-timeout", default: 10)
    }

    func run() async -> Int32 {
        do throws(DaemonReportError) {
            let metrics = try await ReachabilityManager.daemonMetrics(timeout: .milliseconds(Int64(max(answerTimeout, 0.001) * 1000)))
            Output.line(metrics.hasSuffix("\n") ? String(metrics.dropLast()) : metrics)
            return ExitStatus.success
        } catch {
            return failure(error.description, code: ExitStatus.daemonUnavailable)
        }
    }
}
