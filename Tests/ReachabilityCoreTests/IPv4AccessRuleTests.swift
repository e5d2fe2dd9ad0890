import ReachabilityCore
import XCTest

/// `IPv4Access`'s rule and RFC 6052's address synthesis.
final class IPv4AccessRuleTests: XCTestCase {
    func testThatEachRowDecidesItsAccess() {
        // Given / When / Then, row by row
        let clatSource = IPAddress("192.0.0.4")!, ordinary = IPAddress("10.0.0.2")!, tunSource = IPAddress("192.168.255.1")!
        let rows: [(facts: IPv4AccessFacts, expected: IPv4Access, line: UInt)] = [
            (IPv4AccessFacts(isIPv4Reachable: false), .none, #line),
            (IPv4AccessFacts(isIPv4Reachable: false, isNAT64PrefixKnown: true), .none, #line),  // prefix not routed
            (IPv4AccessFacts(isIPv4Reachable: false, isNAT64PrefixKnown: true, isSynthesizedProbeReachable: true), .nat64, #line),
            (IPv4AccessFacts(isIPv4Reachable: true, ipv4Source: ordinary), .native, #line),
            (IPv4AccessFacts(isIPv4Reachable: true, ipv4Source: ordinary, isNAT64PrefixKnown: true, isSynthesizedProbeReachable: true), .native, #line),
            // RFC 7335's range: a CLAT whatever the link (NetworkManager's CLAT is on the uplink itself)
            (IPv4AccessFacts(isIPv4Reachable: true, ipv4Source: clatSource), .clat, #line),
            (IPv4AccessFacts(isIPv4Reachable: true, ipv4Source: IPAddress("192.0.0.7")!), .clat, #line),
            (IPv4AccessFacts(isIPv4Reachable: true, ipv4Source: IPAddress("192.0.0.8")!), .native, #line),  // past the /29
            // a tun with another address: a CLAT only with a prefix known and no IPv4 uplink
            (IPv4AccessFacts(isIPv4Reachable: true, ipv4Source: tunSource, isIPv4RouteOverTun: true, isNAT64PrefixKnown: true), .clat, #line),
            (IPv4AccessFacts(isIPv4Reachable: true, ipv4Source: tunSource, isIPv4RouteOverTun: true), .native, #line),  // a VPN
            (IPv4AccessFacts(isIPv4Reachable: true, ipv4Source: tunSource, isIPv4RouteOverTun: true, hasGlobalIPv4ElsewhereThanTheRoute: true,
                             isNAT64PrefixKnown: true), .native, #line),  // a VPN over an IPv4 uplink
            (IPv4AccessFacts(isIPv4Reachable: false, ipv4Source: clatSource, isIPv4RouteOverTun: true, isNAT64PrefixKnown: true), .none, #line),
        ]
        for row in rows {
            XCTAssertEqual(IPv4AccessRule.decide(row.facts), row.expected, line: row.line)
        }
    }

    func testThatAnIPv4AddressIsEmbeddedAsRFC6052SaysForEachPrefixLength() {
        // Given / When / Then: RFC 6052 §2.4's examples (192.0.2.33), and the well-known prefix
        let ipv4 = IPAddress("192.0.2.33")!
        let rows: [(prefix: String, length: Int, expected: String?, line: UInt)] = [
            ("2001:db8::", 32, "2001:db8:c000:221::", #line),
            ("2001:db8:100::", 40, "2001:db8:1c0:2:21::", #line),
            ("2001:db8:122::", 48, "2001:db8:122:c000:2:2100::", #line),
            ("2001:db8:122:300::", 56, "2001:db8:122:3c0:0:221::", #line),
            ("2001:db8:122:344::", 64, "2001:db8:122:344:c0:2:2100:0", #line),
            ("2001:db8:122:344::", 96, "2001:db8:122:344::c000:221", #line),
            ("64:ff9b::", 96, "64:ff9b::c000:221", #line),
            ("64:ff9b::", 80, nil, #line),
        ]
        for row in rows {
            let synthesized = NAT64Synthesis.address(embedding: ipv4, in: IPAddress(row.prefix)!, length: row.length)
            XCTAssertEqual(synthesized, row.expected.flatMap(IPAddress.init), line: row.line)
        }
    }
}

/// A snapshot through a CLAT describes the uplink the CLAT translates onto.
final class CLATSnapshotTests: XCTestCase {
    func testThatACLATsTunGivesWayToTheUplinkAndTheReasonSaysViaCLAT() {
        // Given IPv4 reachable over the tun clat (vpn), IPv6 over wlan0
        var snapshot = ReachabilitySnapshot(
            status: .reachableViaOther, isIPv4Reachable: true, isIPv6Reachable: true, interface: "clat", transport: .vpn, isMetered: false,
            reason: "default route on clat (vpn), table main", ipv6Link: ("wlan0", .wifi)
        )
        let wlan = LinkFacts(index: 3, name: "wlan0", isUp: true, hasCarrier: true, transport: .wifi)
        let wwan = LinkFacts(index: 4, name: "wwan0", isUp: true, hasCarrier: true, transport: .wwan)
        let rows: [(access: IPv4Access, uplink: LinkFacts?, status: ReachabilityStatus, interface: String, transport: Transport, metered: Bool,
                    reason: String, line: UInt)] = [
            (.native, wlan, .reachableViaOther, "clat", .vpn, false, "default route on clat (vpn), table main", #line),
            (.clat, wlan, .reachableViaWiFi, "wlan0", .wifi, false, "default route on clat (vpn), table main; via CLAT on clat onto wlan0 (wifi)", #line),
            (.clat, wwan, .reachableViaWWAN, "wwan0", .wwan, true, "default route on clat (vpn), table main; via CLAT on clat onto wwan0 (wwan)", #line),
            (.clat, nil, .reachableViaOther, "clat", .vpn, false, "default route on clat (vpn), table main; via CLAT", #line),
        ]
        for row in rows {
            // When
            snapshot.ipv4Access = row.access
            let described = snapshot.describingCLAT(uplink: row.uplink)
            // Then
            XCTAssertEqual(described.status, row.status, line: row.line)
            XCTAssertEqual(described.interface, row.interface, line: row.line)
            XCTAssertEqual(described.ipv4Interface, row.interface, line: row.line)
            XCTAssertEqual(described.transport, row.transport, line: row.line)
            XCTAssertEqual(described.ipv4Transport, row.transport, line: row.line)
            XCTAssertEqual(described.isMetered, row.metered, line: row.line)
            XCTAssertEqual(described.reason, row.reason, line: row.line)
        }
    }
}
