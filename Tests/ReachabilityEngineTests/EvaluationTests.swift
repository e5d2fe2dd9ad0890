#if canImport(Glibc)
import Glibc
#endif
@testable import RTNetlink
import ReachabilityCore
import SystemSupport
import XCTest
@testable import ReachabilityEngine

/// The walk's rule step, pure: the mirror, the kernel's answers and the evidence in; the
/// snapshot and the paths the active check is to follow out. A check's verdict counts only for
/// the path it went over.
final class EvaluationTests: XCTestCase {
    /// eth0 (index 2, up with carrier) holding 10.0.0.2/24 and 2001:db8::2/64.
    private static let table: LinkTable = {
        var table = LinkTable(inspector: SysfsLinkInspector(root: "/nonexistent/reachabilityd-tests/sys"))
        _ = table.apply(.newLink(LinkMessage(index: 2, hardwareType: .ethernet, flags: [.up, .lowerUp], name: "eth0")))
        _ = table.apply(.newAddress(AddressMessage(family: UInt8(AF_INET), prefixLength: 24, flags: [], scope: 0, index: 2, address: [10, 0, 0, 2])))
        _ = table.apply(.newAddress(AddressMessage(
            family: UInt8(AF_INET6), prefixLength: 64, flags: [], scope: 0, index: 2, address: IPAddress("2001:db8::2")!.bytes
        )))
        return table
    }()

    /// A route through eth0 via `gateway`, from `source`.
    private static func routed(from source: String, via gateway: String?) -> StatusReducer.KernelAnswers {
        StatusReducer.KernelAnswers(
            source: .success(IPAddress(source)!), lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: 2, gateway: gateway.flatMap(IPAddress.init)))
        )
    }

    private static let unreachable = StatusReducer.KernelAnswers(
        source: .failure(SystemError(action: "connect", errno: ENETUNREACH)), lookup: .failed(errno: Errno(ENETUNREACH))
    )
    private static let ipv4ViaRouter = routed(from: "10.0.0.2", via: "10.0.0.1")
    private static let ipv4ViaOther = routed(from: "10.0.0.2", via: "10.0.0.254")
    private static let ipv6ViaRouter = routed(from: "2001:db8::2", via: "fe80::1")
    private static let ipv4Path = CheckPath(link: 2, linkName: "eth0", gateway: IPAddress("10.0.0.1"))
    private static let ipv6Path = CheckPath(link: 2, linkName: "eth0", gateway: IPAddress("fe80::1"))
    private static let portal = "http://portal.example/login"

    private static func verdict(_ connectivity: Connectivity, on path: CheckPath, portal: String = "") -> CheckEvidence {
        CheckEvidence(path: path, connectivity: connectivity, portalURL: portal)
    }

    /// One row: the kernel's answers and the evidence held, then the evaluation's evidence,
    /// portal and paths.
    private struct Row {
        var name: String
        var ipv4: StatusReducer.KernelAnswers
        var ipv6: StatusReducer.KernelAnswers
        var gateways: [AddressFamily: Connectivity] = [:]
        var checks: [AddressFamily: CheckEvidence] = [:]
        var then: (ipv4: Connectivity?, ipv6: Connectivity?, portal: String, paths: [AddressFamily: CheckPath])
        var line: UInt
    }

    private static let rows: [Row] = [
        Row(
            name: "no route, no evidence, no path", ipv4: unreachable, ipv6: unreachable,
            then: (nil, nil, "", [:]), line: #line
        ),
        Row(
            name: "each reachable family's path: its output link and gateway", ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter,
            then: (nil, nil, "", [.ipv4: ipv4Path, .ipv6: ipv6Path]), line: #line
        ),
        Row(
            name: "a verdict on the path in use counts", ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter,
            checks: [.ipv4: verdict(.full, on: ipv4Path), .ipv6: verdict(.portal, on: ipv6Path, portal: portal)],
            then: (.full, .portal, portal, [.ipv4: ipv4Path, .ipv6: ipv6Path]), line: #line
        ),
        Row(
            name: "a verdict on the path before a gateway change does not count", ipv4: ipv4ViaOther, ipv6: unreachable,
            checks: [.ipv4: verdict(.portal, on: ipv4Path, portal: portal)],
            then: (nil, nil, "", [.ipv4: CheckPath(link: 2, linkName: "eth0", gateway: IPAddress("10.0.0.254"))]), line: #line
        ),
        Row(
            name: "a verdict on a path whose route went does not count, the gateway's evidence does", ipv4: unreachable, ipv6: ipv6ViaRouter,
            gateways: [.ipv4: .limited], checks: [.ipv4: verdict(.full, on: ipv4Path), .ipv6: verdict(.full, on: ipv6Path)],
            then: (.limited, .full, "", [.ipv6: ipv6Path]), line: #line
        ),
        Row(
            name: "a failed gateway beats the check on its path (EvidenceRule)", ipv4: ipv4ViaRouter, ipv6: unreachable,
            gateways: [.ipv4: .limited], checks: [.ipv4: verdict(.full, on: ipv4Path)],
            then: (.limited, nil, "", [.ipv4: ipv4Path]), line: #line
        ),
    ]

    func testEvaluationTable() {
        for row in Self.rows {
            // Given the mirror, the kernel's answers and the evidence held
            let routes = StatusReducer.snapshot(of: Self.table, ipv4: row.ipv4, ipv6: row.ipv6, configuration: .default)

            // When
            let evaluation = StatusReducer.evaluation(
                of: Self.table, ipv4: row.ipv4, ipv6: row.ipv6, configuration: .default, gatewayEvidence: row.gateways, checkEvidence: row.checks
            )
            let again = StatusReducer.evaluation(
                of: Self.table, ipv4: row.ipv4, ipv6: row.ipv6, configuration: .default, gatewayEvidence: row.gateways, checkEvidence: row.checks
            )

            // Then: the evidence that counts, the paths to follow, the route part the route rule's
            XCTAssertEqual(evaluation.snapshot.ipv4Evidence, row.then.ipv4, "\(row.name): IPv4 evidence", line: row.line)
            XCTAssertEqual(evaluation.snapshot.ipv6Evidence, row.then.ipv6, "\(row.name): IPv6 evidence", line: row.line)
            XCTAssertEqual(evaluation.snapshot.captivePortal, row.then.portal, "\(row.name): captive portal", line: row.line)
            XCTAssertEqual(evaluation.checkPaths, row.then.paths, "\(row.name): paths", line: row.line)
            var routePart = evaluation.snapshot
            routePart.ipv4Evidence = nil
            routePart.ipv6Evidence = nil
            routePart.captivePortal = ""
            XCTAssertEqual(routePart, routes, "\(row.name): the route part", line: row.line)
            XCTAssertEqual(again, evaluation, "\(row.name): the same inputs, the same evaluation", line: row.line)
        }
    }
}
