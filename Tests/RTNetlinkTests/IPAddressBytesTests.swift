import RTNetlink
import XCTest

/// Address text to netlink bytes and back.
final class IPAddressBytesTests: XCTestCase {
    func testThatLiteralAddressesParseToTheirFamilyAndBytes() {
        let rows: [(text: String, family: UInt8, bytes: [UInt8], line: UInt)] = [
            ("0.0.0.0", ABI.Family.ipv4, [0, 0, 0, 0], #line),
            ("127.0.0.1", ABI.Family.ipv4, [127, 0, 0, 1], #line),
            ("192.168.1.10", ABI.Family.ipv4, [192, 168, 1, 10], #line),
            ("255.255.255.255", ABI.Family.ipv4, [255, 255, 255, 255], #line),
            ("::", ABI.Family.ipv6, [UInt8](repeating: 0, count: 16), #line),
            ("::1", ABI.Family.ipv6, [UInt8](repeating: 0, count: 15) + [1], #line),
            ("2001:db8::1", ABI.Family.ipv6, Fixture.documentationIPv6(1), #line),
            ("2001:DB8:0000:0000:0000:0000:0000:0001", ABI.Family.ipv6, Fixture.documentationIPv6(1), #line),
            ("fe80::1", ABI.Family.ipv6, [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1], #line),
            ("::ffff:192.0.2.1", ABI.Family.ipv6, [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 1], #line),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ABI.Family.ipv6, [UInt8](repeating: 0xff, count: 16), #line),
        ]
        for row in rows {
            // Given, When
            let parsed = IPAddressBytes.parse(row.text)

            // Then
            XCTAssertEqual(parsed?.family, row.family, row.text, line: row.line)
            XCTAssertEqual(parsed?.bytes, row.bytes, row.text, line: row.line)
        }
    }

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

    func testThatAnythingButALiteralAddressIsRejected() {
        let rows: [(text: String, line: UInt)] = [
            ("", #line),
            ("1.2.3", #line),
            ("1.2.3.4 ", #line),
            (" 1.2.3.4", #line),
            ("1.2.3.4\n", #line),
            ("1.2.3.4.5", #line),
            ("256.1.1.1", #line),
            ("1.2.3.-4", #line),
            ("127.1", #line),  // inet_aton shorthand, not a literal
            ("0x7f.0.0.1", #line),
            ("10.0.0.1/24", #line),
            ("::1%eth0", #line),  // zone suffix
            ("fe80::1%2", #line),
            ("[::1]", #line),
            ("::1/128", #line),
            ("2001:db8::1::2", #line),
            ("1:2:3:4:5:6:7:8:9", #line),
            ("2001:db8::g", #line),
            (":::", #line),
            ("example.com", #line),
            ("localhost", #line),
            ("192.0.2.1\0.example.com", #line),  // C string functions would stop at the NUL
        ]
        for row in rows {
            // Given, When
            let parsed = IPAddressBytes.parse(row.text)

            // Then
            XCTAssertNil(parsed.map { "\($0)" }, "\(row.text.debugDescription) must not parse", line: row.line)
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

    func testThatTextRoundTripsToItsCanonicalForm() throws {
        let rows: [(text: String, canonical: String, line: UInt)] = [
            ("2001:db8::1", "2001:db8::1", #line),
            ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1", #line),
            ("fe80:0:0:0:0:0:0:1", "fe80::1", #line),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1", #line),
            ("192.0.2.1", "192.0.2.1", #line),
            ("::ffff:c000:0201", "::ffff:192.0.2.1", #line),
        ]
        for row in rows {
            // Given
            let parsed = try XCTUnwrap(IPAddressBytes.parse(row.text), row.text, line: row.line)

            // When
            let text = IPAddressBytes.format(parsed.bytes, family: parsed.family)

            // Then
            XCTAssertEqual(text, row.canonical, line: row.line)
            XCTAssertEqual(IPAddressBytes.parse(text)?.bytes, parsed.bytes, line: row.line)
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
