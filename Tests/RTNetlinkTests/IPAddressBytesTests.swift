import RTNetlink
import XCTest

/// Netlink address bytes to text, and prefixes (parsing text is ReachabilityCore's `IPAddress`).
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

    func testThatFormattingGivesTheCanonicalText() {
        let rows: [(bytes: [UInt8], family: UInt8, text: String, line: UInt)] = [
            ([10, 0, 0, 1], ABI.Family.ipv4, "10.0.0.1", #line),
            ([0, 0, 0, 0], ABI.Family.ipv4, "0.0.0.0", #line),
            ([255, 255, 255, 255], ABI.Family.ipv4, "255.255.255.255", #line),
            (Fixture.documentationIPv6(1), ABI.Family.ipv6, "2001:db8::1", #line),
            ([0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1], ABI.Family.ipv6, "fe80::1", #line),
            ([UInt8](repeating: 0, count: 16), ABI.Family.ipv6, "::", #line),
            ([UInt8](repeating: 0, count: 15) + [1], ABI.Family.ipv6, "::1", #line),
            ([UInt8](repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 1], ABI.Family.ipv6, "::ffff:192.0.2.1", #line),
            ([UInt8](repeating: 0xff, count: 16), ABI.Family.ipv6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", #line),
        ]
        for row in rows {
            // Given, When
            let text = IPAddressBytes.format(row.bytes, family: row.family)

            // Then
            XCTAssertEqual(text, row.text, line: row.line)
        }
    }

    func testThatBytesOfTheWrongLengthFormatAsDottedBytes() {
        // Given, When, Then: a log line must still show something for a malformed attribute
        XCTAssertEqual(IPAddressBytes.format([1, 2, 3], family: ABI.Family.ipv4), "1.2.3")
        XCTAssertEqual(IPAddressBytes.format([10, 0, 0, 1], family: ABI.Family.ipv6), "10.0.0.1")
        XCTAssertEqual(IPAddressBytes.format([0, 1, 0x91, 0], family: ABI.Family.mpls), "0.1.145.0")
        XCTAssertEqual(IPAddressBytes.format([], family: ABI.Family.ipv4), "")
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
