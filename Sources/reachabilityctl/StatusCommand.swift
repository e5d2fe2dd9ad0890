#if canImport(Glibc)
import Glibc
#endif
import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// `reachabilityctl status [--json]`.
struct StatusCommand: Subcommand {
    static let spec = CommandSpec(
        program: ReachabilityControl.program,
        name: "status",
        abstract: "Show the machine's reachability: status, interface, transport, IPv4/IPv6, metered, reason, and every interface.",
        discussion: ExitStatus.help(conditionNotMet: nil),
        options: [.flag("json", "Print one JSON object instead of text."), answerTimeoutSpec(default: 5), SourceOption.spec, SourceOption.varlinkSpec]
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
