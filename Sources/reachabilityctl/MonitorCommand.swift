#if canImport(Glibc)
import Glibc
#endif
import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// `reachabilityctl monitor [--json]`.
struct MonitorCommand: Subcommand {
    static let spec = CommandSpec(
        program: ReachabilityControl.program,
        name: "monitor",
        abstract: "Print the current state, then one line per change, until interrupted.",
        discussion: """
            A line is printed whenever what it shows changes, and when the daemon stops or starts \
            (status unknown): time, status, interface, connectivity (with the portal's URL when \
            known) and reason; with --json, whenever any published value changes (status, \
            interface, transport, per-family reachability, metered, reason, connectivity, captive \
            portal, interfaces). \(ExitStatus.help(conditionNotMet: nil))
            """,
        options: [.flag("json", "Print one JSON object per line instead of text."), SourceOption.spec, SourceOption.varlinkSpec]
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
        // The text line last printed, without its time: a change it does not show (the
        // interfaces alone) prints no line that would repeat it.
        var lastText: String?
        for await snapshot in manager.snapshotUpdates {
            let time = Output.now()
            if json {
                var record = StatusRecord(snapshot, daemonAvailable: manager.isDaemonAvailable)
                record.time = time
                Output.line(record.json)
            } else {
                let interface = snapshot.interface.isEmpty ? "-" : snapshot.interface
                let portal = snapshot.captivePortal.isEmpty ? "" : " \(snapshot.captivePortal)"
                let text = "\(snapshot.status.rawValue) \(interface) connectivity=\(snapshot.connectivity.rawValue)\(portal) (\(snapshot.reason))"
                guard text != lastText else { continue }
                lastText = text
                Output.line("\(time) \(text)")
            }
        }
        return ExitStatus.success
    }
}
