/// A published state that the metrics show as a state set (OpenMetrics' StateSet): one series
/// per possible value, 1 for the current one and 0 for the others, so that `changes()`,
/// `resets()` and absent-series alerts see a fixed set of series; and a counter of transitions
/// into each value. Declared once here: the metrics text, the counters and their runtime file
/// all follow this table.
package enum MetricsStateSet: String, Sendable, CaseIterable, Hashable {
    /// `Status`.
    case status
    /// `IPv4Connectivity`.
    case ipv4Connectivity = "ipv4-connectivity"
    /// `IPv6Connectivity`.
    case ipv6Connectivity = "ipv6-connectivity"
    /// `DNS`.
    case dns

    /// The gauge's metric name (the two connectivity sets share one, told apart by `family`).
    package var metric: String {
        switch self {
        case .status: "reachabilityd_status"
        case .ipv4Connectivity, .ipv6Connectivity: "reachabilityd_connectivity"
        case .dns: "reachabilityd_dns"
        }
    }

    /// The counter's metric name: transitions into each value.
    package var transitionsMetric: String { "\(metric)_transitions_total" }

    /// The label holding the value.
    package var label: String {
        switch self {
        case .status: "status"
        case .ipv4Connectivity, .ipv6Connectivity: "connectivity"
        case .dns: "dns"
        }
    }

    /// The labels beside ``label`` (the connectivity sets' `family`).
    package var fixedLabels: [(name: String, value: String)] {
        switch self {
        case .status, .dns: []
        case .ipv4Connectivity: [("family", "ipv4")]
        case .ipv6Connectivity: [("family", "ipv6")]
        }
    }

    /// Every value the state can take, in the wire table's order.
    package var values: [String] {
        switch self {
        case .status: ReachabilityStatus.allCases.map(\.rawValue)
        case .ipv4Connectivity, .ipv6Connectivity: Connectivity.allCases.map(\.rawValue)
        case .dns: DNSReadiness.allCases.map(\.rawValue)
        }
    }

    /// The value `snapshot` publishes.
    package func value(in snapshot: ReachabilitySnapshot) -> String {
        switch self {
        case .status: snapshot.status.rawValue
        case .ipv4Connectivity: snapshot.ipv4Connectivity.rawValue
        case .ipv6Connectivity: snapshot.ipv6Connectivity.rawValue
        case .dns: snapshot.dns.rawValue
        }
    }
}
