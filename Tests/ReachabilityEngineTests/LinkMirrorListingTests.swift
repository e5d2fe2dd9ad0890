#if canImport(Glibc)
import Glibc
#endif
import Dispatch
@testable import RTNetlink
import ReachabilityCore
import XCTest
@testable import ReachabilityEngine

/// The mirror classifies again only the links a change may concern (``LinkMirror``'s listing):
/// after every event of a sequence that stacks, bridges, bonds, renames, tunnels and deletes
/// links, its `Interfaces` are the entries of a classification of every link.
final class LinkMirrorListingTests: XCTestCase {
    private static func link(
        _ index: InterfaceIndex, _ name: String, kind: String? = nil, type: HardwareType = .ethernet, lower: InterfaceIndex? = nil,
        master: InterfaceIndex? = nil, carrier: Bool = true
    ) -> RouteNetlinkPayload {
        .newLink(LinkMessage(index: index, hardwareType: type, flags: carrier ? [.up, .lowerUp] : [.up], name: name, kind: kind, lowerIndex: lower, masterIndex: master))
    }

    private static func address(_ index: InterfaceIndex, _ bytes: [UInt8], deleted: Bool = false) -> RouteNetlinkPayload {
        let message = AddressMessage(family: UInt8(AF_INET), prefixLength: 24, flags: [], scope: 0, index: index, address: bytes)
        return deleted ? .deleteAddress(message) : .newAddress(message)
    }

    private static func deleted(_ index: InterfaceIndex) -> RouteNetlinkPayload {
        .deleteLink(LinkMessage(index: index, hardwareType: .ethernet, flags: []))
    }

    func testEveryListingEqualsAFullClassification() {
        // Given an empty mirror and a sequence of events
        let events: [(String, RouteNetlinkPayload)] = [
            ("eth0", Self.link(2, "eth0")),
            ("wlan-ish uplink without carrier", Self.link(3, "eth1", carrier: false)),
            ("a bridge", Self.link(10, "br0", kind: "bridge")),
            ("a veth port joins it", Self.link(11, "veth1", kind: "veth", master: 10)),
            ("another port", Self.link(12, "veth2", kind: "veth", master: 10)),
            ("a bond", Self.link(20, "bond0", kind: "bond")),
            ("eth1 joins the bond", Self.link(3, "eth1", master: 20, carrier: false)),
            ("the bond joins the bridge", Self.link(20, "bond0", kind: "bond", master: 10)),
            ("eth1 gets carrier (bond, then bridge, classified anew)", Self.link(3, "eth1", master: 20)),
            ("a VLAN on eth0", Self.link(30, "eth0.7", kind: "vlan", lower: 2)),
            ("eth0 renamed", Self.link(2, "lan0")),
            ("a tunnel", Self.link(40, "wg0", kind: "wireguard", type: .none)),
            ("lan0 gets an address (the tunnel's underlying)", Self.address(2, [192, 0, 2, 2])),
            ("eth0.7 gets one too (two candidates)", Self.address(30, [198, 51, 100, 2])),
            ("eth0.7's goes again", Self.address(30, [198, 51, 100, 2], deleted: true)),
            ("veth1 leaves the bridge", Self.link(11, "veth1", kind: "veth")),
            ("veth2 is deleted", Self.deleted(12)),
            ("the bond is deleted", Self.deleted(20)),
            ("lan0 loses carrier", Self.link(2, "lan0", carrier: false)),
            ("lan0 is deleted under its VLAN", Self.deleted(2)),
        ]
        let mirror = LinkMirror(
            queue: DispatchQueue(label: "LinkMirrorListingTests"), lookups: KernelLookups(),
            inspector: SysfsLinkInspector(root: "/nonexistent/reachabilityd-tests/sys")
        )
        let configuration = DaemonConfiguration.default

        // When each is applied, then the listing is what classifying every link gives
        for (name, event) in events {
            _ = mirror.apply(event)
            XCTAssertEqual(mirror.interfaces(configuration: configuration), mirror.table.interfaces(configuration: configuration), name)
        }
    }
}
