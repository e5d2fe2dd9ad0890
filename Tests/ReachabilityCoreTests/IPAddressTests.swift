import ReachabilityCore
import XCTest

/// Address literals: the one parser the daemon, the client library and the CLI share.
final class IPAddressTests: XCTestCase {
    private let documentation1: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]

    func testThatLiteralAddressesParseToTheirFamilyAndBytes() {
        let rows: [(text: String, family: AddressFamily, bytes: [UInt8], line: UInt)] = [
            ("0.0.0.0", .ipv4, [0, 0, 0, 0], #line),
            ("127.0.0.1", .ipv4, [127, 0, 0, 1], #line),
            ("192.168.1.10", .ipv4, [192, 168, 1, 10], #line),
            ("255.255.255.255", .ipv4, [255, 255, 255, 255], #line),
            ("::", .ipv6, [UInt8](repeating: 0, count: 16), #line),
            ("::1", .ipv6, [UInt8](repeating: 0, count: 15) + [1], #line),
            ("2001:db8::1", .ipv6, documentation1, #line),
            ("2001:DB8:0000:0000:0000:0000:0000:0001", .ipv6, documentation1, #line),
            ("fe80::1", .ipv6, [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1], #line),
            ("::ffff:192.0.2.1", .ipv6, [UInt8](repeating: 0, count: 10) + [0xff, 0xff, 192, 0, 2, 1], #line),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .ipv6, [UInt8](repeating: 0xff, count: 16), #line),
        ]
        for row in rows {
            // Given, When
            let parsed = IPAddress(row.text)

            // Then
            XCTAssertEqual(parsed?.family, row.family, row.text, line: row.line)
            XCTAssertEqual(parsed?.bytes, row.bytes, row.text, line: row.line)
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
            ("10.0.0.1%eth0", #line),  // a zone is IPv6 only
            ("fe80::1%", #line),  // an empty zone
            ("fe80::1%eth0%1", #line),
            ("fe80::1%a234567890123456", #line),  // longer than an interface name can be
            ("fe80::1%eth/0", #line),
            ("fe80::1%eth:0", #line),
            ("fe80::1%eth 0", #line),
            ("fe80::1%..", #line),
            ("%eth0", #line),
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
            let parsed = IPAddress(row.text)

            // Then
            XCTAssertNil(parsed.map { "\($0)" }, "\(row.text.debugDescription) must not parse", line: row.line)
        }
    }

    func testThatAnIPv6ZoneIsKeptAndShown() throws {
        let rows: [(text: String, zone: String, canonical: String, line: UInt)] = [
            ("fe80::1%eth1", "eth1", "fe80::1%eth1", #line),
            ("FE80:0::1%2", "2", "fe80::1%2", #line),
            ("fe80::1%a2345678901234", "a2345678901234", "fe80::1%a2345678901234", #line),  // 15 bytes
            ("2001:db8::1%br-lan.7", "br-lan.7", "2001:db8::1%br-lan.7", #line),
        ]
        for row in rows {
            // Given, When
            let parsed = try XCTUnwrap(IPAddress(row.text), row.text, line: row.line)

            // Then
            XCTAssertEqual(parsed.family, .ipv6, line: row.line)
            XCTAssertEqual(parsed.zone, row.zone, line: row.line)
            XCTAssertEqual(parsed.description, row.canonical, line: row.line)
            XCTAssertEqual(IPAddress(parsed.description), parsed, line: row.line)
        }
        XCTAssertNotEqual(IPAddress("fe80::1%eth1"), IPAddress("fe80::1%eth2"))
        XCTAssertNil(IPAddress("fe80::1")?.zone)
    }

    func testThatTheScopeOfAnAddressFollowsItsValue() {
        let rows: [(text: String, scope: AddressScope, line: UInt)] = [
            ("0.0.0.0", .unspecified, #line),
            ("127.0.0.1", .host, #line),
            ("127.255.0.9", .host, #line),
            ("169.254.7.1", .link, #line),
            ("192.0.2.10", .global, #line),
            ("10.77.0.2", .global, #line),
            ("::", .unspecified, #line),
            ("::1", .host, #line),
            ("fe80::77:2", .link, #line),
            ("fe80::1%eth1", .link, #line),
            ("febf::1", .link, #line),
            ("fec0::1", .global, #line),
            ("2001:db8::10", .global, #line),
        ]
        for row in rows {
            XCTAssertEqual(IPAddress(row.text)?.scope, row.scope, row.text, line: row.line)
        }
    }

    func testThatTextRoundTripsToItsCanonicalFormAndMappedAddressesUnmap() throws {
        let rows: [(text: String, canonical: String, unmapped: String, line: UInt)] = [
            ("2001:db8::1", "2001:db8::1", "2001:db8::1", #line),
            ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1", "2001:db8::1", #line),
            ("fe80:0:0:0:0:0:0:1", "fe80::1", "fe80::1", #line),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1", "2001:db8::1:0:0:1", #line),
            ("192.0.2.1", "192.0.2.1", "192.0.2.1", #line),
            ("::ffff:c000:0201", "::ffff:192.0.2.1", "192.0.2.1", #line),
            ("::ffff:10.77.0.1", "::ffff:10.77.0.1", "10.77.0.1", #line),
            ("::10.77.0.1", "::10.77.0.1", "::10.77.0.1", #line),  // IPv4-compatible (deprecated), not mapped
            ("::1", "::1", "::1", #line),
        ]
        for row in rows {
            // Given
            let parsed = try XCTUnwrap(IPAddress(row.text), row.text, line: row.line)

            // When
            let text = parsed.description

            // Then
            XCTAssertEqual(text, row.canonical, line: row.line)
            XCTAssertEqual(IPAddress(text), parsed, line: row.line)
            XCTAssertEqual(parsed.unmappingIPv4.description, row.unmapped, line: row.line)
        }
    }

    func testThatBytesOfTheWrongLengthMakeNoAddressButStillText() {
        XCTAssertNil(IPAddress(family: .ipv4, bytes: [1, 2, 3]))
        XCTAssertNil(IPAddress(family: .ipv6, bytes: [10, 0, 0, 1]))
        XCTAssertEqual(IPAddress(family: .ipv4, bytes: [10, 0, 0, 1])?.description, "10.0.0.1")
        // A log line or report must still show something for a malformed attribute
        XCTAssertEqual(IPAddress.text(of: [1, 2, 3], family: .ipv4), "1.2.3")
        XCTAssertEqual(IPAddress.text(of: [10, 0, 0, 1], family: .ipv6), "10.0.0.1")
        XCTAssertEqual(IPAddress.text(of: [], family: .ipv4), "")
        XCTAssertEqual(IPAddress.text(of: [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1], family: .ipv6), "fe80::1")
    }
}
