#if canImport(Glibc)
import Glibc
#endif
@testable import RTNetlink
import ReachabilityCore
import XCTest
@testable import ReachabilityEngine

/// The mirror's default routes, which give `Interfaces` its gateways: kept from route events and
/// dumps as the kernel keeps them.
final class DefaultRouteMirrorTests: XCTestCase {
    /// eth0, index 2, up with carrier.
    private static let eth0Up = RouteNetlinkPayload.newLink(LinkMessage(index: 2, hardwareType: .ethernet, flags: [.up, .lowerUp], name: "eth0"))

    /// A route message: a default route (or one with `prefix` bits) of `type` through eth0.
    private static func route(
        _ gateway: String?, prefix: UInt8 = 0, type: RouteType = .unicast, table: RouteTable = .main, metric: UInt32? = nil
    ) -> RouteMessage {
        let address = gateway.flatMap(IPAddress.init)
        let family = address?.family ?? .ipv4
        return RouteMessage(
            family: UInt8(family == .ipv4 ? AF_INET : AF_INET6), destinationLength: prefix, table: table, type: type, scope: 0, flags: [],
            destination: prefix == 0 ? nil : [10, 0, 0, 0], outputInterface: 2, gateway: address?.bytes, priority: metric
        )
    }

    /// One event: a route message (added, replacing, deleted) or a link message.
    private enum Event {
        case add(RouteMessage)
        case replace(RouteMessage)
        case delete(RouteMessage)
        case link(RouteNetlinkPayload)
    }

    /// One row: events after eth0 came up, and the gateways eth0's entry lists then.
    private struct Row {
        var name: String
        var events: [Event]
        var gateways: [String]
        var line: UInt

        init(_ name: String, _ events: [Event], _ gateways: [String], line: UInt = #line) {
            self.name = name
            self.events = events
            self.gateways = gateways
            self.line = line
        }
    }

    private static let rows: [Row] = [
        Row("a default route's gateway is listed", [.add(route("10.0.0.1"))], ["10.0.0.1"]),
        Row("a route with a prefix gives none", [.add(route("10.0.0.1", prefix: 8))], []),
        Row("an unreachable default gives none", [.add(route(nil, type: .unreachable))], []),
        Row("a default route straight onto the link gives none", [.add(route(nil))], []),
        Row("a deleted route's gateway goes", [.add(route("10.0.0.1")), .delete(route("10.0.0.1"))], []),
        Row(
            "a replacing route takes the place of the one of its table and metric (whose deletion is not announced)",
            [.add(route("10.0.0.1", metric: 100)), .add(route("10.0.0.9", metric: 600)), .replace(route("10.0.0.3", metric: 100))],
            ["10.0.0.3", "10.0.0.9"]
        ),
        Row(
            "an appended route (no NLM_F_REPLACE) stays beside the other",
            [.add(route("10.0.0.1", metric: 100)), .add(route("10.0.0.3", metric: 100))], ["10.0.0.1", "10.0.0.3"]
        ),
        Row(
            "each table's routes count, the same next hop once, IPv4 first",
            [.add(route("fe80::1")), .add(route("10.0.0.1", table: 100)), .add(route("10.0.0.1"))], ["10.0.0.1", "fe80::1"]
        ),
        Row(
            "a link taken down loses its routes (the kernel flushes IPv4's without a word)",
            [.add(route("10.0.0.1")), .link(.newLink(LinkMessage(index: 2, hardwareType: .ethernet, flags: [], name: "eth0")))], []
        ),
        Row("a link losing carrier keeps them", [.add(route("10.0.0.1")), .link(.newLink(LinkMessage(index: 2, hardwareType: .ethernet, flags: [.up], name: "eth0")))], ["10.0.0.1"]),
    ]

    private static func emptyTable() -> LinkTable {
        LinkTable(inspector: SysfsLinkInspector(root: "/nonexistent/reachabilityd-tests/sys"))
    }

    private static func gateways(in table: LinkTable) -> [String]? {
        table.interfaces(configuration: .default).first { $0.name == "eth0" }?.gateways.map(\.description)
    }

    func testThatEachRowsEventsGiveItsGateways() {
        for row in Self.rows {
            // Given eth0 up
            var table = Self.emptyTable()
            table.apply(Self.eth0Up)

            // When
            for event in row.events {
                switch event {
                case .add(let route): table.applyDefaultRoute(.newRoute(route), replacing: false)
                case .replace(let route): table.applyDefaultRoute(.newRoute(route), replacing: true)
                case .delete(let route): table.applyDefaultRoute(.deleteRoute(route), replacing: false)
                case .link(let payload): table.apply(payload)
                }
            }

            // Then
            XCTAssertEqual(Self.gateways(in: table), row.gateways, row.name, line: row.line)
        }
    }

    func testThatADumpWithoutRoutesKeepsThoseOfTheLinksStillUpAndARouteDumpReplacesThem() {
        // Given eth0 and eth1 up, each with a default route
        var table = Self.emptyTable()
        table.apply(Self.eth0Up)
        table.apply(.newLink(LinkMessage(index: 3, hardwareType: .ethernet, flags: [.up, .lowerUp], name: "eth1")))
        table.applyDefaultRoute(.newRoute(Self.route("10.0.0.1")), replacing: false)
        var eth1Route = Self.route("10.1.0.1")
        eth1Route.outputInterface = 3
        table.applyDefaultRoute(.newRoute(eth1Route), replacing: false)

        // When a link and address dump (an overrun's) has eth0 up and eth1 down
        let dump = [Self.eth0Up, .newLink(LinkMessage(index: 3, hardwareType: .ethernet, flags: [], name: "eth1"))]
            .map { NetlinkMessage(header: NetlinkHeader(length: 0, type: NetlinkMessageType(rawValue: 0), flags: [], sequence: 0, portID: 0), payload: $0) }
        table.replace(withDump: dump, keepingDefaultRoutes: true)

        // Then eth0 keeps its route, eth1's went down with it
        XCTAssertEqual(table.defaultRoutes.map(\.outputInterfaceIndex), [2])

        // When the route dump that follows has another gateway
        table.replaceDefaultRoutes(withDump: [NetlinkMessage(header: NetlinkHeader(length: 0, type: NetlinkMessageType(rawValue: 0), flags: [], sequence: 0, portID: 0), payload: .newRoute(Self.route("10.0.0.3")))])

        // Then it is the dump's
        XCTAssertEqual(Self.gateways(in: table), ["10.0.0.3"])
    }
}
