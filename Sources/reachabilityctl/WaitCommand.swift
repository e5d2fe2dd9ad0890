#if canImport(Glibc)
import Glibc
#endif
import ReachabilityClient
import ReachabilityCore
import SystemSupport

/// `reachabilityctl wait [--timeout SECONDS] [--transport …] [--ipv4|--ipv6] [--connectivity …] [--dns [LEVEL]] [--unmetered] [--host NAME|ADDRESS]`.
struct WaitCommand: Subcommand {
    static let spec = CommandSpec(
        program: ReachabilityControl.program,
        name: "wait",
        abstract: "Block until the network is reachable (for ExecStartPre=, like nm-online).",
        discussion: """
            Returns as soon as the condition holds: the machine (or --host) is reachable, over \
            --transport when given, over IPv4 or IPv6 when --ipv4 or --ipv6 is given, with at least \
            --connectivity when given (full > portal > limited > unknown), with names resolving \
            when --dns is given (DNS reachable or answering; with --dns answering, answering), over \
            a network that is not metered when --unmetered is given (Metered false). The transport, \
            interfaces and connectivity are those of each family given (both: each family's own), \
            else of the route the status names. Fails at once \
            with 69 when reachabilityd is not running when the wait starts; a daemon restarting \
            during the wait only delays the answer. A --host name that does not resolve is looked \
            up again after 1 s, doubling up to 30 s; one whose resolver has not answered when the \
            time runs out is reported as such (exit 1, not 69). \(ExitStatus.help(conditionNotMet: "the wait timed out"))
            """,
        options: [
            .value("timeout", "seconds", "Give up after this many seconds (0: wait forever).", default: "30"),
            .value("transport", "transport", "Require this transport: \(transports.map(\.rawValue).joined(separator: ", "))."),
            .flag("ipv4", "Require IPv4 reachability (with --ipv6: both)."),
            .flag("ipv6", "Require IPv6 reachability (with --ipv4: both)."),
            .value("connectivity", "connectivity", "Require at least this connectivity: \(connectivities.map(\.rawValue).joined(separator: ", "))."),
            .value("host", "host", "Wait for this host name or address instead of the machine."),
            .optionalValue("dns", "level", "Require names to resolve too: reachable (a configured nameserver is routed; the default) or answering (the check's last lookup was answered; needs CheckURL=).",
                           implied: DNSReadiness.reachable.rawValue, choices: dnsLevels.map(\.rawValue)),
            .flag("unmetered", "Require the network not to be metered (Metered false: a Metered= line, NetworkManager, DHCP's ANDROID_METERED, WWAN)."),
            .value("interface", "interfaces", "Require the route to go through one of these interfaces (comma-separated names or globs)."),
            .value("carrier-timeout", "seconds", "Give up early once no link that could lead out (not loopback, ignored, a port, a veth to this namespace, a dummy or a tunnel) has had carrier for this long (0: never).", default: "0"),
            .flag("verbose", "On success, say on stderr how long the wait took and through which interface."),
            .flag("json", "When the wait ends, print the last state as one JSON object (with \"satisfied\" and \"waited\")."),
            SourceOption.spec,
            SourceOption.varlinkSpec,
        ]
    )

    let timeout: Double
    /// wifi, ethernet or wwan (the statuses with a transport of their own).
    static let transports: [Transport] = [.wifi, .ethernet, .wwan]
    /// Any connectivity but none: at least this one (full > portal > limited > unknown).
    static let connectivities = Connectivity.allCases.filter { $0 != .none }
    /// What `--dns` can require.
    static let dnsLevels: [DNSReadiness] = [.reachable, .answering]

    let transport: Transport?
    let ipv4: Bool
    let ipv6: Bool
    let connectivity: Connectivity?
    /// `--dns`: the least DNS readiness; nil when not asked.
    let dns: DNSReadiness?
    let host: String?
    let json: Bool
    let source: SourceOption
    /// `--interface`: names or globs, one of which the route must go through.
    let interfaces: [String]
    /// `--carrier-timeout`: 0 for never.
    let carrierTimeout: Double
    /// `--verbose`: say how long a successful wait took.
    let verbose: Bool
    /// `--unmetered`: the network must not be metered.
    let unmetered: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        timeout = try arguments.seconds("timeout", default: 30)
        transport = try arguments.choice("transport", among: Self.transports)
        ipv4 = arguments.flag("ipv4")
        ipv6 = arguments.flag("ipv6")
        connectivity = try arguments.choice("connectivity", among: Self.connectivities)
        dns = try arguments.choice("dns", among: Self.dnsLevels)
        host = arguments.values["host"]
        json = arguments.flag("json")
        source = try SourceOption(arguments)
        interfaces = try Self.interfaces(arguments)
        carrierTimeout = try arguments.seconds("carrier-timeout", default: 0)
        verbose = arguments.flag("verbose")
        unmetered = arguments.flag("unmetered")
    }

    /// What the options call online.
    var definition: OnlineDefinition {
        OnlineDefinition(family: ipv4 ? (ipv6 ? .both : .ipv4) : (ipv6 ? .ipv6 : .any),
                         transport: transport, interfaces: interfaces, connectivity: connectivity, dns: dns, isUnmeteredRequired: unmetered)
    }

    /// Whether `snapshot` satisfies the options.
    func isSatisfied(by snapshot: ReachabilitySnapshot) -> Bool {
        definition.isOnline(snapshot)
    }

    func run() async -> Int32 {
        let managerSource = source.managerSource
        let manager = host.map { ReachabilityManager(host: $0, source: managerSource) } ?? ReachabilityManager(source: managerSource)
        let source = source
        let start = WaitClock.now()
        let termination = TerminationNotice(manager: manager, start: start)
        let carrierWatch = carrierTimeout > 0 ? CarrierWatch(seconds: carrierTimeout) : nil
        manager.startMonitoring()
        let outcome = await withTaskGroup(of: Int32.self) { group in
            group.addTask {
                var first = true
                for await snapshot in manager.snapshotUpdates {
                    let answer = FirstAnswer(snapshot: snapshot, daemonAvailable: manager.isDaemonAvailable)
                    if first && source.isUnavailable(answer) { return ExitStatus.daemonUnavailable }
                    first = false
                    if isSatisfied(by: snapshot) { return ExitStatus.success }
                }
                return ExitStatus.conditionNotMet  // cancelled: the timeout won
            }
            if timeout > 0 {
                group.addTask {
                    try? await Task.sleep(for: .seconds(timeout))
                    return ExitStatus.conditionNotMet
                }
            }
            if let carrierWatch {
                group.addTask {
                    await carrierWatch.run(start: start)
                    return ExitStatus.conditionNotMet
                }
            }
            let first = await group.next() ?? ExitStatus.conditionNotMet
            group.cancelAll()
            return first
        }
        // Timed out while the resolver had not answered about the host: that is the last state.
        let silence = outcome == ExitStatus.conditionNotMet ? host.flatMap { FirstAnswer.resolverSilence(of: manager, host: $0) } : nil
        let last = silence?.snapshot ?? manager.snapshot
        let available = manager.isDaemonAvailable
        let elapsed = WaitClock.now() - start
        manager.stopMonitoring()
        termination.cancel()
        if json {
            var record = StatusRecord(last, daemonAvailable: available)
            record.host = host
            record.resolution = manager.hostResolution
            record.satisfied = outcome == ExitStatus.success
            record.waited = elapsed
            Output.line(record.json)
        }
        switch outcome {
        case ExitStatus.success:
            if verbose { Output.write(Self.onlineLine(last, after: elapsed) + "\n", to: STDERR_FILENO) }
            return outcome
        case ExitStatus.daemonUnavailable:
            // The reason already says it when the daemon is absent; a bus problem needs the prefix.
            let reason = last.reason.hasPrefix("reachabilityd") ? last.reason : "reachabilityd is not running: \(last.reason)"
            return failure("\(reason).", code: outcome)
        case _ where silence != nil:
            return failure("Timed out after \(timeout) s: \(last.reason).", code: outcome)
        default:
            if let carrierWatch, carrierWatch.gaveUp.withLock({ $0 }) { return failure(carrierWatch.line(after: elapsed, last), code: outcome) }
            // The route was there: what was missing is an unmetered network, or name resolution.
            var routeOnly = definition
            routeOnly.isUnmeteredRequired = false
            if unmetered, routeOnly.isOnline(last), last.isMetered {
                return failure("Timed out after \(timeout) s waiting for an unmetered network: \(last.interface) is metered (\(last.meteredReason.rawValue)).", code: outcome)
            }
            routeOnly.dns = nil
            if let dns, routeOnly.isOnline(last) {
                return failure("Timed out after \(timeout) s waiting for names to resolve: DNS is \(last.dns.rawValue), not \(dns.rawValue) (\(last.reason)).", code: outcome)
            }
            return failure("Timed out after \(timeout) s: \(last.status.rawValue) (\(last.reason)).", code: outcome)
        }
    }
}
