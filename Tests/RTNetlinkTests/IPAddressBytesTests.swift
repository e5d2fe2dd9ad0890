@testable import RTNetlink
import XCTest

/// Netlink address bytes to text, and prefixes (parsing text is NetworkTypes' `IPAddress`).
final class IPAddressBytesTests: XCTestCase {
    func testThatAPrefixContainsTheAddressesItsBitsMatch() {
        let rows: [(prefix: [UInt8]?, length: UInt8, address: [UInt8], contains: Bool, line: UInt)] = [
            (nil, 0, [10, 9, 1, 1], true, #line),
            ([0, 0, 0, 0], 0, [10, 9, 1, 1], true, #line),
            ([10, 9, 0, 0], 16, [10, 9, 1, 1], true, #line),
            ([10, 9, 0, 0], 16, [10, 8, 1, 1], false, #line),
            ([10, 8, 0, 0], 15, [10, 9, 1, 1], true, #line),
            ([10, 8, 0, 0], 16, [10, 9, 1, 1], false, #line),
            ([0, 0, 0, 0], 1, [8, 8, 8, 8], true, #line),
            ([128, 0, 0, 0], 1, [8, 8, 8, 8], false, #line),
            ([8, 8, 8, 8], 32, [8, 8, 8, 8], true, #line),
            ([8, 8, 8, 9], 32, [8, 8, 8, 8], false, #line),
            ([8, 8, 8, 9], 31, [8, 8, 8, 8], true, #line),
            (Fixture.documentationIPv6(0), 32, Fixture.documentationIPv6(1), true, #line),
            (Fixture.documentationIPv6(0), 127, Fixture.documentationIPv6(1), true, #line),
            (Fixture.documentationIPv6(0), 128, Fixture.documentationIPv6(1), false, #line),
            ([10, 9, 0, 0], 16, Fixture.documentationIPv6(1), false, #line),
        ]
        for row in rows {
            XCTAssertEqual(IPAddressBytes.prefix(row.prefix, length: row.length, contains: row.address), row.contains, "\(row)", line: row.line)
        }
    }

    func testThatFamiliesHaveTheirKernelNumbersAndLengths() {
        // Given, When, Then
        XCTAssertEqual(IPAddressBytes.ipv4Family, ABI.Family.ipv4)
        XCTAssertEqual(IPAddressBytes.ipv6Family, ABI.Family.ipv6)
        XCTAssertEqual(IPAddressBytes.length(family: ABI.Family.ipv4), 4)
        XCTAssertEqual(IPAddressBytes.length(family: ABI.Family.ipv6), 16)
        XCTAssertNil(IPAddressBytes.length(family: ABI.Family.unspecified))
        XCTAssertNil(IPAddressBytes.length(family: ABI.Family.mpls))
    }
}
