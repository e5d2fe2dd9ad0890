import ReachabilityCore
import XCTest

/// The classification of a link's medium from netlink and sysfs facts.
final class TransportClassifierTests: XCTestCase {
    /// One row of the table: a link's raw facts and the transport they must classify as.
    struct Row {
        var name: String
        var link: LinkDescription
        var transport: Transport
        var line: UInt

        init(_ name: String, _ link: LinkDescription, _ transport: Transport, line: UInt = #line) {
            self.name = name
            self.link = link
            self.transport = transport
            self.line = line
        }
    }

    /// A link with index 2 named `name` (other facts as given).
    static func link(_ name: String = "if2", kind: String? = nil, type: HardwareType = .ethernet, devtype: String? = nil,
                     wireless: Bool = false, driver: String? = nil) -> LinkDescription {
        LinkDescription(index: 2, name: name, kind: kind, hardwareType: type, deviceType: devtype, hasWirelessDirectory: wireless, driver: driver)
    }

    static let rows: [Row] = [
        // WiFi and WWAN, from sysfs, drivers and names.
        Row("wireless directory", link(wireless: true), .wifi),
        Row("wireless directory on a veth (test fake)", link(kind: "veth", wireless: true), .wifi),
        Row("DEVTYPE wlan", link(devtype: "wlan"), .wifi),
        Row("ARPHRD_IEEE80211", link(type: HardwareType.ieee80211), .wifi),
        Row("DEVTYPE wwan", link(devtype: "wwan"), .wwan),
        Row("DEVTYPE wwan, raw IP", link(type: HardwareType.none, devtype: "wwan"), .wwan),
        Row("driver qmi_wwan", link(driver: "qmi_wwan"), .wwan),
        Row("driver cdc_mbim", link(driver: "cdc_mbim"), .wwan),
        Row("name rmnet_data0", link("rmnet_data0"), .wwan),
        Row("name wwan0", link("wwan0", type: HardwareType.none), .wwan),
        Row("raw-IP hardware type", link(type: HardwareType.rawIP), .wwan),
        Row("DEVTYPE gadget", link("usb0", devtype: "gadget"), .other),

        // Tunnels, by link kind.
        Row("kind wireguard", link(kind: "wireguard", type: HardwareType.none), .vpn),
        Row("kind tun", link(kind: "tun", type: HardwareType.none), .vpn),
        Row("kind tap", link(kind: "tap"), .vpn),
        Row("kind ppp", link(kind: "ppp", type: HardwareType.ppp), .vpn),
        Row("kind ipip", link(kind: "ipip", type: HardwareType.ipip), .vpn),
        Row("kind sit", link(kind: "sit", type: HardwareType.sit), .vpn),
        Row("kind gre", link(kind: "gre", type: HardwareType.gre), .vpn),
        Row("kind vti", link(kind: "vti", type: HardwareType.none), .vpn),
        Row("kind wireguard wins over a wireless directory", link(kind: "wireguard", type: HardwareType.none, wireless: true), .vpn),

        // Tunnels, by hardware type alone.
        Row("ARPHRD_PPP", link(type: HardwareType.ppp), .vpn),
        Row("ARPHRD_TUNNEL", link(type: HardwareType.ipip), .vpn),
        Row("ARPHRD_TUNNEL6", link(type: HardwareType.ip6ip6), .vpn),
        Row("ARPHRD_SIT", link(type: HardwareType.sit), .vpn),
        Row("ARPHRD_IPGRE", link(type: HardwareType.gre), .vpn),

        // Ethernet.
        Row("ARPHRD_ETHER without DEVTYPE", link(), .ethernet),
        Row("ARPHRD_ETHER veth", link(kind: "veth"), .ethernet),
        Row("ARPHRD_ETHER with an unknown DEVTYPE", link(devtype: "dsa"), .ethernet),

        // Stacked links with nothing beneath, and everything else.
        Row("bridge without ports", link(kind: "bridge", devtype: "bridge"), .other),
        Row("vlan without parent", link(kind: "vlan", devtype: "vlan"), .other),
        Row("loopback", link(type: HardwareType.loopback), .other),
        Row("ARPHRD_NONE without kind", link(type: HardwareType.none), .other),
    ]

    func testThatClassifyReturnsTheTransportTheTableSays() {
        for row in Self.rows {
            // Given
            let links = [row.link.index: row.link]

            // When
            let verdict = TransportClassifier.classify(row.link.index, in: links)

            // Then
            XCTAssertEqual(verdict.transport, row.transport, "\(row.name): \(verdict.reason)", line: row.line)
            XCTAssertFalse(verdict.reason.isEmpty, row.name, line: row.line)
        }
    }

    func testThatStackedLinksResolveToThePhysicalMedium() {
        // Given: vlan 10 on bond0 on eth1 (ethernet); br0 bridging wlan0 and a container veth.
        let links: [InterfaceIndex: LinkDescription] = [
            3: LinkDescription(index: 3, name: "eth1", masterIndex: 4),
            4: LinkDescription(index: 4, name: "bond0", kind: "bond", deviceType: "bond"),
            5: LinkDescription(index: 5, name: "bond0.10", kind: "vlan", deviceType: "vlan", lowerIndex: 4),
            6: LinkDescription(index: 6, name: "wlan0", deviceType: "wlan", masterIndex: 7),
            7: LinkDescription(index: 7, name: "br0", kind: "bridge", deviceType: "bridge"),
            8: LinkDescription(index: 8, name: "veth1234", kind: "veth", masterIndex: 7),
        ]

        // When
        let vlan = TransportClassifier.classify(5, in: links)
        let bridge = TransportClassifier.classify(7, in: links)

        // Then
        XCTAssertEqual(vlan.transport, .ethernet, vlan.reason)
        XCTAssertEqual(vlan.reason, "vlan on bond0: bond with port eth1: ARPHRD_ETHER")
        XCTAssertEqual(bridge.transport, .wifi, bridge.reason)
    }

    func testThatAParentInAnotherNamespaceIsNotALocalLink() {
        // Given: a container's macvlan whose parent (index 2 in the host) is elsewhere, while the
        // container's own index 2 is a wireless link; and an ipvlan whose parent is elsewhere
        let links: [InterfaceIndex: LinkDescription] = [
            2: LinkDescription(index: 2, name: "wlan0", deviceType: "wlan"),
            5: LinkDescription(index: 5, name: "mv0", kind: "macvlan", isLowerInOtherNamespace: true),
            6: LinkDescription(index: 6, name: "ipv0", kind: "ipvlan", hardwareType: HardwareType.none, isLowerInOtherNamespace: true),
        ]

        // When
        let macvlan = TransportClassifier.classify(5, in: links)
        let ipvlan = TransportClassifier.classify(6, in: links)

        // Then: judged by its own evidence, never as "with no physical link beneath"
        XCTAssertEqual(macvlan, TransportVerdict(.ethernet, "macvlan whose parent is in another network namespace: ARPHRD_ETHER"))
        XCTAssertEqual(ipvlan.transport, .other, ipvlan.reason)
        XCTAssertTrue(ipvlan.reason.hasPrefix("ipvlan whose parent is in another network namespace"), ipvlan.reason)
    }

    func testThatAStackingLoopDoesNotRecurseForever() {
        // Given: two vlans claiming each other as parent.
        let links: [InterfaceIndex: LinkDescription] = [
            2: LinkDescription(index: 2, name: "a", kind: "vlan", lowerIndex: 3),
            3: LinkDescription(index: 3, name: "b", kind: "vlan", lowerIndex: 2),
        ]

        // When
        let verdict = TransportClassifier.classify(2, in: links)

        // Then
        XCTAssertEqual(verdict.transport, .other)
    }

    func testThatConfigurationOverridesWin() {
        // Given
        let links: [InterfaceIndex: LinkDescription] = [2: LinkDescription(index: 2, name: "usb0")]
        let configuration = DaemonConfiguration(transportOverrides: [InterfaceRule(pattern: "usb*", value: .wwan)])

        // When
        let verdict = TransportClassifier.classify(2, in: links, configuration: configuration)

        // Then
        XCTAssertEqual(verdict, TransportVerdict(.wwan, "Transport=usb*:wwan in the configuration"))
    }

    func testThatContainerAndConfiguredInterfacesAreIgnored() {
        let configuration = DaemonConfiguration(ignoreInterfaces: ["tailscale*"])
        let rows: [(String, String?)] = [
            ("docker0", "container interface (docker0)"),
            ("br-5f2c1a", "container interface (br-*)"),
            ("veth9a8b", "container interface (veth*)"),
            ("cni0", "container interface (cni*)"),
            ("virbr0", "container interface (virbr*)"),
            ("tailscale0", "IgnoreInterfaces=tailscale*"),
            ("eth0", nil),
            ("br0", nil),
        ]
        for (name, expected) in rows {
            // Given
            let link = LinkDescription(index: 2, name: name)

            // When
            let reason = TransportClassifier.ignoreReason(for: link, in: [link.index: link], configuration: configuration)

            // Then
            XCTAssertEqual(reason, expected, name)
        }
    }

    func testThatABridgesPortsDecideWhetherItIsAContainerBridge() {
        // Given: bridges and their ports; rb0 is a veth with a driver (hardware of its own)
        func bridge(_ index: InterfaceIndex, _ name: String) -> LinkDescription {
            LinkDescription(index: index, name: name, kind: "bridge", deviceType: "bridge")
        }
        func port(_ index: InterfaceIndex, _ name: String, of master: InterfaceIndex, kind: String? = "veth", driver: String? = nil) -> LinkDescription {
            LinkDescription(index: index, name: name, kind: kind, driver: driver, masterIndex: master)
        }
        let links: [InterfaceIndex: LinkDescription] = [
            10: bridge(10, "br-ex"), 11: port(11, "eth1", of: 10, kind: nil, driver: "e1000e"),
            20: bridge(20, "br-lan"), 21: port(21, "vethab", of: 20), 22: port(22, "rb0", of: 20, driver: "igb"),
            30: bridge(30, "lxdbr0"), 31: port(31, "veth1", of: 30), 32: port(32, "vnet0", of: 30, kind: "tun"),
            40: bridge(40, "docker0"),
            50: bridge(50, "br0"),
            60: LinkDescription(index: 60, name: "veth9", kind: "veth"),
        ]
        let rows: [(name: String, index: InterfaceIndex, configuration: DaemonConfiguration, reason: String?, line: UInt)] = [
            ("br-* with a physical port is an uplink", 10, .default, nil, #line),
            ("one physical port among veths: an uplink", 20, .default, nil, #line),
            ("veth and tap ports only: a container bridge, whatever its name", 30, .default, "container bridge (its ports veth1, vnet0 are all veth or tap)", #line),
            ("no ports: the name decides", 40, .default, "container interface (docker0)", #line),
            ("no ports, a name not in the list", 50, .default, nil, #line),
            ("a container's veth end by name", 60, .default, "container interface (veth*)", #line),
            ("ContainerInterfaces= cleared", 60, DaemonConfiguration(containerInterfaces: []), nil, #line),
            ("ContainerInterfaces= names the bridge", 50, DaemonConfiguration(containerInterfaces: ["br0"]), "container interface (br0)", #line),
            ("Transport= makes a container bridge count", 30, DaemonConfiguration(transportOverrides: [InterfaceRule(pattern: "lxdbr*", value: .ethernet)]), nil, #line),
            ("Transport= makes a named container interface count", 40, DaemonConfiguration(transportOverrides: [InterfaceRule(pattern: "docker0", value: .ethernet)]), nil, #line),
            ("IgnoreInterfaces= wins over Transport=", 10, DaemonConfiguration(ignoreInterfaces: ["br-ex"], transportOverrides: [InterfaceRule(pattern: "br-ex", value: .ethernet)]), "IgnoreInterfaces=br-ex", #line),
        ]
        for row in rows {
            // When
            let reason = TransportClassifier.ignoreReason(for: links[row.index]!, in: links, configuration: row.configuration)

            // Then
            XCTAssertEqual(reason, row.reason, row.name, line: row.line)
        }
    }

    func testThatTheTransportBeneathATunnelIsFound() {
        // Given: wg0 (unbound), wlan0 with an address, eth0 down; gre1 bound to eth2.
        let links: [InterfaceIndex: LinkDescription] = [
            2: LinkDescription(index: 2, name: "wlan0", deviceType: "wlan"),
            3: LinkDescription(index: 3, name: "eth0", isUp: false, hasCarrier: false),
            4: LinkDescription(index: 4, name: "wg0", kind: "wireguard", hardwareType: HardwareType.none),
            5: LinkDescription(index: 5, name: "eth2"),
            6: LinkDescription(index: 6, name: "gre1", kind: "gre", hardwareType: HardwareType.gre, lowerIndex: 5),
        ]

        // When
        let wireguard = TransportClassifier.underlying(ofTunnel: 4, in: links, candidates: [2, 3, 4])
        let gre = TransportClassifier.underlying(ofTunnel: 6, in: links, candidates: [])
        let ambiguous = TransportClassifier.underlying(ofTunnel: 4, in: links, candidates: [2, 5])

        // Then
        XCTAssertEqual(wireguard?.link.name, "wlan0")
        XCTAssertEqual(wireguard?.verdict.transport, .wifi)
        XCTAssertEqual(gre?.link.name, "eth2")
        XCTAssertNil(ambiguous, "two physical candidates: the medium beneath is unknown")
    }

    func testThatHardwareTypesMatchLinuxIfArp() {
        // Given, When
        let values: [(HardwareType, UInt16, String)] = [
            (HardwareType.ethernet, 1, "ARPHRD_ETHER"),
            (HardwareType.ppp, 512, "ARPHRD_PPP"),
            (HardwareType.ipip, 768, "ARPHRD_TUNNEL"),
            (HardwareType.ip6ip6, 769, "ARPHRD_TUNNEL6"),
            (HardwareType.loopback, 772, "ARPHRD_LOOPBACK"),
            (HardwareType.sit, 776, "ARPHRD_SIT"),
            (HardwareType.gre, 778, "ARPHRD_IPGRE"),
            (HardwareType.none, 0xFFFE, "ARPHRD_NONE"),
        ]

        // Then
        for (value, expected, name) in values {
            XCTAssertEqual(value.rawValue, expected, name)
        }
    }
}
