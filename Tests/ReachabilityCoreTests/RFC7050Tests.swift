import ReachabilityCore
import XCTest

/// RFC 7050 §3: the NAT64 prefix from the AAAA answers for ipv4only.arpa.
final class RFC7050Tests: XCTestCase {
    func testThatEachPrefixLengthIsFoundFromEitherWellKnownAddress() {
        // The answers a DNS64 synthesizes with each RFC 6052 prefix length (192.0.0.170 is
        // c0.00.00.aa, 192.0.0.171 c0.00.00.ab; bits 64-71 stay zero).
        let rows: [(answers: [String], prefixes: [String], line: UInt)] = [
            (["64:ff9b::c000:aa", "64:ff9b::c000:ab"], ["64:ff9b::/96"], #line),
            (["2001:db8:64:0:c0:0:aa00:0"], ["2001:db8:64::/64"], #line),
            (["2001:db8:100:c0:0:aa:0:0"], ["2001:db8:100::/56"], #line),
            (["2001:db8:1:c000:0:ab00::"], ["2001:db8:1::/48"], #line),
            (["2001:db8:c0:0:aa::"], ["2001:db8::/40"], #line),
            (["2001:db8:c000:aa::"], ["2001:db8::/32"], #line),
            // two prefixes, in the answers' order, each once
            (["2001:db8:64::c000:ab", "64:ff9b::c000:aa", "64:ff9b::c000:ab"], ["2001:db8:64::/96", "64:ff9b::/96"], #line),
            // not synthesized: a real address of the name, another IPv4 address embedded, a
            // suffix that is not zero, an IPv4 answer
            (["2001:db8::1"], [], #line),
            (["64:ff9b::c000:201"], [], #line),
            (["2001:db8:c000:aa::1"], [], #line),
            (["192.0.0.170"], [], #line),
            ([], [], #line),
        ]
        for row in rows {
            let found = RFC7050.prefixes(fromAnswers: row.answers.map { IPAddress($0)! }).map { "\($0.network)/\($0.length)" }
            XCTAssertEqual(found, row.prefixes, line: row.line)
        }
    }
}
