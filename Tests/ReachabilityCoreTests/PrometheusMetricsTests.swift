@testable import ReachabilityCore
import XCTest

/// The metrics text: every family with HELP and TYPE, state sets with one series per value,
/// labels escaped, counters as counted.
final class PrometheusMetricsTests: XCTestCase {
    private let wifi = ReachabilitySnapshot(
        status: .reachableViaWiFi, isIPv4Reachable: true, isIPv6Reachable: false, interface: "wlan0", transport: .wifi,
        isMetered: true, reason: "default route via 192.168.1.1 on wlan0", ipv4Evidence: .portal, captivePortal: "https://portal.example/"
    )
    private let none = ReachabilitySnapshot(
        status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false, interface: "", transport: nil, isMetered: false, reason: "no route"
    )
    private let daemon = PrometheusMetrics.Daemon(version: "1.2.3", startTimeSeconds: 1_795_549_990)

    func testTheTextHoldsEveryMetricOfTheState() {
        // Given a boot that began not reachable, then reached a portal over WiFi with DNS answering
        var wifi = wifi
        wifi.dns = .answering
        var counters = MetricsCounters()
        counters.count(none, at: MetricsTime(realtime: 1_795_550_000.5, monotonic: 100))
        counters.count(wifi, at: MetricsTime(realtime: 1_795_550_012.25, monotonic: 111.75))

        // When the metrics are rendered
        let text = PrometheusMetrics.render(wifi, generation: 42, counters: counters, daemon: daemon, at: MetricsTime(realtime: 1_795_550_100, monotonic: 200))

        // Then every state is a set of 0/1 series, and every counter counts since boot
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(samples, [
            #"reachabilityd_build_info{version="1.2.3"} 1"#,
            "reachabilityd_start_time_seconds 1795549990.000",
            #"reachabilityd_status{status="unknown"} 0"#,
            #"reachabilityd_status{status="not-reachable"} 0"#,
            #"reachabilityd_status{status="reachable-via-wwan"} 0"#,
            #"reachabilityd_status{status="reachable-via-wifi"} 1"#,
            #"reachabilityd_status{status="reachable-via-ethernet"} 0"#,
            #"reachabilityd_status{status="reachable-via-other"} 0"#,
            #"reachabilityd_connectivity{family="ipv4",connectivity="unknown"} 0"#,
            #"reachabilityd_connectivity{family="ipv4",connectivity="none"} 0"#,
            #"reachabilityd_connectivity{family="ipv4",connectivity="limited"} 0"#,
            #"reachabilityd_connectivity{family="ipv4",connectivity="portal"} 1"#,
            #"reachabilityd_connectivity{family="ipv4",connectivity="full"} 0"#,
            #"reachabilityd_connectivity{family="ipv6",connectivity="unknown"} 0"#,
            #"reachabilityd_connectivity{family="ipv6",connectivity="none"} 1"#,
            #"reachabilityd_connectivity{family="ipv6",connectivity="limited"} 0"#,
            #"reachabilityd_connectivity{family="ipv6",connectivity="portal"} 0"#,
            #"reachabilityd_connectivity{family="ipv6",connectivity="full"} 0"#,
            #"reachabilityd_dns{dns="unknown"} 0"#,
            #"reachabilityd_dns{dns="none"} 0"#,
            #"reachabilityd_dns{dns="unreachable"} 0"#,
            #"reachabilityd_dns{dns="reachable"} 0"#,
            #"reachabilityd_dns{dns="failing"} 0"#,
            #"reachabilityd_dns{dns="answering"} 1"#,
            #"reachabilityd_interface_info{interface="wlan0",transport="wifi"} 1"#,
            #"reachabilityd_reachable{family="ipv4"} 1"#,
            #"reachabilityd_reachable{family="ipv6"} 0"#,
            "reachabilityd_metered 1",
            #"reachabilityd_status_transitions_total{status="unknown"} 0"#,
            #"reachabilityd_status_transitions_total{status="not-reachable"} 1"#,
            #"reachabilityd_status_transitions_total{status="reachable-via-wwan"} 0"#,
            #"reachabilityd_status_transitions_total{status="reachable-via-wifi"} 1"#,
            #"reachabilityd_status_transitions_total{status="reachable-via-ethernet"} 0"#,
            #"reachabilityd_status_transitions_total{status="reachable-via-other"} 0"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv4",connectivity="unknown"} 0"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv4",connectivity="none"} 1"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv4",connectivity="limited"} 0"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv4",connectivity="portal"} 1"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv4",connectivity="full"} 0"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv6",connectivity="unknown"} 0"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv6",connectivity="none"} 1"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv6",connectivity="limited"} 0"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv6",connectivity="portal"} 0"#,
            #"reachabilityd_connectivity_transitions_total{family="ipv6",connectivity="full"} 0"#,
            #"reachabilityd_dns_transitions_total{dns="unknown"} 1"#,
            #"reachabilityd_dns_transitions_total{dns="none"} 0"#,
            #"reachabilityd_dns_transitions_total{dns="unreachable"} 0"#,
            #"reachabilityd_dns_transitions_total{dns="reachable"} 0"#,
            #"reachabilityd_dns_transitions_total{dns="failing"} 0"#,
            #"reachabilityd_dns_transitions_total{dns="answering"} 1"#,
            "reachabilityd_not_reachable_seconds_total 11.750",
            "reachabilityd_property_changes_total 42",
            "reachabilityd_last_change_timestamp_seconds 1795550012.250",
        ])
        // and every family is announced once, HELP then TYPE, before its samples
        let families = Set(samples.map { $0.prefix { $0 != "{" && $0 != " " } })
        for family in families {
            XCTAssertEqual(text.components(separatedBy: "# HELP \(family) ").count, 2, String(family))
            XCTAssertEqual(text.components(separatedBy: "# TYPE \(family) ").count, 2, String(family))
        }
        XCTAssertTrue(text.contains("# TYPE reachabilityd_status_transitions_total counter\n"))
        XCTAssertTrue(text.contains("# TYPE reachabilityd_not_reachable_seconds_total counter\n"))
        XCTAssertTrue(text.hasSuffix("\n"))
    }

    func testTheCurrentOutageCountsUpToNowAndNothingBeforeTheFirstCount() {
        // Given a boot not reachable since monotonic 100
        var counters = MetricsCounters()
        XCTAssertFalse(PrometheusMetrics.render(none, generation: 0, counters: counters, daemon: daemon, at: MetricsTime(realtime: 0, monotonic: 0))
            .contains("last_change"))
        counters.count(none, at: MetricsTime(realtime: 1_795_550_000, monotonic: 100))

        // When rendered at 160, still not reachable
        let text = PrometheusMetrics.render(none, generation: 1, counters: counters, daemon: daemon, at: MetricsTime(realtime: 1_795_550_060, monotonic: 160))

        // Then the outage so far is counted
        XCTAssertTrue(text.contains("\nreachabilityd_not_reachable_seconds_total 60.000\n"), text)
    }

    func testLabelsAreEscaped() {
        let rows: [(value: String, escaped: String, line: UInt)] = [
            ("eth0", "eth0", #line),
            (#"a"b"#, #"a\"b"#, #line),
            (#"a\b"#, #"a\\b"#, #line),
            ("a\nb", #"a\nb"#, #line),
        ]
        for row in rows { XCTAssertEqual(PrometheusMetrics.escaped(row.value), row.escaped, line: row.line) }
        XCTAssertEqual(PrometheusMetrics.seconds(1.0005), "1.001")
        XCTAssertEqual(PrometheusMetrics.seconds(12), "12.000")
    }
}
