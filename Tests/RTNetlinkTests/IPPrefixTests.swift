import NetworkTypes
@testable import RTNetlink
import XCTest

/// Prefixes, and the few that cover more addresses than the route filter lists one by one.
final class IPPrefixTests: XCTestCase {
    func testThatTheCoveringPrefixIsTheLongestContainingBoth() {
        let rows: [(first: String, second: String, covering: String, line: UInt)] = [
            ("10.9.1.1", "10.9.1.1", "10.9.1.1/32", #line),
            ("10.9.1.1", "10.9.1.2", "10.9.1.0/30", #line),
            ("10.9.1.1", "10.9.2.8", "10.9.0.0/22", #line),
            ("10.9.1.1", "138.9.1.1", "0.0.0.0/0", #line),
            ("2001:db8::1", "2001:db8::8000:1", "2001:db8::/96", #line),
            ("2001:db8::1", "2001:db9::1", "2001:db8::/31", #line),
        ]
        for row in rows {
            // Given / When
            let prefix = IPPrefix.covering(IPAddress(row.first)!, IPAddress(row.second)!)

            // Then
            XCTAssertEqual(prefix.description, row.covering, line: row.line)
            XCTAssertTrue(prefix.contains(IPAddress(row.first)!) && prefix.contains(IPAddress(row.second)!), line: row.line)
        }
    }

    func testThatAddressesAreCutWhereNeighboursDifferEarliest() {
        let rows: [(addresses: [String], count: Int, prefixes: [String], line: UInt)] = [
            (["10.0.0.1", "10.0.0.2"], 2, ["10.0.0.1/32", "10.0.0.2/32"], #line),
            (["10.0.0.1", "10.0.0.2"], 1, ["10.0.0.0/30"], #line),
            // two clusters far apart: one prefix each
            (["10.9.1.1", "10.9.1.2", "10.9.1.3", "192.168.7.1", "192.168.7.9"], 2, ["10.9.1.0/30", "192.168.7.0/28"], #line),
            // the widest gap cut first, then the next
            (["10.0.0.1", "10.0.0.2", "10.0.1.1", "172.16.0.1"], 3, ["10.0.0.0/30", "10.0.1.1/32", "172.16.0.1/32"], #line),
            (["2001:db8::1", "2001:db8::2", "2001:db8:1::1"], 2, ["2001:db8::/126", "2001:db8:1::1/128"], #line),
        ]
        for row in rows {
            // Given sorted addresses
            let addresses = row.addresses.map { IPAddress($0)! }

            // When
            let prefixes = IPPrefix.aggregating(addresses, into: row.count)

            // Then
            XCTAssertEqual(prefixes.map(\.description), row.prefixes, line: row.line)
            for address in addresses {
                XCTAssertTrue(prefixes.contains { $0.contains(address) }, "\(address) uncovered", line: row.line)
            }
        }
    }
}
