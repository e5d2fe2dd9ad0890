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

    func run() async throws {
        do throws(DaemonReportError) {
            let report = try await ReachabilityManager.daemonReport(timeout: .milliseconds(Int64(max(answerTimeout, 0.001) * 1000)))
            Output.line(report.hasSuffix("\n") ? String(report.dropLast()) : report)
        } catch {
            throw failure(error.description, code: ExitStatus.daemonUnavailable)
        }
    }
}
