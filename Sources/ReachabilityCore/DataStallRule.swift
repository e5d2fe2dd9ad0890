/// What the kernel counts of the host's own traffic over one uplink, at one moment: the
/// link's packets each way (`/sys/class/net/IF/statistics`) and TCP's retransmitted segments
/// (`RetransSegs` of `/proc/net/snmp`, for the network namespace: SYNs of failing connection
/// attempts count there too).
package struct TrafficCounters: Sendable, Hashable {
    /// Packets the uplink sent.
    package var sentPackets: UInt64
    /// Packets the uplink received.
    package var receivedPackets: UInt64
    /// TCP segments sent again because no acknowledgement came.
    package var tcpRetransmissions: UInt64

    /// Creates a sample's counters.
    package init(sentPackets: UInt64, receivedPackets: UInt64, tcpRetransmissions: UInt64) {
        self.sentPackets = sentPackets
        self.receivedPackets = receivedPackets
        self.tcpRetransmissions = tcpRetransmissions
    }
}

/// The counters read at one moment (nanoseconds of a monotonic clock).
package struct TrafficSample: Sendable, Hashable {
    /// When the counters were read.
    package var nanoseconds: UInt64
    /// What they said.
    package var counters: TrafficCounters

    /// Creates a sample.
    package init(nanoseconds: UInt64, counters: TrafficCounters) {
        self.nanoseconds = nanoseconds
        self.counters = counters
    }
}

/// A data stall found on a family's path: traffic leaves and nothing comes back.
package struct DataStall: Sendable, Hashable {
    /// The uplink's name.
    package var linkName: String
    /// When the stall was first found (nanoseconds of the clock the checks' times are on).
    package var onsetNanoseconds: UInt64
    /// The packets the window that found it sent.
    package var sentPackets: UInt64
    /// The TCP segments retransmitted in that window.
    package var tcpRetransmissions: UInt64

    /// Creates a stall's evidence.
    package init(linkName: String, onsetNanoseconds: UInt64, sentPackets: UInt64, tcpRetransmissions: UInt64) {
        self.linkName = linkName
        self.onsetNanoseconds = onsetNanoseconds
        self.sentPackets = sentPackets
        self.tcpRetransmissions = tcpRetransmissions
    }

    /// What `Reason` says of it.
    package var reason: String {
        "traffic leaves \(linkName) and nothing comes back (\(sentPackets) packets sent, \(tcpRetransmissions) TCP retransmissions, "
            + "no answer in \(DataStallRule.windowNanoseconds / 1_000_000_000) s): data stall"
    }
}

/// The data-stall rule: from what the kernel already counts of the host's own traffic, whether
/// "traffic leaves through this path and nothing comes back", without a request of our own.
///
/// Over the last window (``windowNanoseconds``: the samples' span must reach it):
/// 1. the uplink received more than ``receivedAllowance`` packets: something answers, `flowing`
///    (one dead server while others answer is not a stall; the allowance is for the gateway's
///    neighbour answers and router advertisements, which come while the upstream is dead);
/// 2. it sent fewer than ``minimumSentPackets``: `quiet` (an idle host);
/// 3. TCP retransmitted fewer than ``minimumRetransmissions`` segments: `oneWay` — what leaves
///    expects no answer (a UDP stream, syslog to a dead collector);
/// 4. else `stalled`: TCP waits for answers that do not come, and nothing at all comes back.
///
/// Android's `NetworkMonitor` decides from TCP's failure rate over its sockets and from
/// consecutive DNS timeouts; here TCP's retransmissions stand for its failures, and the link's
/// received packets for "nothing comes back" over this path (see docs/reliability.md).
package enum DataStallRule {
    /// How long traffic must go unanswered.
    package static let windowNanoseconds: UInt64 = 5_000_000_000
    /// Received packets a window may hold and still count as "nothing comes back".
    package static let receivedAllowance: UInt64 = 2
    /// Packets a window must send to count as traffic.
    package static let minimumSentPackets: UInt64 = 5
    /// TCP retransmissions a window must hold to count as traffic expecting answers.
    package static let minimumRetransmissions: UInt64 = 3
    /// The sampling interval while traffic leaves (or a stall holds).
    package static let flowingIntervalNanoseconds: UInt64 = 1_000_000_000
    /// The sampling interval while nothing leaves over a path without a gateway, whose
    /// neighbour entry could tell when traffic starts again (a point-to-point link, a tunnel).
    package static let idleIntervalNanoseconds: UInt64 = 5_000_000_000

    /// What a window of samples says.
    package enum Verdict: Sendable, Hashable {
        /// The samples do not span a window yet (or the counters went back: a new link).
        case gathering
        /// Too little leaves to judge.
        case quiet
        /// Something comes back.
        case flowing
        /// Traffic leaves that expects no answer.
        case oneWay
        /// TCP waits for answers that do not come, and nothing comes back.
        case stalled(sentPackets: UInt64, tcpRetransmissions: UInt64)

        /// Its name in the log.
        package var label: String {
            switch self {
            case .gathering: "gathering"
            case .quiet: "quiet"
            case .flowing: "flowing"
            case .oneWay: "one-way"
            case .stalled: "stalled"
            }
        }
    }

    /// The verdict on `samples` (oldest first): the last one against the latest that is at
    /// least a window older.
    package static func decide(_ samples: [TrafficSample]) -> Verdict {
        guard let last = samples.last,
              let first = samples.last(where: { last.nanoseconds >= $0.nanoseconds + windowNanoseconds })
        else { return .gathering }
        let (before, now) = (first.counters, last.counters)
        guard now.sentPackets >= before.sentPackets, now.receivedPackets >= before.receivedPackets, now.tcpRetransmissions >= before.tcpRetransmissions
        else { return .gathering }
        let sent = now.sentPackets - before.sentPackets
        let retransmitted = now.tcpRetransmissions - before.tcpRetransmissions
        if now.receivedPackets - before.receivedPackets > receivedAllowance { return .flowing }
        if sent < minimumSentPackets { return .quiet }
        if retransmitted < minimumRetransmissions { return .oneWay }
        return .stalled(sentPackets: sent, tcpRetransmissions: retransmitted)
    }

    /// When to sample next after `samples` (trimmed: ``trimmed(_:)``): soon while a stall holds
    /// or until the samples span a window in which the uplink sent nothing; then nil — sampling
    /// stops until something tells that traffic leaves again (the gateway's neighbour entry
    /// changes), so that an idle host is not woken.
    package static func nextIntervalNanoseconds(_ samples: [TrafficSample], isStalled: Bool) -> UInt64? {
        guard !isStalled, let first = samples.first, let last = samples.last, last.nanoseconds >= first.nanoseconds + windowNanoseconds,
              last.counters.sentPackets == first.counters.sentPackets
        else { return flowingIntervalNanoseconds }
        return nil
    }

    /// The samples worth keeping: the latest one at least a window older than the last, and
    /// every one after it.
    package static func trimmed(_ samples: [TrafficSample]) -> [TrafficSample] {
        guard let last = samples.last,
              let start = samples.lastIndex(where: { last.nanoseconds >= $0.nanoseconds + windowNanoseconds })
        else { return samples }
        return Array(samples[start...])
    }
}
