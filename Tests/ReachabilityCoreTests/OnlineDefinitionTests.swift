import ReachabilityCore
import XCTest

/// What "online" means for `reachabilityctl wait` and reachabilityd-wait-online.service.
final class OnlineDefinitionTests: XCTestCase {
    /// A snapshot: reachable over `interface` per family, with the checks' evidence.
    static func snapshot(_ status: ReachabilityStatus, ipv4: Bool = true, ipv6: Bool = false, interface: String = "eth0",
                         evidence: Connectivity? = nil, metered: Bool = false) -> ReachabilitySnapshot {
        ReachabilitySnapshot(status: status, isIPv4Reachable: ipv4, isIPv6Reachable: ipv6, interface: interface,
                             transport: nil, isMetered: metered, reason: "", ipv4Evidence: evidence, ipv6Evidence: evidence)
    }

    func testTable() {
        let ethernet = Self.snapshot(.reachableViaEthernet)
        let rows: [(name: String, definition: OnlineDefinition, snapshot: ReachabilitySnapshot, online: Bool, line: UInt)] = [
            // Given the default (reachable)
            ("reachable over ethernet", OnlineDefinition(), ethernet, true, #line),
            ("not reachable", OnlineDefinition(), Self.snapshot(.notReachable, ipv4: false, interface: ""), false, #line),
            ("unknown (daemon gone)", OnlineDefinition(), Self.snapshot(.unknown, ipv4: false, interface: ""), false, #line),
            // A family
            ("ipv4 asked, ipv4 reachable", OnlineDefinition(family: .ipv4), ethernet, true, #line),
            ("ipv6 asked, ipv4 only", OnlineDefinition(family: .ipv6), ethernet, false, #line),
            ("both asked, ipv4 only", OnlineDefinition(family: .both), ethernet, false, #line),
            ("both asked, both reachable", OnlineDefinition(family: .both), Self.snapshot(.reachableViaEthernet, ipv6: true), true, #line),
            // A transport
            ("ethernet asked, over ethernet", OnlineDefinition(transport: .ethernet), ethernet, true, #line),
            ("wifi asked, over ethernet", OnlineDefinition(transport: .wifi), ethernet, false, #line),
            // An interface set (globs)
            ("eth0 asked, over eth0", OnlineDefinition(interfaces: ["eth0"]), ethernet, true, #line),
            ("en* or eth*, over eth0", OnlineDefinition(interfaces: ["en*", "eth*"]), ethernet, true, #line),
            ("br0 asked, over eth0", OnlineDefinition(interfaces: ["br0"]), ethernet, false, #line),
            // A connectivity (with checks on)
            ("limited asked, no evidence yet (unknown)", OnlineDefinition(connectivity: .limited), ethernet, false, #line),
            ("limited asked, limited", OnlineDefinition(connectivity: .limited), Self.snapshot(.reachableViaEthernet, evidence: .limited), true, #line),
            ("full asked, portal", OnlineDefinition(connectivity: .full), Self.snapshot(.reachableViaEthernet, evidence: .portal), false, #line),
            ("full asked, full", OnlineDefinition(connectivity: .full), Self.snapshot(.reachableViaEthernet, evidence: .full), true, #line),
            ("full asked, full evidence but not reachable", OnlineDefinition(connectivity: .full),
             Self.snapshot(.notReachable, ipv4: false, evidence: .full), false, #line),
            // Unmetered
            ("unmetered asked, unmetered", OnlineDefinition(isUnmeteredRequired: true), ethernet, true, #line),
            ("unmetered asked, metered", OnlineDefinition(isUnmeteredRequired: true), Self.snapshot(.reachableViaWiFi, metered: true), false, #line),
            ("unmetered asked, not reachable (Metered false)", OnlineDefinition(isUnmeteredRequired: true),
             Self.snapshot(.notReachable, ipv4: false, interface: ""), false, #line),
            ("not asked, metered", OnlineDefinition(), Self.snapshot(.reachableViaWWAN, metered: true), true, #line),
        ]
        for row in rows {
            // When / Then
            XCTAssertEqual(row.definition.isOnline(row.snapshot), row.online, row.name, line: row.line)
        }
    }

    func testEachRequiredFamilyIsMatchedAgainstItsOwnRoute() {
        // Given IPv4 via eth0 (ethernet, the status's) and IPv6 via wlan0 (wifi)
        let split = ReachabilitySnapshot(
            status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: true, interface: "eth0", transport: .ethernet,
            isMetered: false, reason: "", ipv4Evidence: .full, ipv6Evidence: .limited,
            ipv4Link: ("eth0", .ethernet), ipv6Link: ("wlan0", .wifi)
        )
        // and IPv4 via a tunnel over WiFi (the status names the medium beneath), IPv6 via another tunnel
        let tunnels = ReachabilitySnapshot(
            status: .reachableViaWiFi, isIPv4Reachable: true, isIPv6Reachable: true, interface: "wg0", transport: .vpn,
            isMetered: false, reason: "", ipv4Link: ("wg0", .vpn), ipv6Link: ("wg1", .vpn)
        )
        let rows: [(name: String, definition: OnlineDefinition, snapshot: ReachabilitySnapshot, online: Bool, line: UInt)] = [
            // An interface set: the status's route without a family, else each family's
            ("no family, IPv4's link", OnlineDefinition(interfaces: ["eth0"]), split, true, #line),
            ("no family, IPv6's link", OnlineDefinition(interfaces: ["wlan0"]), split, false, #line),
            ("IPv6, its link", OnlineDefinition(family: .ipv6, interfaces: ["wlan0"]), split, true, #line),
            ("IPv6, IPv4's link", OnlineDefinition(family: .ipv6, interfaces: ["eth0"]), split, false, #line),
            ("IPv4, its link", OnlineDefinition(family: .ipv4, interfaces: ["eth*"]), split, true, #line),
            ("IPv4, IPv6's link", OnlineDefinition(family: .ipv4, interfaces: ["wlan0"]), split, false, #line),
            ("both, each its own", OnlineDefinition(family: .both, interfaces: ["eth0", "wlan0"]), split, true, #line),
            ("both, only IPv4's listed", OnlineDefinition(family: .both, interfaces: ["eth0"]), split, false, #line),
            // A transport, likewise
            ("no family, wifi (IPv6's)", OnlineDefinition(transport: .wifi), split, false, #line),
            ("IPv6, wifi", OnlineDefinition(family: .ipv6, transport: .wifi), split, true, #line),
            ("IPv6, ethernet (IPv4's)", OnlineDefinition(family: .ipv6, transport: .ethernet), split, false, #line),
            ("IPv4, ethernet", OnlineDefinition(family: .ipv4, transport: .ethernet), split, true, #line),
            ("both, ethernet", OnlineDefinition(family: .both, transport: .ethernet), split, false, #line),
            ("IPv4 on the status's tunnel: the medium beneath", OnlineDefinition(family: .ipv4, transport: .wifi), tunnels, true, #line),
            ("IPv6 on another tunnel: no medium known", OnlineDefinition(family: .ipv6, transport: .wifi), tunnels, false, #line),
            // A connectivity, likewise (IPv4 full, IPv6 limited)
            ("no family, full: the better family's", OnlineDefinition(connectivity: .full), split, true, #line),
            ("IPv4, full", OnlineDefinition(family: .ipv4, connectivity: .full), split, true, #line),
            ("IPv6, full", OnlineDefinition(family: .ipv6, connectivity: .full), split, false, #line),
            ("IPv6, limited", OnlineDefinition(family: .ipv6, connectivity: .limited), split, true, #line),
            ("both, full", OnlineDefinition(family: .both, connectivity: .full), split, false, #line),
        ]
        for row in rows {
            // When / Then
            XCTAssertEqual(row.definition.isOnline(row.snapshot), row.online, row.name, line: row.line)
        }
    }

    func testNoCarrierGiveUp() {
        // Given a 5 s give-up started at t=100, when the observations come in order, then:
        let rows: [(name: String, observations: [(carrier: Bool, at: Double)], givesUp: Bool, line: UInt)] = [
            ("no carrier for 4.9 s: not yet", [(false, 101), (false, 104.9)], false, #line),
            ("no carrier for 5 s from the start: give up", [(false, 101), (false, 105)], true, #line),
            ("carrier now: never give up", [(true, 200)], false, #line),
            ("carrier at 103, none at 107.9: not yet (the clock restarted)", [(true, 103), (false, 107.9)], false, #line),
            ("carrier at 103, none at 108: give up", [(true, 103), (false, 108)], true, #line),
        ]
        for row in rows {
            var giveUp = NoCarrierGiveUp(seconds: 5, start: 100)
            var last = false
            for observation in row.observations { last = giveUp.observe(anyCarrier: observation.carrier, at: observation.at) }
            XCTAssertEqual(last, row.givesUp, row.name, line: row.line)
        }
    }

    func testOnlyLinksThatCouldLeadOutCountForTheGiveUpWithoutCarrier() {
        // Given a namespace's links (index 1 is lo)
        func link(_ index: InterfaceIndex, _ name: String, kind: String? = nil, driver: String? = nil, hardwareType: HardwareType = .ethernet,
                  lower: InterfaceIndex? = nil, lowerElsewhere: Bool = false, master: InterfaceIndex? = nil,
                  up: Bool = true, carrier: Bool = true, loopback: Bool = false) -> LinkDescription {
            LinkDescription(index: index, name: name, kind: kind, hardwareType: hardwareType, driver: driver, lowerIndex: lower,
                            isLowerInOtherNamespace: lowerElsewhere, masterIndex: master, isUp: up, hasCarrier: carrier, isLoopback: loopback)
        }
        let links = [
            link(1, "lo", hardwareType: HardwareType.loopback, loopback: true),
            link(2, "eth0", driver: "e1000e"),
            link(3, "eth1", driver: "e1000e", carrier: false),
            link(4, "eth2", driver: "e1000e", up: false, carrier: false),
            link(5, "ra0", kind: "veth", lower: 6), link(6, "ra1", kind: "veth", lower: 5),
            link(7, "host0", kind: "veth", lowerElsewhere: true),
            link(8, "vethc0a1b2", kind: "veth", lowerElsewhere: true),
            link(11, "eth3", driver: "igb", master: 12), link(12, "br0", kind: "bridge"),
            link(13, "vc0", kind: "veth", lowerElsewhere: true, master: 14), link(14, "lxcbr0", kind: "bridge"),
            link(15, "dummy0", kind: "dummy"),
            link(16, "wg0", kind: "wireguard", hardwareType: HardwareType.none),
            link(17, "tun0", kind: "tun", hardwareType: HardwareType.none),
            link(18, "gre1", kind: "gre", hardwareType: HardwareType.gre, lowerElsewhere: true),
            link(19, "ppp0", hardwareType: HardwareType.ppp),
            link(20, "ppp1", kind: "ppp", hardwareType: HardwareType.ppp),
            link(21, "mv0", kind: "macvlan", lowerElsewhere: true),
            link(22, "eth9", driver: "e1000e"),
        ]
        let byIndex = Dictionary(uniqueKeysWithValues: links.map { ($0.index, $0) })
        let configuration = DaemonConfiguration(ignoreInterfaces: ["eth9"])
        let rows: [(name: String, counts: Bool, line: UInt)] = [
            ("lo", false, #line),
            ("eth0", true, #line), ("eth1", false, #line), ("eth2", false, #line),
            // a veth pair inside the namespace: what one end sends, the other receives here
            ("ra0", false, #line), ("ra1", false, #line),
            // a container's own link, its peer on the host: a way out
            ("host0", true, #line),
            // a container's end on the host (ContainerInterfaces=veth*)
            ("vethc0a1b2", false, #line),
            // a port: its master counts instead
            ("eth3", false, #line), ("br0", true, #line),
            // a bridge whose ports are all containers' ends is ignored by the daemon
            ("vc0", false, #line), ("lxcbr0", false, #line),
            ("dummy0", false, #line), ("wg0", false, #line), ("tun0", false, #line),
            // a tunnel over another namespace's links, PPP (a modem's own), a container's macvlan
            ("gre1", true, #line), ("ppp0", true, #line), ("ppp1", true, #line), ("mv0", true, #line),
            ("eth9", false, #line),
        ]
        XCTAssertEqual(Set(rows.map(\.name)), Set(links.map(\.name)), "every link has a row")
        for row in rows {
            // When
            let link = links.first { $0.name == row.name }!
            let counts = NoCarrierGiveUp.countsCarrier(of: link, in: byIndex, configuration: configuration)

            // Then
            XCTAssertEqual(counts, row.counts, row.name, line: row.line)
        }
        // and any counting link is carrier enough; none is none
        XCTAssertTrue(NoCarrierGiveUp.anyCarrier(in: byIndex, configuration: configuration))
        let withoutWayOut = byIndex.filter { ![2, 7, 12, 18, 19, 20, 21].contains($0.key) }
        XCTAssertFalse(NoCarrierGiveUp.anyCarrier(in: withoutWayOut, configuration: configuration))
    }
}
