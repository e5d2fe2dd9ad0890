import ReachabilityBus
import ReachabilityCore
import ReachabilityProperties
import XCTest

/// The `Interfaces` rule: classified links, their usable addresses and the default routes in,
/// one entry per link out.
final class InterfaceListingTests: XCTestCase {
    /// One row: the facts of one link (with its addresses and routes) and the entry it must give.
    struct Row {
        var name: String
        var link: LinkFacts
        var families: Set<AddressFamily>
        var routes: [DefaultRoute]
        var expected: NetworkInterface
        var line: UInt

        init(_ name: String, _ link: LinkFacts, families: Set<AddressFamily> = [], routes: [DefaultRoute] = [], _ expected: NetworkInterface, line: UInt = #line) {
            self.name = name
            self.link = link
            self.families = families
            self.routes = routes
            self.expected = expected
            self.line = line
        }
    }

    static let gateway4 = IPAddress("192.0.2.1")!
    static let gateway4b = IPAddress("192.0.2.254")!
    static let gateway6 = IPAddress("fe80::1")!

    static func route(_ gateway: IPAddress?, on link: InterfaceIndex = 2, table: RouteTable = .main, metric: UInt32 = 0) -> DefaultRoute {
        DefaultRoute(family: gateway?.family ?? .ipv4, outputInterfaceIndex: link, gateway: gateway, table: table, metric: metric)
    }

    static let rows: [Row] = [
        Row("an Ethernet link up, with both families and a gateway each", Fixture.eth0, families: [.ipv4, .ipv6], routes: [route(gateway6), route(gateway4)],
            NetworkInterface(name: "eth0", index: 2, transport: .ethernet, operational: .up, hasIPv4: true, hasIPv6: true, gateways: [gateway4, gateway6])),
        Row("no address, no route: it still counts", Fixture.eth0,
            NetworkInterface(name: "eth0", index: 2, transport: .ethernet, operational: .up)),
        Row("without carrier", Fixture.link(Fixture.wlan0, hasCarrier: false),
            NetworkInterface(name: "wlan0", index: 3, transport: .wifi, operational: .noCarrier, ignoreReason: "no carrier")),
        Row("administratively down (with or without carrier)", Fixture.link(Fixture.eth0, isUp: false, hasCarrier: true),
            NetworkInterface(name: "eth0", index: 2, transport: .ethernet, operational: .down, ignoreReason: "link is down")),
        Row("a container interface: the classification's reason comes first",
            LinkFacts(index: 9, name: "veth1", isUp: true, hasCarrier: false, transport: .ethernet, ignoreReason: "container interface (veth*)"),
            NetworkInterface(name: "veth1", index: 9, transport: .ethernet, operational: .noCarrier, ignoreReason: "container interface (veth*)")),
        Row("a cellular link is metered", Fixture.wwan0, families: [.ipv4],
            NetworkInterface(name: "wwan0", index: 4, transport: .wwan, operational: .up, hasIPv4: true, isMetered: true)),
        Row("a tunnel is vpn, its own medium; default dev wg0 has no gateway", Fixture.wg0, families: [.ipv6], routes: [route(nil, on: 5)],
            NetworkInterface(name: "wg0", index: 5, transport: .vpn, operational: .up, hasIPv6: true)),
        Row("the link's MTU", LinkFacts(index: 6, name: "ppp0", isUp: true, hasCarrier: true, transport: .other, mtu: 1492),
            NetworkInterface(name: "ppp0", index: 6, transport: .other, operational: .up, mtu: 1492)),
        Row("gateways by metric, then table; the same next hop once",
            Fixture.eth0,
            routes: [route(gateway4, metric: 600), route(gateway4b, table: 100, metric: 100), route(gateway4, table: 100, metric: 600)],
            NetworkInterface(name: "eth0", index: 2, transport: .ethernet, operational: .up, gateways: [gateway4b, gateway4])),
        Row("another link's routes are not this one's", Fixture.eth0, routes: [route(gateway4, on: 3)],
            NetworkInterface(name: "eth0", index: 2, transport: .ethernet, operational: .up)),
    ]

    func testANameServersLinkIsResolvedsOrItsZones() {
        let zones: (String) -> InterfaceIndex? = { ["eth0": 2, "3": 3][$0] }
        let rows: [(NameServer, InterfaceIndex?, UInt)] = [
            (NameServer(address: IPAddress("192.0.2.53")!, origin: .resolvedLink(4)), 4, #line),
            (NameServer(address: IPAddress("192.0.2.53")!, origin: .resolvedGlobal), nil, #line),
            (NameServer(address: IPAddress("192.0.2.53")!, origin: .resolvConf("/etc/resolv.conf")), nil, #line),
            (NameServer(address: IPAddress("fe80::1%eth0")!, origin: .resolvConf("/etc/resolv.conf")), 2, #line),
            (NameServer(address: IPAddress("fe80::1%3")!, origin: .resolvConf("/etc/resolv.conf")), 3, #line),
            (NameServer(address: IPAddress("fe80::1%wlan9")!, origin: .resolvConf("/etc/resolv.conf")), nil, #line),
            (NameServer(address: IPAddress("2001:db8::1%eth0")!, origin: .resolvConf("/etc/resolv.conf")), nil, #line),
        ]
        for (server, link, line) in rows {
            XCTAssertEqual(server.link(indexOfZone: zones), link, "\(server.address) from \(server.origin.description)", line: line)
        }
    }

    func testThatEachLinkGivesItsEntry() {
        for row in Self.rows {
            // Given, When
            let entries = InterfaceListing.entries(links: [row.link], usableFamilies: [row.link.index: row.families], defaultRoutes: row.routes)

            // Then
            XCTAssertEqual(entries, [row.expected], row.name, line: row.line)
        }
    }

    func testThatLoopbackIsLeftOutAndTheRestIsInIndexOrder() {
        // Given
        let links = [Fixture.wlan0, Fixture.lo, Fixture.wg0, Fixture.eth0]

        // When
        let entries = InterfaceListing.entries(links: links, usableFamilies: [:], defaultRoutes: [])

        // Then
        XCTAssertEqual(entries.map(\.name), ["eth0", "wlan0", "wg0"])
    }

    func testThatAnEntryRoundTripsThroughItsBusDictionary() {
        for row in Self.rows {
            // Given
            let dictionary = row.expected.busDictionary

            // When
            let read = NetworkInterface(busDictionary: dictionary)

            // Then: the keys of the contract, and the same entry back
            XCTAssertEqual(Set(dictionary.keys), ["name", "index", "transport", "operational", "ipv4", "ipv6", "gateways", "metered", "ignored", "dns", "mtu", "network-id"], line: row.line)
            XCTAssertEqual(dictionary["index"], .unsigned32(UInt32(row.expected.index.rawValue)), line: row.line)
            XCTAssertEqual(read, row.expected, row.name, line: row.line)
        }
    }

    func testThatAReaderIgnoresUnknownKeysAndWordsAndNeedsOnlyAName() {
        // Given a newer daemon's entry: a key, a transport and a state this reader does not know
        let newer: [String: BusValue] = [
            "name": .string("sat0"), "index": .unsigned32(7), "transport": .string("satellite"), "operational": .string("dormant"),
            "gateways": .strings(["192.0.2.1", "not an address"]), "speed": .unsigned32(1000),
        ]

        // When
        let read = NetworkInterface(busDictionary: newer)

        // Then
        XCTAssertEqual(read, NetworkInterface(name: "sat0", index: 7, transport: .other, operational: .down, gateways: [Self.gateway4]))
        XCTAssertNil(NetworkInterface(busDictionary: ["index": .unsigned32(7)]), "no name, no entry")
    }

    func testThatThePropertyWritesTheEntriesBackIntoASnapshot() {
        // Given
        var snapshot = ReachabilitySnapshot.unknown
        snapshot.interfaces = Self.rows.map(\.expected)
        let value = snapshot.value(of: .interfaces, generation: 0)

        // When
        var read = ReachabilitySnapshot.unknown
        ReachabilityProperty.interfaces.definition.write?(&read, value)

        // Then
        XCTAssertEqual(value.signature, "aa{sv}")
        XCTAssertEqual(read.interfaces, snapshot.interfaces)
        XCTAssertEqual(snapshot.changedProperties(since: .unknown), [.interfaces])
    }
}
