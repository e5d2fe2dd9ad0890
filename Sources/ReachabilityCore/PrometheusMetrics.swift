/// The daemon's state in Prometheus' text exposition format (version 0.0.4), in the conventions
/// of node_exporter's textfile collector: the `reachabilityd_` prefix, state sets (one 0/1 series
/// per possible value) for states, `_info` gauges only for labels that describe, `_total`
/// counters, base units (seconds). Pure.
package enum PrometheusMetrics {
    /// The file name the daemon writes in a textfile-collector directory.
    package static let fileName = "reachabilityd.prom"

    /// What the metrics say of the running daemon itself.
    package struct Daemon: Sendable, Hashable {
        /// The daemon's version (`reachabilityd --version`).
        package var version: String
        /// When the daemon started (Unix time, seconds).
        package var startTimeSeconds: Double

        /// The daemon `version`, started at `startTimeSeconds`.
        package init(version: String, startTimeSeconds: Double) {
            self.version = version
            self.startTimeSeconds = startTimeSeconds
        }
    }

    /// The metrics for `snapshot`.
    ///
    /// - Parameters:
    ///   - snapshot: the published state.
    ///   - generation: the published `Generation` (changes of any property, for the boot).
    ///   - counters: what the daemon counted, for the boot.
    ///   - daemon: the running daemon's version and start time.
    ///   - time: now, for the seconds of the current `not-reachable` stretch.
    /// - Returns: the text, one metric family after another, ending with a newline.
    package static func render(
        _ snapshot: ReachabilitySnapshot, generation: UInt64, counters: MetricsCounters, daemon: Daemon, at time: MetricsTime
    ) -> String {
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: [(name: String, value: String)], value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples {
                let labels = sample.labels.map { "\($0.name)=\"\(escaped($0.value))\"" }.joined(separator: ",")
                text += labels.isEmpty ? "\(name) \(sample.value)\n" : "\(name){\(labels)} \(sample.value)\n"
            }
        }
        /// The sets sharing `metric` (the two families' connectivity), in the table's order.
        func sets(named metric: String) -> [MetricsStateSet] { MetricsStateSet.allCases.filter { $0.metric == metric } }
        func perFamily(_ members: [MetricsStateSet]) -> String { members.count > 1 ? " per family" : "" }
        let metrics = MetricsStateSet.allCases.map(\.metric).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }

        family("reachabilityd_build_info", "gauge", "Always 1; the daemon's version in a label.", [([("version", daemon.version)], "1")])
        family("reachabilityd_start_time_seconds", "gauge", "When the daemon started (Unix time).", [([], seconds(daemon.startTimeSeconds))])
        for metric in metrics {
            let members = sets(named: metric)
            family(metric, "gauge", "State set: 1 for the published \(members[0].label)\(perFamily(members)), 0 for every other value.", members.flatMap { set in
                let current = set.value(in: snapshot)
                return set.values.map { (set.fixedLabels + [(set.label, $0)], $0 == current ? "1" : "0") }
            })
        }
        family("reachabilityd_interface_info", "gauge", "Always 1; the interface the status is about and its transport (empty when none).", [
            ([("interface", snapshot.interface), ("transport", snapshot.transport?.rawValue ?? "")], "1"),
        ])
        family("reachabilityd_reachable", "gauge", "Whether the family is reachable (1) or not (0).", [
            ([("family", "ipv4")], snapshot.isIPv4Reachable ? "1" : "0"),
            ([("family", "ipv6")], snapshot.isIPv6Reachable ? "1" : "0"),
        ])
        family("reachabilityd_metered", "gauge", "Whether the chosen interface is metered (1) or not (0).", [
            ([], snapshot.isMetered ? "1" : "0"),
        ])
        for metric in metrics {
            let members = sets(named: metric)
            family(members[0].transitionsMetric, "counter", "Transitions into each \(members[0].label) value\(perFamily(members)) since boot.", members.flatMap { set in
                set.values.map { (set.fixedLabels + [(set.label, $0)], String(counters.transitions[set]?[$0] ?? 0)) }
            })
        }
        family("reachabilityd_not_reachable_seconds_total", "counter", "Seconds the status was not-reachable since boot.", [
            ([], seconds(counters.notReachableSeconds(at: time.monotonic))),
        ])
        family("reachabilityd_property_changes_total", "counter", "Changes of any property since boot (the published Generation).", [
            ([], String(generation)),
        ])
        if let last = counters.lastChangeSeconds {
            family("reachabilityd_last_change_timestamp_seconds", "gauge", "When status, connectivity or DNS last changed (Unix time).", [
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
