/// What the daemon counts between start-up and now, beside the published snapshot, for the
/// Prometheus metrics.
public struct MetricsCounters: Sendable, Hashable {
    /// `Status` changes published since start-up.
    public var statusChanges: UInt64 = 0
    /// `Connectivity` changes published since start-up.
    public var connectivityChanges: UInt64 = 0
    /// When the last change was published (Unix time, seconds); nil before the first.
    public var lastChangeSeconds: Double?

    /// Nothing counted yet.
    public init() {}

    /// Counts the publication of `next` after `previous` (nil: the first) at `now` (Unix time).
    public mutating func count(_ next: ReachabilitySnapshot, after previous: ReachabilitySnapshot?, now: Double) {
        if let previous, previous.status != next.status { statusChanges += 1 }
        if let previous, previous.connectivity != next.connectivity { connectivityChanges += 1 }
        lastChangeSeconds = now
    }
}

/// The daemon's state in Prometheus' text exposition format (version 0.0.4), in the conventions
/// of node_exporter's textfile collector: the `reachabilityd_` prefix, `_info` metrics for
/// labels that change, `_total` counters, base units. Pure.
public enum PrometheusMetrics {
    /// The file name the daemon writes in a textfile-collector directory.
    public static let fileName = "reachabilityd.prom"

    /// The metrics for `snapshot`.
    ///
    /// - Parameters:
    ///   - snapshot: the published state.
    ///   - generation: the published `Generation` (changes of any property, for the boot).
    ///   - counters: what the daemon counted since it started.
    /// - Returns: the text, one metric family after another, ending with a newline.
    public static func render(_ snapshot: ReachabilitySnapshot, generation: UInt64, counters: MetricsCounters) -> String {
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: [(String, String)], value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples {
                let labels = sample.labels.map { "\($0.0)=\"\(escaped($0.1))\"" }.joined(separator: ",")
                text += labels.isEmpty ? "\(name) \(sample.value)\n" : "\(name){\(labels)} \(sample.value)\n"
            }
        }
        family("reachabilityd_status_info", "gauge", "The published Status, with the chosen interface and its transport.", [
            ([("status", snapshot.status.rawValue), ("interface", snapshot.interface), ("transport", snapshot.transport?.rawValue ?? "")], "1"),
        ])
        family("reachabilityd_reachable", "gauge", "Whether the family is reachable (1) or not (0).", [
            ([("family", "ipv4")], snapshot.isIPv4Reachable ? "1" : "0"),
            ([("family", "ipv6")], snapshot.isIPv6Reachable ? "1" : "0"),
        ])
        family("reachabilityd_connectivity_info", "gauge",
               "Connectivity per family and overall (family=\"any\"): none, unknown, limited, portal or full.", [
            ([("family", "any"), ("connectivity", snapshot.connectivity.rawValue)], "1"),
            ([("family", "ipv4"), ("connectivity", snapshot.ipv4Connectivity.rawValue)], "1"),
            ([("family", "ipv6"), ("connectivity", snapshot.ipv6Connectivity.rawValue)], "1"),
        ])
        family("reachabilityd_dns_info", "gauge", "DNS readiness: unknown, none, unreachable, reachable, failing or answering.", [
            ([("dns", snapshot.dns.rawValue)], "1"),
        ])
        family("reachabilityd_metered", "gauge", "Whether the chosen interface is metered (1) or not (0).", [
            ([], snapshot.isMetered ? "1" : "0"),
        ])
        family("reachabilityd_status_changes_total", "counter", "Status changes published since the daemon started.", [
            ([], String(counters.statusChanges)),
        ])
        family("reachabilityd_connectivity_changes_total", "counter", "Connectivity changes published since the daemon started.", [
            ([], String(counters.connectivityChanges)),
        ])
        family("reachabilityd_property_changes_total", "counter", "Changes of any property since boot (the published Generation).", [
            ([], String(generation)),
        ])
        if let last = counters.lastChangeSeconds {
            family("reachabilityd_last_change_timestamp_seconds", "gauge", "When the daemon last published a change (Unix time).", [
                ([], seconds(last)),
            ])
        }
        return text
    }

    /// A label value with `\`, `"` and newlines escaped, as the format requires.
    static func escaped(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.append(character)
            }
        }
        return result
    }

    /// Seconds with millisecond precision ("1795550000.123").
    static func seconds(_ value: Double) -> String {
        let milliseconds = Int64((value * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
