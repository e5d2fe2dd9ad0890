import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// `reachabilityctl node-problem network|dns|portal`: one node condition for Kubernetes'
/// node-problem-detector (its custom-plugin monitor's contract; ``NodeCondition`` decides).
struct NodeProblemCommand: Subcommand {
    static let spec = CommandSpec(
        program: ReachabilityControl.program,
        name: "node-problem",
        abstract: "Check one node condition for Kubernetes' node-problem-detector (custom plugin).",
        discussion: """
            Answers as node-problem-detector's custom plugins do: one line of at most 80 bytes, \
            and exit 0 when the node is fine, 1 when it has the problem, 2 when that cannot be told \
            (reachabilityd not running, not evaluated yet, or no evidence). Conditions: network \
            (NetworkUnreachable: not reachable, or connectivity limited), dns (DNSUnavailable: DNS \
            none, unreachable or failing), portal (CaptivePortal: connectivity portal; unknown \
            without [Connectivity] CheckURL=). Examples/node-problem-detector/ has a configuration.
            """,
        options: [answerTimeoutSpec(default: 5), SourceOption.varlinkSpec],
        positional: ("condition", "network, dns or portal.")
    )

    let condition: NodeCondition
    let answerTimeout: Double
    /// The Varlink socket asked, when `--varlink` was given.
    let varlinkSocket: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let condition = arguments.positional.flatMap(NodeCondition.init(rawValue:)) else {
            throw UsageError(message: "Give the condition: \(NodeCondition.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        self.condition = condition
        answerTimeout = try arguments.seconds("answer-timeout", default: 5)
        varlinkSocket = SourceOption.varlinkSocket(arguments)
    }

    func run() async -> Int32 {
        let answer = await firstAnswer(of: ReachabilityManager(source: varlinkSocket.map { .varlink(path: $0) } ?? .daemon), within: answerTimeout)
        let verdict = condition.verdict(for: answer.flatMap { $0.daemonAvailable ? $0.snapshot : nil })
        Output.line(verdict.message)
        return verdict.outcome.rawValue
    }
}
