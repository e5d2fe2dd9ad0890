import ReachabilityCore
import XCTest

/// A CLAT is known by RFC 7335's address on the IPv4 route's link; through it, the properties and
/// `CheckDestination` describe the uplink it translates onto.
final class CLATPathTests: XCTestCase {
    private static let wlan0 = LinkFacts(index: 3, name: "wlan0", isUp: true, hasCarrier: true, transport: .wifi)
    private static let wwan0 = LinkFacts(index: 4, name: "wwan0", isUp: true, hasCarrier: true, transport: .wwan)
    /// clatd's or tayga's tun, with 192.0.0.1, classified onto wlan0.
    private static let clat = LinkFacts(
        index: 8, name: "clat", isUp: true, hasCarrier: true, transport: .wifi, underlying: UnderlyingLink(name: "wlan0", transport: .wifi),
        clatAddress: IPAddress("192.0.0.1")!
    )
    /// A VPN client's tun with 10.8.0.2, over wlan0.
    private static let tun0 = LinkFacts(index: 9, name: "tun0", isUp: true, hasCarrier: true, transport: .vpn, underlying: UnderlyingLink(name: "wlan0", transport: .wifi))
    /// NetworkManager's CLAT: 192.0.0.5 on the uplink itself.
    private static let eth0WithCLAT = LinkFacts(index: 2, name: "eth0", isUp: true, hasCarrier: true, transport: .ethernet, clatAddress: IPAddress("192.0.0.5")!)

    func testThatEachRowDecidesIPv4AccessAndWhatTheSnapshotSays() {
        // Given IPv4's route on a link, IPv6's on the uplink, and whether a NAT64 prefix is known
        let rows: [(route: LinkFacts, uplink: LinkFacts?, prefixKnown: Bool, access: IPv4Access, status: ReachabilityStatus, interface: String,
                    transport: Transport, metered: Bool, reasonSuffix: String, line: UInt)] = [
            // a tun VPN on an IPv6-only uplink with a NAT64 prefix known: a VPN, not a CLAT
            (Self.tun0, Self.wlan0, true, .native, .reachableViaWiFi, "tun0", .vpn, false, "", #line),
            (Self.tun0, Self.wlan0, false, .native, .reachableViaWiFi, "tun0", .vpn, false, "", #line),
            // a CLAT's tun: the uplink's link, whether the prefix is known or not
            (Self.clat, Self.wlan0, true, .clat, .reachableViaWiFi, "wlan0", .wifi, false, "; via CLAT on clat onto wlan0 (wifi)", #line),
            (Self.clat, Self.wlan0, false, .clat, .reachableViaWiFi, "wlan0", .wifi, false, "; via CLAT on clat onto wlan0 (wifi)", #line),
            (Self.clat, Self.wwan0, true, .clat, .reachableViaWWAN, "wwan0", .wwan, true, "; via CLAT on clat onto wwan0 (wwan)", #line),
            (Self.clat, nil, true, .clat, .reachableViaWiFi, "clat", .wifi, false, "; via CLAT", #line),
            // a CLAT on the uplink itself
            (Self.eth0WithCLAT, Self.eth0WithCLAT, true, .clat, .reachableViaEthernet, "eth0", .ethernet, false, "; via CLAT", #line),
            (Fixture.eth0, Fixture.eth0, true, .native, .reachableViaEthernet, "eth0", .ethernet, false, "", #line),
        ]
        for row in rows {
            // When
            let verdict = ReachabilityRule.evaluate(Fixture.routed(.ipv4, via: row.route))
            let path = CLATPath(routeLink: verdict.link, uplink: row.uplink)
            var snapshot = ReachabilitySnapshot(
                status: verdict.status, isIPv4Reachable: true, isIPv6Reachable: row.uplink != nil, interface: row.route.name, transport: row.route.transport,
                isMetered: row.route.isMetered, reason: verdict.reason, ipv4Link: (row.route.name, row.route.transport), ipv6Link: row.uplink.map { ($0.name, $0.transport) }
            )
            snapshot.ipv4Access = IPv4AccessRule.decide(
                IPv4AccessFacts(isIPv4Reachable: verdict.isReachable, isIPv4RouteThroughCLAT: path != nil, isNAT64PrefixKnown: row.prefixKnown)
            )
            let described = snapshot.describing(path)
            // Then
            XCTAssertEqual(described.ipv4Access, row.access, line: row.line)
            XCTAssertEqual(described.status, row.status, line: row.line)
            XCTAssertEqual(described.interface, row.interface, line: row.line)
            XCTAssertEqual(described.ipv4Interface, row.interface, line: row.line)
            XCTAssertEqual(described.transport, row.transport, line: row.line)
            XCTAssertEqual(described.ipv4Transport, row.transport, line: row.line)
            XCTAssertEqual(described.isMetered, row.metered, line: row.line)
            XCTAssertEqual(described.reason, verdict.reason + row.reasonSuffix, line: row.line)
            // and CheckDestination's verdict through the same path says the same
            if let path {
                XCTAssertEqual(path.describing(verdict).link?.name, row.interface, line: row.line)
                XCTAssertEqual(path.describing(verdict).reason, described.reason, line: row.line)
            }
        }
    }

    func testThatTheReasonCallsTheCLATsTunACLATNotAVPN() {
        // Given / When / Then
        let rows: [(link: LinkFacts, reason: String, line: UInt)] = [
            (Self.clat, "default route via 10.0.0.1 on clat (CLAT over wlan0, wifi), table main", #line),
            (Self.eth0WithCLAT, "default route via 10.0.0.1 on eth0 (CLAT, ethernet), table main", #line),
            (Self.tun0, "default route via 10.0.0.1 on tun0 (vpn over wlan0, wifi), table main", #line),
        ]
        for row in rows {
            XCTAssertEqual(ReachabilityRule.evaluate(Fixture.routed(.ipv4, via: row.link)).reason, row.reason, line: row.line)
        }
    }

    func testThatACLATsTunTakesTheTransportOfTheLinkBeneathAndAnyOtherLinkKeepsItsOwn() {
        // Given / When / Then
        let address = IPAddress("192.0.0.1")!
        let wlan = UnderlyingLink(name: "wlan0", transport: .wifi)
        let rows: [(verdict: TransportVerdict, beneath: UnderlyingLink?, transport: Transport, reason: String, line: UInt)] = [
            (TransportVerdict(.vpn, "link kind tun"), wlan, .wifi, "CLAT (192.0.0.1 in RFC 7335's 192.0.0.0/29) onto wlan0", #line),
            (TransportVerdict(.vpn, "link kind tun"), nil, .other, "CLAT (192.0.0.1 in RFC 7335's 192.0.0.0/29), onto a link not known", #line),
            (TransportVerdict(.ethernet, "ARPHRD_ETHER"), nil, .ethernet, "ARPHRD_ETHER", #line),
        ]
        for row in rows {
            let verdict = TransportClassifier.clatVerdict(row.verdict, clatAddress: address, beneath: row.beneath)
            XCTAssertEqual(verdict, TransportVerdict(row.transport, row.reason), line: row.line)
        }
    }

    func testThatOnlyRFC7335sRangeMakesACLATAddress() {
        // Given / When / Then
        let rows: [(address: String, isCLAT: Bool, line: UInt)] = [
            ("192.0.0.0", true, #line), ("192.0.0.1", true, #line), ("192.0.0.4", true, #line), ("192.0.0.7", true, #line),
            ("192.0.0.8", false, #line), ("192.0.1.1", false, #line), ("10.8.0.2", false, #line), ("192.168.255.1", false, #line),
            ("::ffff:192.0.0.1", false, #line), ("64:ff9b::c000:1", false, #line),
        ]
        for row in rows {
            XCTAssertEqual(CLATPath.isCLATAddress(IPAddress(row.address)!), row.isCLAT, row.address, line: row.line)
        }
    }
}
