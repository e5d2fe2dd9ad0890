import RTNetlink
import ReachabilityCore
import SystemSupport
import XCTest
@testable import ReachabilityEngine

/// How the source address a UDP `connect` selected becomes the rule's ``SourceSelection``.
final class SourceSelectionReducerTests: XCTestCase {
    func testThatTheScopeOfAnAddressFollowsItsValue() {
        let rows: [(text: String, scope: AddressScope, line: UInt)] = [
            ("0.0.0.0", .unspecified, #line),
            ("127.0.0.1", .host, #line),
            ("169.254.7.1", .link, #line),
            ("192.0.2.10", .global, #line),
            ("10.77.0.2", .global, #line),
            ("::", .unspecified, #line),
            ("::1", .host, #line),
            ("fe80::77:2", .link, #line),
            ("febf::1", .link, #line),
            ("fec0::1", .global, #line),
            ("2001:db8::10", .global, #line),
        ]
        for row in rows {
            // Given
            let bytes = IPAddress(row.text)!.bytes

            // When, Then
            XCTAssertEqual(StatusReducer.scope(of: bytes), row.scope, row.text, line: row.line)
        }
    }

    func testThatASourceNoLinkHoldsIsMarkedAndScopedByItsValue() {
        // Given a table that knows no address
        let table = LinkTable(inspector: SysfsLinkInspector(root: "/nonexistent"))

        // When
        let global = StatusReducer.sourceSelection(.success([192, 0, 2, 10]), family: .ipv4, in: table)
        let loopback = StatusReducer.sourceSelection(.success(IPAddress("::1")!.bytes), family: .ipv6, in: table)
        let refused = StatusReducer.sourceSelection(.failure(SystemError(action: "connect", errno: EADDRNOTAVAIL)), family: .ipv6, in: table)

        // Then: not held (an IPv6 route's src outliving its address), scoped by value
        XCTAssertEqual(global, .selected(SourceAddress(address: "192.0.2.10", scope: .global, isHeld: false)))
        XCTAssertEqual(loopback, .selected(SourceAddress(address: "::1", scope: .host, isHeld: false)))
        XCTAssertEqual(refused, .failed(errno: EADDRNOTAVAIL))
    }
}
