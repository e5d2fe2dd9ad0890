@testable import RTNetlink
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
        let global = StatusReducer.sourceSelection(.success(IPAddress("192.0.2.10")!), in: table)
        let loopback = StatusReducer.sourceSelection(.success(IPAddress("::1")!), in: table)
        let refused = StatusReducer.sourceSelection(.failure(SystemError(action: "connect", errno: EADDRNOTAVAIL)), in: table)

        // Then: not held (an IPv6 route's src outliving its address), scoped by value
        XCTAssertEqual(global, .selected(SourceAddress(address: IPAddress("192.0.2.10")!, scope: .global, isHeld: false)))
        XCTAssertEqual(loopback, .selected(SourceAddress(address: IPAddress("::1")!, scope: .host, isHeld: false)))
        XCTAssertEqual(refused, .failed(errno: Errno(EADDRNOTAVAIL)))
    }
}

/// How the UDP probe's source becomes the source of the application's flow (TCP to port 443)
/// when policy rules on `ipproto` tell the two apart (issue 25, D2), or rules on `uidrange` tell
/// the daemon's probe from a bus caller's flow (issue 31: the lookup carries the caller's uid).
final class ApplicationSourceTests: XCTestCase {
    private static let ra0Address = IPAddress("10.77.0.2")!
    private static let tun0Address = IPAddress("10.99.0.2")!

    /// A source-less lookup's answer: a unicast route in `table` through link `index`, selecting `source`.
    private static func route(table: RouteTable, index: InterfaceIndex, source: IPAddress?) -> NetlinkQueryClient.RouteAnswer {
        .route(RouteMessage(
            family: 2, destinationLength: 32, table: table, type: .unicast, scope: 0, flags: [], destination: [8, 8, 8, 8], outputInterface: index,
            preferredSource: source?.bytes
        ))
    }

    /// A source, or the errno of why there is none.
    private enum Outcome: Equatable {
        case address(IPAddress)
        case errno(Int32)

        init(_ result: Result<IPAddress, SystemError>) {
            switch result {
            case .success(let address): self = .address(address)
            case .failure(let error): self = .errno(error.errno)
            }
        }
    }

    private static func refused(_ code: Int32) -> Result<IPAddress, SystemError> { .failure(SystemError(action: "connect", errno: code)) }

    func testThatTheApplicationFlowDecidesWhenTheProtocolsDisagree() {
        let main = Self.route(table: 254, index: 2, source: Self.ra0Address)
        let table100 = Self.route(table: 100, index: 5, source: Self.tun0Address)
        let rows: [(name: String, probe: Result<IPAddress, SystemError>, udp: NetlinkQueryClient.RouteAnswer, tcp: NetlinkQueryClient.RouteAnswer,
                    family: AddressFamily, expected: Outcome, line: UInt)] = [
            ("no rule on the protocol: the probe's source (it also sees IPv6 source-specific routes)",
             .success(Self.ra0Address), main, main, .ipv4, .address(Self.ra0Address), #line),
            ("both lookups fail alike: the probe's own answer",
             Self.refused(ENETUNREACH), .error(errno: ENETUNREACH), .error(errno: ENETUNREACH), .ipv6, .errno(ENETUNREACH), #line),
            ("ipproto udp dport 443 prohibit: QUIC blocked, TCP gets ra0's source",
             Self.refused(EACCES), .error(errno: EACCES), main, .ipv4, .address(Self.ra0Address), #line),
            ("ipproto tcp dport 443 prohibit: the probe got through, TCP does not",
             .success(Self.ra0Address), main, .error(errno: EACCES), .ipv4, .errno(EACCES), #line),
            ("ipproto tcp lookup 100: TCP selects tun0's source",
             .success(Self.ra0Address), main, table100, .ipv4, .address(Self.tun0Address), #line),
            ("ipproto udp lookup 100: TCP stays with the main table's source",
             .success(Self.tun0Address), table100, main, .ipv4, .address(Self.ra0Address), #line),
            ("uidrange rule, the caller's table unreachable: the caller's lookup fails, whatever the daemon's probe got",
             .success(Self.ra0Address), main, .error(errno: EHOSTUNREACH), .ipv4, .errno(EHOSTUNREACH), #line),
            ("uidrange rule to table 100 over tun0: the caller's lookup selects tun0's source",
             .success(Self.ra0Address), main, table100, .ipv4, .address(Self.tun0Address), #line),
            ("TCP's route selects no IPv4 source: 0.0.0.0, as getsockname says",
             .success(Self.ra0Address), main, Self.route(table: 100, index: 5, source: nil), .ipv4, .address(IPAddress("0.0.0.0")!), #line),
            ("TCP's route selects no IPv6 source: no address to use",
             .success(Self.ra0Address), main, Self.route(table: 100, index: 5, source: nil), .ipv6, .errno(EADDRNOTAVAIL), #line),
        ]
        for row in rows {
            // Given the probe's source and the source-less lookups with UDP's keys (the daemon's
            // uid) and TCP's (the uid asked about)

            // When
            let source = StatusReducer.applicationSource(probe: row.probe, probeFlowLookup: row.udp, applicationFlowLookup: row.tcp, family: row.family)

            // Then
            XCTAssertEqual(Outcome(source), row.expected, row.name, line: row.line)
        }
    }
}
