#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import ReachabilityProperties
import XCTest

/// `CheckDestination`'s rule: which path, where to connect, and which IPv4 addresses a NAT64
/// does not translate.
final class DestinationRuleTests: XCTestCase {
    private static let networkSpecific = NAT64Prefix("2001:db8:64::/96")!
    private static let clat = LinkFacts(
        index: 8, name: "clat", isUp: true, hasCarrier: true, transport: .wifi, underlying: UnderlyingLink(name: "wlan0", transport: .wifi),
        clatAddress: IPAddress("192.0.0.1")!
    )
    private static let tun0 = LinkFacts(index: 9, name: "tun0", isUp: true, hasCarrier: true, transport: .vpn, underlying: UnderlyingLink(name: "wlan0", transport: .wifi))

    func testThatEachRowChoosesItsPathAndAddress() {
        // Given the kernel's answers per destination (IPv6 over wlan0; IPv4 as each row says)
        let ipv6Route = Fixture.routed(.ipv6, via: Fixture.wlan0)
        let noIPv4Route = Fixture.failed(.ipv4, errno: ENETUNREACH)
        let native = Fixture.routed(.ipv4, via: Fixture.eth0)
        let overCLAT = Fixture.routed(.ipv4, via: Self.clat, source: .selected(SourceAddress(address: IPAddress("192.0.0.1")!, scope: .global)))
        let overVPN = Fixture.routed(.ipv4, via: Self.tun0, source: .selected(SourceAddress(address: IPAddress("10.8.0.2")!, scope: .global)))
        let rows: [(asked: String, ipv4: DestinationFacts, prefix: NAT64Prefix?, status: ReachabilityStatus, interface: String, via: DestinationPath,
                    address: String, reason: String, line: UInt)] = [
            ("192.0.2.1", native, nil, .reachableViaEthernet, "eth0", .direct, "192.0.2.1", "default route via 10.0.0.1 on eth0", #line),
            ("192.0.2.1", native, Self.networkSpecific, .reachableViaEthernet, "eth0", .direct, "192.0.2.1", "default route via 10.0.0.1 on eth0", #line),
            ("::ffff:8.8.8.8", native, nil, .reachableViaEthernet, "eth0", .direct, "::ffff:8.8.8.8", "default route", #line),
            ("8.8.8.8", noIPv4Route, nil, .notReachable, "", .direct, "8.8.8.8", "no default route", #line),
            // no IPv4 route, a prefix known: the synthesized address's route
            ("8.8.8.8", noIPv4Route, .wellKnown, .reachableViaWiFi, "wlan0", .nat64, "64:ff9b::808:808",
             "through NAT64 at 64:ff9b::808:808 (prefix 64:ff9b::/96): default route via fe80::1 on wlan0", #line),
            ("10.99.0.1", noIPv4Route, Self.networkSpecific, .reachableViaWiFi, "wlan0", .nat64, "2001:db8:64::a63:1", "through NAT64", #line),
            // what the well-known prefix does not translate (RFC 6052 §3.1), and what nothing does
            ("10.1.2.3", noIPv4Route, .wellKnown, .notReachable, "", .direct, "10.1.2.3",
             "10.1.2.3 is private-use (10.0.0.0/8), which NAT64 with the well-known prefix 64:ff9b::/96 does not translate (RFC 6052 §3.1)", #line),
            ("192.0.2.1", noIPv4Route, .wellKnown, .notReachable, "", .direct, "192.0.2.1", "documentation (192.0.2.0/24)", #line),
            ("127.0.0.1", noIPv4Route, Self.networkSpecific, .notReachable, "", .direct, "127.0.0.1", "loopback (127.0.0.0/8), which no NAT64", #line),
            ("169.254.1.1", noIPv4Route, Self.networkSpecific, .notReachable, "", .direct, "169.254.1.1", "which no NAT64 translates", #line),
            // a CLAT: the uplink's link
            ("8.8.8.8", overCLAT, Self.networkSpecific, .reachableViaWiFi, "wlan0", .clat, "8.8.8.8", "; via CLAT on clat onto wlan0 (wifi)", #line),
            ("8.8.8.8", overCLAT, nil, .reachableViaWiFi, "wlan0", .clat, "8.8.8.8", "on clat (CLAT over wlan0, wifi), table main; via CLAT on clat", #line),
            ("10.1.2.3", overCLAT, Self.networkSpecific, .reachableViaWiFi, "wlan0", .clat, "10.1.2.3", "; via CLAT on clat onto wlan0 (wifi)", #line),
            // through a CLAT, what the NAT64 behind it does not translate stays not reachable
            ("10.1.2.3", overCLAT, .wellKnown, .notReachable, "", .clat, "10.1.2.3",
             "10.1.2.3 is private-use (10.0.0.0/8), which NAT64 with the well-known prefix 64:ff9b::/96 does not translate (RFC 6052 §3.1)", #line),
            ("192.168.1.1", overCLAT, .wellKnown, .notReachable, "", .clat, "192.168.1.1", "private-use (192.168.0.0/16)", #line),
            ("100.64.0.1", overCLAT, .wellKnown, .notReachable, "", .clat, "100.64.0.1", "shared address space", #line),
            ("192.0.2.1", overCLAT, .wellKnown, .notReachable, "", .clat, "192.0.2.1", "documentation (192.0.2.0/24)", #line),
            ("198.18.0.1", overCLAT, .wellKnown, .notReachable, "", .clat, "198.18.0.1", "benchmarking", #line),
            ("169.254.1.1", overCLAT, Self.networkSpecific, .notReachable, "", .clat, "169.254.1.1", "which no NAT64 translates", #line),
            ("240.0.0.1", overCLAT, nil, .notReachable, "", .clat, "240.0.0.1", "reserved (240.0.0.0/4), which no NAT64 translates", #line),
            ("0.1.2.3", overCLAT, nil, .notReachable, "", .clat, "0.1.2.3", "\"this network\" (0.0.0.0/8), which no NAT64 translates", #line),
            // a tun VPN, on an IPv6-only uplink with a prefix known: direct, its own network included
            ("10.8.0.1", overVPN, .wellKnown, .reachableViaWiFi, "tun0", .direct, "10.8.0.1", "on tun0 (vpn over wlan0, wifi)", #line),
            // IPv6: direct, or nat64 inside the prefix
            ("2001:db8::1", noIPv4Route, nil, .reachableViaWiFi, "wlan0", .direct, "2001:db8::1", "default route via fe80::1 on wlan0", #line),
            ("64:ff9b::808:808", noIPv4Route, .wellKnown, .reachableViaWiFi, "wlan0", .nat64, "64:ff9b::808:808", "default route", #line),
            // IPv6 inside the prefix that embeds what the NAT64 does not translate
            ("64:ff9b::a01:203", noIPv4Route, .wellKnown, .notReachable, "", .nat64, "64:ff9b::a01:203",
             "64:ff9b::a01:203 embeds 10.1.2.3, which is private-use (10.0.0.0/8), which NAT64 with the well-known prefix", #line),
            ("64:ff9b::a9fe:101", noIPv4Route, .wellKnown, .notReachable, "", .nat64, "64:ff9b::a9fe:101", "embeds 169.254.1.1, which is link-local", #line),
            ("2001:db8:64::a01:203", noIPv4Route, Self.networkSpecific, .reachableViaWiFi, "wlan0", .nat64, "2001:db8:64::a01:203", "default route", #line),
            ("2001:db8:64::7f00:1", noIPv4Route, Self.networkSpecific, .notReachable, "", .nat64, "2001:db8:64::7f00:1",
             "embeds 127.0.0.1, which is loopback (127.0.0.0/8), which no NAT64 translates", #line),
            // the unspecified address: where a connection to it goes, loopback
            ("0.0.0.0", noIPv4Route, nil, .reachableViaOther, "lo", .direct, "0.0.0.0",
             "a connection to 0.0.0.0 goes to 127.0.0.1 (Linux sends the unspecified address to loopback): local route", #line),
            ("::", noIPv4Route, nil, .reachableViaOther, "lo", .direct, "::",
             "a connection to :: goes to ::1 (Linux sends the unspecified address to loopback): local route", #line),
            ("::ffff:0.0.0.0", noIPv4Route, .wellKnown, .reachableViaOther, "lo", .direct, "::ffff:0.0.0.0", "goes to 127.0.0.1", #line),
        ]
        for row in rows {
            // When
            let address = IPAddress(row.asked)!.unmappingIPv4
            let answer = DestinationRule.answer(
                for: address, as: row.asked, context: DestinationRule.Context(nat64Prefix: row.prefix, clatUplink: Fixture.wlan0),
                facts: { asked in
                    // (the unspecified address is asked as loopback, which routes to this host)
                    if address.bytes.allSatisfy({ $0 == 0 }) { return Fixture.thisHost(asked.family) }
                    return asked.family == .ipv4 ? row.ipv4 : ipv6Route
                }
            )
            // Then
            XCTAssertEqual(answer.verdict.status, row.status, line: row.line)
            XCTAssertEqual(answer.verdict.link?.name ?? "", row.interface, line: row.line)
            XCTAssertEqual(answer.path, row.via, line: row.line)
            XCTAssertEqual(answer.address, row.address, line: row.line)
            XCTAssertTrue(answer.verdict.reason.contains(row.reason), "\(answer.verdict.reason)", line: row.line)
        }
    }

    func testThatTheSynthesizedAddressIsNotAskedAboutWhenTheNAT64DoesNotTranslate() {
        // Given no IPv4 route and the well-known prefix
        var asked: [IPAddress] = []
        // When a private address is checked
        _ = DestinationRule.answer(
            for: IPAddress("192.168.1.1")!, as: "192.168.1.1", context: DestinationRule.Context(nat64Prefix: .wellKnown),
            facts: { asked.append($0); return Fixture.failed($0.family, errno: ENETUNREACH) }
        )
        // Then only the literal was asked about
        XCTAssertEqual(asked, [IPAddress("192.168.1.1")!])
    }

    func testThatEachSpecialPurposeRangeIsTranslatedOrNotAsRFC6052Says() {
        // Given / When / Then: (address, with the well-known prefix, with a network-specific one)
        let rows: [(address: String, wellKnown: Bool, networkSpecific: Bool, line: UInt)] = [
            ("8.8.8.8", true, true, #line),
            ("10.0.0.1", false, true, #line),
            ("172.31.255.255", false, true, #line),
            ("172.32.0.1", true, true, #line),
            ("192.168.0.1", false, true, #line),
            ("100.64.0.1", false, true, #line),
            ("100.128.0.1", true, true, #line),
            ("192.0.0.1", false, true, #line),
            ("192.0.0.9", true, true, #line),  // PCP anycast: global
            ("192.0.0.10", true, true, #line),  // TURN anycast: global
            ("192.0.2.1", false, true, #line),
            ("198.18.0.1", false, true, #line),
            ("198.19.255.255", false, true, #line),
            ("198.51.100.7", false, true, #line),
            ("203.0.113.7", false, true, #line),
            ("0.1.2.3", false, false, #line),
            ("127.0.0.1", false, false, #line),
            ("169.254.169.254", false, false, #line),
            ("224.0.0.251", false, false, #line),
            ("240.0.0.1", false, false, #line),
            ("255.255.255.255", false, false, #line),
        ]
        for row in rows {
            let address = IPAddress(row.address)!
            XCTAssertEqual(IPv4SpecialPurpose.refusal(of: address, through: .wellKnown) == nil, row.wellKnown, line: row.line)
            XCTAssertEqual(IPv4SpecialPurpose.refusal(of: address, through: Self.networkSpecific) == nil, row.networkSpecific, line: row.line)
        }
    }

    func testThatTheReplyDictionaryHasEveryKeyAsAString() {
        // Given an answer through NAT64
        let facts = Fixture.routed(.ipv6, via: Fixture.wlan0)
        let answer = DestinationRule.answer(
            for: IPAddress("8.8.8.8")!, as: "8.8.8.8", context: DestinationRule.Context(nat64Prefix: .wellKnown),
            facts: { $0.family == .ipv4 ? Fixture.failed(.ipv4, errno: ENETUNREACH) : facts }
        )
        // When
        let dictionary = answer.dictionary
        // Then
        XCTAssertEqual(dictionary["status"], .string("reachable-via-wifi"))
        XCTAssertEqual(dictionary["interface"], .string("wlan0"))
        XCTAssertEqual(dictionary["transport"], .string("wifi"))
        XCTAssertEqual(dictionary["source"], .string("2001:db8::10"))
        XCTAssertEqual(dictionary["gateway"], .string("fe80::1"))
        XCTAssertEqual(dictionary["via"], .string("nat64"))
        XCTAssertEqual(dictionary["address"], .string("64:ff9b::808:808"))
        XCTAssertEqual(Set(dictionary.keys), ["status", "interface", "transport", "source", "gateway", "via", "address", "reason"])
    }

    func testThatThePrefixParsesNAT64PrefixsForm() {
        XCTAssertEqual(NAT64Prefix("64:ff9b::/96"), .wellKnown)
        XCTAssertEqual(NAT64Prefix("2001:db8:100::/40")?.description, "2001:db8:100::/40")
        XCTAssertNil(NAT64Prefix(""))
        XCTAssertNil(NAT64Prefix("64:ff9b::/80"))
        XCTAssertNil(NAT64Prefix("10.0.0.0/8"))
    }
}
