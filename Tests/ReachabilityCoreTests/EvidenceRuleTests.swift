import ReachabilityCore
import XCTest

/// The evidence rule: the gateway's and the check's evidence in, the snapshot's evidence and
/// captive portal out.
final class EvidenceRuleTests: XCTestCase {
    /// Both families routed, IPv4 only, and neither.
    static let both = ReachabilitySnapshot(
        status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: true,
        interface: "eth0", transport: .ethernet, isMetered: false, reason: "default route via 10.0.0.1 on eth0"
    )
    static let ipv4Only = ReachabilitySnapshot(
        status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: false,
        interface: "eth0", transport: .ethernet, isMetered: false, reason: "default route via 10.0.0.1 on eth0"
    )
    static let noRoute = ReachabilitySnapshot(
        status: .notReachable, isIPv4Reachable: false, isIPv6Reachable: false,
        interface: "", transport: nil, isMetered: false, reason: "no default route"
    )
    static let portal = "http://portal.example/login"
    static let none = FamilyEvidence()

    /// One row of the table: the route snapshot, each family's evidence, and what the snapshot
    /// must carry.
    struct Row {
        var name: String
        var routes: ReachabilitySnapshot
        var given: (ipv4: FamilyEvidence, ipv6: FamilyEvidence)
        var then: (ipv4: Connectivity?, ipv6: Connectivity?, portal: String)
        var line: UInt

        init(
            _ name: String, _ routes: ReachabilitySnapshot, ipv4: FamilyEvidence, ipv6: FamilyEvidence,
            _ ipv4Evidence: Connectivity?, _ ipv6Evidence: Connectivity?, portal captivePortal: String = "", line: UInt = #line
        ) {
            self.name = name
            self.routes = routes
            given = (ipv4, ipv6)
            then = (ipv4Evidence, ipv6Evidence, captivePortal)
            self.line = line
        }
    }

    static let rows: [Row] = [
        Row("no evidence", both, ipv4: none, ipv6: none, nil, nil),
        Row("the check's verdict stands alone", both, ipv4: FamilyEvidence(check: .full), ipv6: FamilyEvidence(check: .limited), .full, .limited),
        Row("a failed gateway alone", both, ipv4: FamilyEvidence(gateway: .limited), ipv6: none, .limited, nil),
        Row("a failed gateway beats the check's full", both, ipv4: FamilyEvidence(gateway: .limited, check: .full), ipv6: none, .limited, nil),
        Row(
            "a failed gateway beats the check's portal, whose URL is not shown", both,
            ipv4: FamilyEvidence(gateway: .limited, check: .portal, checkPortalURL: portal), ipv6: none, .limited, nil
        ),
        Row("IPv4's portal URL", both, ipv4: FamilyEvidence(check: .portal, checkPortalURL: portal), ipv6: none, .portal, nil, portal: portal),
        Row("IPv6's portal URL", both, ipv4: FamilyEvidence(check: .full), ipv6: FamilyEvidence(check: .portal, checkPortalURL: portal), .full, .portal, portal: portal),
        Row(
            "IPv4's portal URL before IPv6's", both,
            ipv4: FamilyEvidence(check: .portal, checkPortalURL: portal), ipv6: FamilyEvidence(check: .portal, checkPortalURL: "http://other.example/"),
            .portal, .portal, portal: portal
        ),
        Row(
            "a portal without a URL gives way to the other family's URL", both,
            ipv4: FamilyEvidence(check: .portal), ipv6: FamilyEvidence(check: .portal, checkPortalURL: portal), .portal, .portal, portal: portal
        ),
        Row("a portal without a URL: none", both, ipv4: FamilyEvidence(check: .portal), ipv6: none, .portal, nil),
        Row(
            "a family without a route shows no portal URL", ipv4Only,
            ipv4: none, ipv6: FamilyEvidence(check: .portal, checkPortalURL: portal), nil, .portal
        ),
        Row(
            "no route at all: evidence kept, no portal URL", noRoute,
            ipv4: FamilyEvidence(gateway: .limited, check: .portal, checkPortalURL: portal), ipv6: none, .limited, nil
        ),
    ]

    func testEvidenceRuleTable() {
        for row in Self.rows {
            // Given the route rule's snapshot and each family's evidence
            // When the evidence rule decides
            let next = EvidenceRule.decide(row.routes, ipv4: row.given.ipv4, ipv6: row.given.ipv6)
            // Then the snapshot carries the winning evidence and portal, and the rest unchanged
            XCTAssertEqual(next.ipv4Evidence, row.then.ipv4, "\(row.name): IPv4 evidence", line: row.line)
            XCTAssertEqual(next.ipv6Evidence, row.then.ipv6, "\(row.name): IPv6 evidence", line: row.line)
            XCTAssertEqual(next.captivePortal, row.then.portal, "\(row.name): captive portal", line: row.line)
            var routesPart = next
            routesPart.ipv4Evidence = row.routes.ipv4Evidence
            routesPart.ipv6Evidence = row.routes.ipv6Evidence
            routesPart.captivePortal = row.routes.captivePortal
            XCTAssertEqual(routesPart, row.routes, "\(row.name): the route part is the route rule's", line: row.line)
        }
    }

    func testADestinationTakesTheMachinesEvidenceForTheRoutesItShares() {
        // Given a machine with IPv4 via eth0 (full) and IPv6 via wlan0 (a portal)
        let machine = ReachabilitySnapshot(
            status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: true, interface: "eth0", transport: .ethernet,
            isMetered: false, reason: "", ipv4Evidence: .full, ipv6Evidence: .portal, captivePortal: Self.portal,
            ipv4Link: ("eth0", .ethernet), ipv6Link: ("wlan0", .wifi)
        )
        func host(ipv4: String = "", ipv6: String = "") -> ReachabilitySnapshot {
            ReachabilitySnapshot(
                status: ipv4.isEmpty && ipv6.isEmpty ? .notReachable : .reachableViaEthernet, isIPv4Reachable: !ipv4.isEmpty,
                isIPv6Reachable: !ipv6.isEmpty, interface: ipv4.isEmpty ? ipv6 : ipv4, transport: nil, isMetered: false, reason: "",
                ipv4Link: (ipv4, nil), ipv6Link: (ipv6, nil)
            )
        }
        let rows: [(name: String, host: ReachabilitySnapshot, connectivity: Connectivity, portal: String, line: UInt)] = [
            ("IPv4 over the machine's IPv4 link", host(ipv4: "eth0"), .full, "", #line),
            ("IPv4 over another link (a VPN's route)", host(ipv4: "wg0"), .unknown, "", #line),
            ("IPv4 over the machine's IPv6 link is not that family's path", host(ipv4: "wlan0"), .unknown, "", #line),
            ("IPv6 over the machine's IPv6 link: its portal", host(ipv6: "wlan0"), .portal, Self.portal, #line),
            ("both families: the better one's", host(ipv4: "eth0", ipv6: "wlan0"), .full, "", #line),
            ("not reachable", host(), .none, "", #line),
        ]
        for row in rows {
            // When
            let next = EvidenceRule.destination(row.host, machine: machine)

            // Then
            XCTAssertEqual(next.connectivity, row.connectivity, row.name, line: row.line)
            XCTAssertEqual(next.captivePortal, row.portal, row.name, line: row.line)
        }
        // and a machine without evidence gives none
        XCTAssertEqual(EvidenceRule.destination(host(ipv4: "eth0"), machine: Self.both).connectivity, .unknown)
    }

    func testTheSessionIsTheFirstFamilysWhoseTrafficGetsOutCountedDownToTheEvaluation() {
        // Given sessions read at 0 s over IPv4 (600 s left) and IPv6 (300 s left)
        let ipv4Session = CaptivePortalSessionReading(session: CaptivePortalSession(secondsRemaining: 600, venueInfoURL: "https://v4/"), readAt: 0)
        let ipv6Session = CaptivePortalSessionReading(session: CaptivePortalSession(secondsRemaining: 300), readAt: 0)
        let rows: [(name: String, routes: ReachabilitySnapshot, ipv4: FamilyEvidence, ipv6: FamilyEvidence, session: CaptivePortalSession, line: UInt)] = [
            ("none read", Self.both, FamilyEvidence(check: .full), FamilyEvidence(check: .full), CaptivePortalSession(), #line),
            (
                "IPv4's first", Self.both, FamilyEvidence(check: .full, session: ipv4Session), FamilyEvidence(check: .full, session: ipv6Session),
                CaptivePortalSession(secondsRemaining: 360, venueInfoURL: "https://v4/"), #line
            ),
            (
                "a portal's too", Self.both, FamilyEvidence(check: .portal, session: ipv4Session), Self.none,
                CaptivePortalSession(secondsRemaining: 360, venueInfoURL: "https://v4/"), #line
            ),
            (
                "a failed gateway hides IPv4's: IPv6's", Self.both, FamilyEvidence(gateway: .limited, check: .full, session: ipv4Session),
                FamilyEvidence(check: .full, session: ipv6Session), CaptivePortalSession(secondsRemaining: 60), #line
            ),
            ("no route: none", Self.noRoute, FamilyEvidence(check: .full, session: ipv4Session), Self.none, CaptivePortalSession(), #line),
        ]
        for row in rows {
            // When the evidence rule decides 250 s on
            let next = EvidenceRule.decide(row.routes, ipv4: row.ipv4, ipv6: row.ipv6, now: 250)
            // Then the session published is that family's, counted down to the last mark passed
            XCTAssertEqual(next.captivePortalSession, row.session, row.name, line: row.line)
        }
        // And a destination over the machine's path has the machine's session while traffic gets out
        var machine = Self.both
        machine.ipv4Evidence = .full
        machine.captivePortalSession = CaptivePortalSession(canExtendSession: true)
        XCTAssertEqual(EvidenceRule.destination(Self.ipv4Only, machine: machine).captivePortalSession, CaptivePortalSession(canExtendSession: true))
        machine.ipv4Evidence = .limited
        XCTAssertEqual(EvidenceRule.destination(Self.ipv4Only, machine: machine).captivePortalSession, CaptivePortalSession())
    }
}
