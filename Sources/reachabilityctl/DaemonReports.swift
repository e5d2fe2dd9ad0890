import ArgumentParser
import ReachabilityClient

/// `reachabilityctl explain`: the daemon's own report of what it looked at.
struct Explain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the daemon's report: the route picked per family, every link and why, the configuration.",
        discussion: "Calls the daemon's Explain method. \(ExitStatus.help(conditionNotMet: nil))"
    )

    @Option(name: .long, help: ArgumentHelp("How long to wait for the daemon's answer.", valueName: "seconds"))
    var answerTimeout: Double = 10

    @Flag(name: .long, help: "Print one JSON object, {\"report\": TEXT}, instead of the text.")
    var json = false

    /// The JSON form: the report's text (the daemon's Explain() returns text only).
    struct Record: Encodable {
        var report: String
    }

    func run() async throws {
        do throws(DaemonReportError) {
            let report = try await ReachabilityManager.daemonReport(timeout: .milliseconds(Int64(max(answerTimeout, 0.001) * 1000)))
            Output.line(json ? Output.json(Record(report: report)) : report.hasSuffix("\n") ? String(report.dropLast()) : report)
        } catch {
            throw failure(error.description, code: ExitStatus.daemonUnavailable)
        }
    }
}

/// `reachabilityctl metrics`: the daemon's state as Prometheus metrics.
struct Metrics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the daemon's metrics in Prometheus' text format (what it keeps for node_exporter).",
        discussion: "Calls the daemon's Metrics method; [Metrics] TextfileDirectory= makes the daemon keep the same text "
            + "in node_exporter's textfile-collector directory. \(ExitStatus.help(conditionNotMet: nil))"
    )

    @Option(name: .long, help: ArgumentHelp("How long to wait for the daemon's answer.", valueName: "seconds"))
    var answerTimeout: Double = 10

    func run() async throws {
        do throws(DaemonReportError) {
            let metrics = try await ReachabilityManager.daemonMetrics(timeout: .milliseconds(Int64(max(answerTimeout, 0.001) * 1000)))
            Output.line(metrics.hasSuffix("\n") ? String(metrics.dropLast()) : metrics)
        } catch {
            throw failure(error.description, code: ExitStatus.daemonUnavailable)
        }
    }
}
