@testable import ReachabilityCore
import XCTest

/// The metrics text: every family with HELP and TYPE, labels escaped, counters as counted.
final class PrometheusMetricsTests: XCTestCase {
    private let wifi = ReachabilitySnapshot(
        status: .reachableViaWiFi, isIPv4Reachable: true, isIPv6Reachable: false, interface: "wlan0", transport: .wifi,
        isMetered: true, reason: "default route via 192.168.1.1 on wlan0", ipv4Evidence: .portal, captivePortal: "https://portal.example/"
    )
    private let none = ReachabilitySnapshot(
        status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false, interface: "", transport: nil, isMetered: false, reason: "no route"
    )

    func testTheTextHoldsEveryMetricOfTheState() {
        var wifi = wifi
        wifi.dns = .answering
        var counters = MetricsCounters()
        counters.count(none, after: nil, now: 1_795_550_000.5)
        counters.count(wifi, after: none, now: 1_795_550_012.25)
        let text = PrometheusMetrics.render(wifi, generation: 42, counters: counters)
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(samples, [
            #"reachabilityd_status_info{status="reachable-via-wifi",interface="wlan0",transport="wifi"} 1"#,
            #"reachabilityd_reachable{family="ipv4"} 1"#,
            #"reachabilityd_reachable{family="ipv6"} 0"#,
            #"reachabilityd_connectivity_info{family="any",connectivity="portal"} 1"#,
            #"reachabilityd_connectivity_info{family="ipv4",connectivity="portal"} 1"#,
            #"reachabilityd_connectivity_info{family="ipv6",connectivity="none"} 1"#,
            #"reachabilityd_dns_info{dns="answering"} 1"#,
            "reachabilityd_metered 1",
            "reachabilityd_status_changes_total 1",
            "reachabilityd_connectivity_changes_total 1",
            "reachabilityd_property_changes_total 42",
            "reachabilityd_last_change_timestamp_seconds 1795550012.250",
        ])
        // Every family is announced once, HELP then TYPE, before its samples
        let families = Set(samples.map { $0.prefix { $0 != "{" && $0 != " " } })
        for family in families {
            XCTAssertTrue(text.contains("# HELP \(family) "), String(family))
            XCTAssertTrue(text.contains("# TYPE \(family) "), String(family))
        }
        XCTAssertTrue(text.contains("# TYPE reachabilityd_status_changes_total counter\n"))
        XCTAssertTrue(text.hasSuffix("\n"))
    }

    func testNothingIsCountedBeforeTheFirstChangeAndLabelsAreEscaped() {
        XCTAssertFalse(PrometheusMetrics.render(none, generation: 0, counters: MetricsCounters()).contains("last_change"))
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
