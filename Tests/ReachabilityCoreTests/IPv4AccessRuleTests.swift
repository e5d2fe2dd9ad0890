import ReachabilityCore
import XCTest

/// `IPv4Access`'s rule and RFC 6052's address synthesis.
final class IPv4AccessRuleTests: XCTestCase {
    func testThatEachRowDecidesItsAccess() {
        // Given / When / Then, row by row (whole rows, from the links, in CLATPathTests)
        let rows: [(facts: IPv4AccessFacts, expected: IPv4Access, line: UInt)] = [
            (IPv4AccessFacts(isIPv4Reachable: false), .none, #line),
            (IPv4AccessFacts(isIPv4Reachable: false, isNAT64PrefixKnown: true), .none, #line),  // prefix not routed
            (IPv4AccessFacts(isIPv4Reachable: false, isNAT64PrefixKnown: true, isSynthesizedProbeReachable: true), .nat64, #line),
            (IPv4AccessFacts(isIPv4Reachable: true), .native, #line),
            (IPv4AccessFacts(isIPv4Reachable: true, isNAT64PrefixKnown: true, isSynthesizedProbeReachable: true), .native, #line),
            (IPv4AccessFacts(isIPv4Reachable: true, isIPv4RouteThroughCLAT: true), .clat, #line),
            (IPv4AccessFacts(isIPv4Reachable: true, isIPv4RouteThroughCLAT: true, isNAT64PrefixKnown: true), .clat, #line),
            (IPv4AccessFacts(isIPv4Reachable: false, isIPv4RouteThroughCLAT: true, isNAT64PrefixKnown: true), .none, #line),
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
            // and the address embedded is read back from it
            XCTAssertEqual(synthesized.flatMap { NAT64Synthesis.ipv4(embeddedIn: $0, length: row.length) }, row.expected.map { _ in ipv4 }, line: row.line)
        }
    }
}
