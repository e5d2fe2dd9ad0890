import RTNetlink
import ReachabilityCore
import SystemSupport
import XCTest
@testable import ReachabilityEngine

/// How the source address a UDP `connect` selected becomes the rule's ``SourceSelection``.
final class SourceSelectionReducerTests: XCTestCase {
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
