/// A Kubernetes node condition that node-problem-detector's custom-plugin monitor asks
/// `reachabilityctl node-problem CONDITION` about, and the answer for a published snapshot.
///
/// The plugin contract: exit 0 when the node is fine (the condition is False), 1 when it has the
/// problem (True), 2 when that cannot be told (Unknown); one line of at most 80 bytes on stdout,
/// which becomes the condition's message. Pure: the command only fetches the snapshot.
package enum NodeCondition: String, Sendable, CaseIterable, Hashable {
    /// `NetworkUnreachable`: no route to the internet, or one whose traffic does not get out.
    case network
    /// `DNSUnavailable`: no nameserver takes public names, none is routed, or lookups fail.
    case dns
    /// `CaptivePortal`: a captive portal intercepts the traffic.
    case portal

    /// The condition type an NPD configuration names.
    package var conditionType: String {
        switch self {
        case .network: "NetworkUnreachable"
        case .dns: "DNSUnavailable"
        case .portal: "CaptivePortal"
        }
    }

    /// The plugin's answer: its exit status and its line.
    package struct Verdict: Sendable, Hashable {
        /// The plugin contract's exit statuses.
        package enum Outcome: Int32, Sendable {
            /// The node is fine: the condition is False.
            case ok = 0
            /// The node has the problem: the condition is True.
            case problem = 1
            /// It cannot be told: the condition is Unknown.
            case unknown = 2
        }

        /// The longest line NPD keeps (its default `max_output_length`).
        package static let maximumLength = 80

        /// The exit status.
        package var outcome: Outcome
        /// One line of at most ``maximumLength`` bytes.
        package var message: String

        /// `message` made one line and cut to ``maximumLength`` bytes (at a character boundary).
        package init(_ outcome: Outcome, _ message: String) {
            self.outcome = outcome
            var line = ""
            for character in message.map({ $0.isNewline ? " " : $0 }) {
                guard line.utf8.count + String(character).utf8.count <= Self.maximumLength else { break }
                line.append(character)
            }
            self.message = line
        }
    }

    /// The verdict for the daemon's published `snapshot`; nil: no daemon answered.
    package func verdict(for snapshot: ReachabilitySnapshot?) -> Verdict {
        guard let snapshot else { return Verdict(.unknown, "reachabilityd is not running or the system bus does not answer") }
        guard snapshot.status != .unknown else { return Verdict(.unknown, "reachabilityd has not evaluated the network yet") }
        let via = "via \(snapshot.interface)"
        switch self {
        case .network:
            if snapshot.status == .notReachable { return Verdict(.problem, "Not reachable: \(snapshot.reason)") }
            if snapshot.connectivity == .limited { return Verdict(.problem, "Route \(via) but traffic does not get out (connectivity limited)") }
            return Verdict(.ok, "Reachable \(via), connectivity \(snapshot.connectivity.rawValue)")
        case .dns:
            switch snapshot.dns {
            case .unknown: return Verdict(.unknown, "DNS not evaluated yet")
            case .none: return Verdict(.problem, "DNS none: no nameserver takes public names")
            case .unreachable: return Verdict(.problem, "DNS unreachable: no nameserver is routed")
            case .failing: return Verdict(.problem, "DNS failing: the connectivity check's lookups get no answer")
            case .reachable: return Verdict(.ok, "DNS reachable: a nameserver is routed")
            case .answering: return Verdict(.ok, "DNS answering")
            }
        case .portal:
            switch snapshot.connectivity {
            case .portal:
                return Verdict(.problem, "Captive portal \(via)" + (snapshot.captivePortal.isEmpty ? "" : ": \(snapshot.captivePortal)"))
            case .unknown:
                return Verdict(.unknown, "Connectivity unknown: no check ([Connectivity] CheckURL=) or not yet")
            case .none, .limited, .full:
                return Verdict(.ok, "No captive portal (connectivity \(snapshot.connectivity.rawValue))")
            }
        }
    }
}
