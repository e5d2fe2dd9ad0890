import ReachabilityCore
import XCTest

/// Which link and address changes take the engine's walk: those of the links the last
/// evaluation read (``LinksInUse``), and addresses of universe scope anywhere.
final class LinksInUseTests: XCTestCase {
    // Given a host whose default route goes out of eth0 (2), with a Kubernetes-like bridge cni0
    // (10) holding the pods' gateway address and two veth ports (11, 12), a bridge br0 (20)
    // with no address and its port veth3 (21), and a VLAN eth0.7 (30) on eth0.
    private let links: [InterfaceIndex: LinkDescription] = [
        1: LinkDescription(index: 1, name: "lo", hardwareType: .loopback, isLoopback: true),
        2: LinkDescription(index: 2, name: "eth0"),
        10: LinkDescription(index: 10, name: "cni0", kind: "bridge", deviceType: "bridge"),
        11: LinkDescription(index: 11, name: "veth1", kind: "veth", masterIndex: 10),
        12: LinkDescription(index: 12, name: "veth2", kind: "veth", masterIndex: 10),
        20: LinkDescription(index: 20, name: "br0", kind: "bridge", deviceType: "bridge"),
        21: LinkDescription(index: 21, name: "veth3", kind: "veth", masterIndex: 20),
        30: LinkDescription(index: 30, name: "eth0.7", kind: "vlan", lowerIndex: 2),
    ]

    private func inUse(routeLinks: Set<InterfaceIndex>, holders: Set<InterfaceIndex> = [2, 10], zones: Set<String> = []) -> LinksInUse {
        LinksInUse.read(
            routeLinks: routeLinks, sourceLinks: [2], links: links, globalAddressHolders: holders, defaultRouteLinks: [2], zoneNames: zones,
            configuration: .default
        )
    }

    private func link(_ index: InterfaceIndex, masters: Set<InterfaceIndex> = [], names: Set<String> = ["x"]) -> MirrorChange {
        var change = LinkChange(index: index, before: nil, after: nil)
        change.masters = masters
        change.names = names
        return .link(change)
    }

    func testWhichChangesTakeAWalk() {
        // Given the default route out of eth0
        let record = inUse(routeLinks: [2])
        let cases: [(String, MirrorChange, Bool)] = [
            ("eth0 itself (route link, source, default route)", link(2, names: ["eth0"]), true),
            ("a port joining eth0 (it is classified)", link(40, masters: [2]), true),
            ("cni0, holding a global address", link(10, names: ["cni0"]), true),
            ("a pod's veth joining cni0, which holds an address but no route of the probes", link(13, masters: [10]), false),
            ("a pod's veth in cni0 going", link(11, masters: [10], names: ["veth1"]), false),
            ("br0 without an address or route", link(20, names: ["br0"]), false),
            ("veth3, a port of br0", link(21, masters: [20]), false),
            ("a new link with nothing", link(50), false),
            ("a VLAN on eth0 (eth0 is not beneath it)", link(30, names: ["eth0.7"]), false),
            ("a link-local address on a pod's veth", .address(index: 11, isGlobalScope: false), false),
            ("a link-local address on eth0", .address(index: 2, isGlobalScope: false), true),
            ("a global address on any link", .address(index: 21, isGlobalScope: true), true),
        ]

        // When / Then
        for (name, change, expected) in cases {
            XCTAssertEqual(record.needsWalk(change), expected, name)
        }
    }

    func testABridgeOnTheRouteIsClassifiedWithItsPortsAndTheLinksBeneath() {
        // Given the default route out of br0, and one out of eth0.7
        let record = inUse(routeLinks: [20, 30], holders: [])

        // Then br0's port and eth0 beneath the VLAN are read, a port joining br0 too
        XCTAssertEqual(record.classified, [20, 21, 30, 2])
        XCTAssertTrue(record.needsWalk(link(21, names: ["veth3"])))
        XCTAssertTrue(record.needsWalk(link(22, masters: [20])))
        XCTAssertTrue(record.needsWalk(link(2, names: ["eth0"])))
        XCTAssertFalse(record.needsWalk(link(11, masters: [10])))
    }

    func testATunnelWithoutABoundLinkReadsTheLinksThatCouldCarryIt() {
        // Given a WireGuard tunnel (no IFLA_LINK) carrying the route, cni0 among the holders
        var links = links
        links[40] = LinkDescription(index: 40, name: "wg0", kind: "wireguard", hardwareType: .none)
        let record = LinksInUse.read(
            routeLinks: [40], sourceLinks: [], links: links, globalAddressHolders: [2, 10], defaultRouteLinks: [], zoneNames: [], configuration: .default
        )

        // Then the candidates are classified, with their ports
        XCTAssertTrue(record.classified.isSuperset(of: [40, 2, 10, 11, 12]))
        XCTAssertTrue(record.needsWalk(link(13, masters: [10])))
    }

    func testANameAZoneGivesAndEveryLinkBeforeTheFirstWalk() {
        // Given a nameserver fe80::1%eth9
        let record = inUse(routeLinks: [2], zones: ["eth9"])

        // Then a link appearing as eth9 takes a walk, and before any walk every change does
        XCTAssertTrue(record.needsWalk(link(60, names: ["eth9"])))
        XCTAssertFalse(record.needsWalk(link(60, names: ["eth8"])))
        XCTAssertTrue(LinksInUse.every.needsWalk(link(60)))
        XCTAssertTrue(LinksInUse.every.needsWalk(.address(index: 11, isGlobalScope: false)))
    }

    func testALinkChangeRecordsTheNamesAndMastersBeforeAndAfter() {
        // Given veth1 renamed and moved from cni0 to br0
        let before = LinkDescription(index: 11, name: "veth1", kind: "veth", masterIndex: 10)
        let after = LinkDescription(index: 11, name: "pod1", kind: "veth", masterIndex: 20)

        // Then both names and both masters are in the change; a new link has only its own
        XCTAssertEqual(LinkChange(index: 11, before: before, after: after).names, ["veth1", "pod1"])
        XCTAssertEqual(LinkChange(index: 11, before: before, after: after).masters, [10, 20])
        XCTAssertEqual(LinkChange(index: 11, before: nil, after: after).masters, [20])
        XCTAssertEqual(LinkChange(index: 11, before: before, after: nil).names, ["veth1"])
    }
}
