import Dispatch
import ReachabilityCore
import SystemSupport

/// Samples what the kernel counts of the host's own traffic over each family's uplink (the
/// link's packets each way from sysfs, TCP's retransmissions from `/proc/net/snmp`) and keeps
/// ``DataStallRule``'s verdict per family: one timer, at ``DataStallRule/flowingIntervalNanoseconds``
/// while the uplinks send or a stall holds, disarmed once a window passes with nothing sent.
/// Traffic that starts again changes the gateway's neighbour entry (the kernel resolves or
/// confirms it: `STALE` to `DELAY`, `REACHABLE`…), which the engine already follows
/// (``GatewayFollowing``) and passes on (``trafficMayHaveStarted()``): an idle host is not
/// woken. A path without a gateway has no such entry: while one is followed, the timer stays
/// armed at ``DataStallRule/idleIntervalNanoseconds``. Nothing runs while no family has a path
/// or detection is off. Confined to the engine's queue.
final class DataStallSampling {
    private let queue: DispatchQueue
    /// The sysfs mount point the links' statistics are read below.
    private let sysfsRoot: String
    /// Where TCP's counters are read (the reader's network namespace).
    private let tcpCountersPath: String
    /// Each family's path, followed from the walk.
    private var paths: [AddressFamily: CheckPath] = [:]
    /// The samples per uplink (by name: the statistics are read by name).
    private var samples: [String: [TrafficSample]] = [:]
    /// The last verdict's label per uplink, logged when it changes.
    private var verdicts: [String: String] = [:]
    /// The stall found per uplink, while it holds.
    private var stalls: [String: DataStall] = [:]
    private var timer: DispatchSourceTimer?
    /// Whether the timer is armed soon (not idle, nor at the idle interval).
    private var isSampling = false
    /// Whether detection runs (`[Connectivity] DataStallDetection=`).
    var isEnabled = true {
        didSet { if !isEnabled { follow([:]) } }
    }
    /// Called on the queue with the families whose stall began and those whose stall ended.
    var onChange: (_ began: Set<AddressFamily>, _ ended: Set<AddressFamily>) -> Void = { _, _ in }

    init(queue: DispatchQueue, sysfsRoot: String, tcpCountersPath: String = "/proc/net/snmp") {
        self.queue = queue
        self.sysfsRoot = sysfsRoot
        self.tcpCountersPath = tcpCountersPath
    }

    /// The stall on `family`'s path; nil: none.
    func stall(_ family: AddressFamily) -> DataStall? {
        paths[family].flatMap { stalls[$0.linkName] }
    }

    /// The path `family`'s stall was found on.
    func path(_ family: AddressFamily) -> CheckPath? {
        paths[family]
    }

    /// Follows the families' paths (the walk's): an uplink no path takes any more is forgotten
    /// (its stall ends without a report: the walk that dropped the path no longer counts it);
    /// sampling starts with the first path and stops with the last.
    func follow(_ next: [AddressFamily: CheckPath]) {
        let followed = isEnabled ? next : [:]
        guard followed != paths else { return }
        paths = followed
        let links = Set(followed.values.map(\.linkName))
        samples = samples.filter { links.contains($0.key) }
        stalls = stalls.filter { links.contains($0.key) }
        if links.isEmpty {
            timer?.cancel()
            timer = nil
            isSampling = false
        } else {
            trafficMayHaveStarted()
        }
    }

    /// Something tells that traffic may leave again (a gateway's neighbour entry changed, a new
    /// path): samples at once unless sampling runs.
    func trafficMayHaveStarted() {
        guard !paths.isEmpty, !isSampling else { return }
        let timer = self.timer ?? {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in self?.sample() }
            timer.activate()
            self.timer = timer
            return timer
        }()
        isSampling = true
        Log.debug("Data-stall sampling starts.")
        timer.schedule(deadline: .now())
    }

    /// `Explain()`'s line for `family`: the last verdict on its path's uplink, or that sampling
    /// waits for traffic.
    func report(_ family: AddressFamily) -> [String] {
        guard let path = paths[family] else { return [] }
        if let stall = stalls[path.linkName] { return ["  data stall: \(stall.reason) -> connectivity limited until a check or an answer"] }
        guard isSampling, let verdict = verdicts[path.linkName] else { return ["  traffic over \(path.linkName): not sampled (nothing sent in the last window)"] }
        return ["  traffic over \(path.linkName): \(verdict) (sampled each second while it sends)"]
    }

    /// Stops sampling and forgets everything.
    func stop() {
        follow([:])
    }

    /// Reads the counters, judges each uplink's window, reports the families whose stall began
    /// or ended, and arms the next sample.
    private func sample() {
        let now = DispatchTime.now().uptimeNanoseconds
        let retransmissions = Self.tcpRetransmissions(readSmallFile(tcpCountersPath, limit: 16 * 1024) ?? "")
        var began: Set<AddressFamily> = []
        var ended: Set<AddressFamily> = []
        var interval: UInt64?
        for link in Set(paths.values.map(\.linkName)) {
            let families = Set(paths.filter { $0.value.linkName == link }.keys)
            guard let retransmissions, let sent = counter(link, "tx_packets"), let received = counter(link, "rx_packets") else {
                // Nothing to judge by (no such files: a faked sysfs, a link gone).
                samples[link] = nil
                if stalls.removeValue(forKey: link) != nil { ended.formUnion(families) }
                continue
            }
            let counters = TrafficCounters(sentPackets: sent, receivedPackets: received, tcpRetransmissions: retransmissions)
            let kept = DataStallRule.trimmed((samples[link] ?? []) + [TrafficSample(nanoseconds: now, counters: counters)])
            samples[link] = kept
            let verdict = DataStallRule.decide(kept)
            if verdicts.updateValue(verdict.label, forKey: link) != verdict.label { Log.debug("Data-stall verdict on \(link): \(verdict.label).") }
            switch verdict {
            case .stalled(let sentPackets, let tcpRetransmissions):
                if stalls[link] == nil {
                    stalls[link] = DataStall(linkName: link, onsetNanoseconds: now, sentPackets: sentPackets, tcpRetransmissions: tcpRetransmissions)
                    Log.info("Data stall on \(link): \(sentPackets) packets sent and \(tcpRetransmissions) TCP segments retransmitted in the last window, nothing received.")
                    began.formUnion(families)
                }
            case .gathering:
                // Too early to tell: a stall found holds until a window says otherwise.
                break
            case .quiet, .flowing, .oneWay:
                if stalls.removeValue(forKey: link) != nil {
                    Log.info("Data stall on \(link) ended.")
                    ended.formUnion(families)
                }
            }
            if let next = DataStallRule.nextIntervalNanoseconds(kept, isStalled: stalls[link] != nil) { interval = min(interval ?? next, next) }
        }
        isSampling = interval != nil
        if let interval {
            timer?.schedule(deadline: .now() + .nanoseconds(Int(interval)), leeway: .nanoseconds(Int(interval / 10)))
        } else {
            // Idle: the samples are dropped (a window must start afresh when traffic does).
            samples = [:]
            verdicts = [:]
            Log.debug("Data-stall sampling stops: nothing sent for a window.")
            let idle = paths.values.contains { $0.gateway == nil } ? DataStallRule.idleIntervalNanoseconds : nil
            timer?.schedule(deadline: idle.map { .now() + .nanoseconds(Int($0)) } ?? .distantFuture, leeway: .nanoseconds(Int((idle ?? 0) / 10)))
        }
        if !began.isEmpty || !ended.isEmpty { onChange(began, ended) }
    }

    /// A link's statistics counter (`tx_packets`, `rx_packets`); nil when it cannot be read.
    private func counter(_ link: String, _ name: String) -> UInt64? {
        readSmallFile("\(sysfsRoot)/class/net/\(link)/statistics/\(name)", limit: 64).flatMap { UInt64($0.split(separator: "\n").first ?? "") }
    }

    /// TCP's `RetransSegs` from `/proc/net/snmp`'s text (a `Tcp:` line of names, then one of
    /// values); nil when absent.
    static func tcpRetransmissions(_ snmp: String) -> UInt64? {
        let tcp = snmp.split(separator: "\n").filter { $0.hasPrefix("Tcp:") }
        guard tcp.count >= 2 else { return nil }
        let names = tcp[0].split(separator: " ")
        let values = tcp[1].split(separator: " ")
        guard let column = names.firstIndex(of: "RetransSegs"), column < values.count else { return nil }
        return UInt64(values[column])
    }
}
