import ReachabilityCore
import XCTest

/// The classification of a link's medium from netlink and sysfs facts.
final class TransportClassifierTests: XCTestCase {
    /// One row of the table: a link's raw facts and the transport they must classify as.
    struct Row {
        var name: String
        var facts: LinkClassificationFacts
        var transport: Transport
        var line: UInt

        init(_ name: String, _ facts: LinkClassificationFacts, _ transport: Transport, line: UInt = #line) {
            self.name = name
            self.facts = facts
            self.transport = transport
            self.line = line
        }
    }

    static let rows: [Row] = [
        // WiFi and WWAN, from sysfs.
        Row("wireless directory", LinkClassificationFacts(hardwareType: HardwareType.ethernet, hasWirelessDirectory: true), .wifi),
        Row("DEVTYPE wlan", LinkClassificationFacts(hardwareType: HardwareType.ethernet, deviceType: "wlan"), .wifi),
        Row("DEVTYPE wwan", LinkClassificationFacts(hardwareType: HardwareType.ethernet, deviceType: "wwan"), .wwan),
        Row("DEVTYPE wwan, raw IP", LinkClassificationFacts(hardwareType: HardwareType.none, deviceType: "wwan"), .wwan),

        // Tunnels, by link kind.
        Row("kind wireguard", LinkClassificationFacts(kind: "wireguard", hardwareType: HardwareType.none), .vpn),
        Row("kind tun", LinkClassificationFacts(kind: "tun", hardwareType: HardwareType.none), .vpn),
        Row("kind tap", LinkClassificationFacts(kind: "tap", hardwareType: HardwareType.ethernet), .vpn),
        Row("kind ppp", LinkClassificationFacts(kind: "ppp", hardwareType: HardwareType.ppp), .vpn),
        Row("kind ipip", LinkClassificationFacts(kind: "ipip", hardwareType: HardwareType.ipip), .vpn),
        Row("kind sit", LinkClassificationFacts(kind: "sit", hardwareType: HardwareType.sit), .vpn),
        Row("kind gre", LinkClassificationFacts(kind: "gre", hardwareType: HardwareType.gre), .vpn),

        // Tunnels, by hardware type alone.
        Row("ARPHRD_PPP", LinkClassificationFacts(hardwareType: HardwareType.ppp), .vpn),
        Row("ARPHRD_TUNNEL", LinkClassificationFacts(hardwareType: HardwareType.ipip), .vpn),
        Row("ARPHRD_TUNNEL6", LinkClassificationFacts(hardwareType: HardwareType.ip6ip6), .vpn),
        Row("ARPHRD_SIT", LinkClassificationFacts(hardwareType: HardwareType.sit), .vpn),
        Row("ARPHRD_IPGRE", LinkClassificationFacts(hardwareType: HardwareType.gre), .vpn),

        // Ethernet, and Ethernet-framed links that are something else.
        Row("ARPHRD_ETHER without DEVTYPE", LinkClassificationFacts(hardwareType: HardwareType.ethernet), .ethernet),
        Row("ARPHRD_ETHER veth", LinkClassificationFacts(kind: "veth", hardwareType: HardwareType.ethernet), .ethernet),
        Row("ARPHRD_ETHER DEVTYPE bridge", LinkClassificationFacts(kind: "bridge", hardwareType: HardwareType.ethernet, deviceType: "bridge"), .other),
        Row("ARPHRD_ETHER DEVTYPE vlan", LinkClassificationFacts(kind: "vlan", hardwareType: HardwareType.ethernet, deviceType: "vlan"), .other),

        // Everything else.
        Row("loopback", LinkClassificationFacts(hardwareType: HardwareType.loopback), .other),
        Row("ARPHRD_NONE without kind", LinkClassificationFacts(hardwareType: HardwareType.none), .other),
    ]

    func testThatClassifyReturnsTheTransportTheTableSays() {
        for row in Self.rows {
            // Given
            let facts = row.facts

            // When
            let transport = TransportClassifier.classify(facts)

            // Then
            XCTAssertEqual(transport, row.transport, row.name, line: row.line)
        }
    }

    func testThatHardwareTypesMatchLinuxIfArp() {
        // Given, When
        let values: [(UInt16, UInt16, String)] = [
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
            XCTAssertEqual(value, expected, name)
        }
    }
}
