@testable import RTNetlink
import XCTest

/// `RTM_NEWLINK` / `RTM_DELLINK`: `struct ifinfomsg` and the link attributes.
final class NetlinkParserLinkTests: XCTestCase {
    func testThatNewLinkIsReadFromHandWrittenBytes() throws {
        // Given
        let datagram = Fixture.eth0Link

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        XCTAssertEqual(HeaderFields(message.header), HeaderFields(length: 68, type: ABI.MessageType.newLink, flags: 0, sequence: 0, portID: 0))
        guard case let .newLink(link) = message.payload else { return XCTFail("payload \(message.payload)") }
        XCTAssertEqual(
            LinkFields(link),
            LinkFields(index: 2, hardwareType: ABI.HardwareType.ether, flags: 0x1_0001, name: "eth0", kind: "veth")
        )
        XCTAssertEqual(link.flags.rawValue, ABI.LinkFlag.up | ABI.LinkFlag.lowerUp)
    }

    func testThatDeleteLinkCarriesTheSameFields() throws {
        // Given
        let datagram = Fixture.wg0Removed

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        guard case let .deleteLink(link) = message.payload else { return XCTFail("payload \(message.payload)") }
        XCTAssertEqual(
            LinkFields(link),
            LinkFields(index: 5, hardwareType: ABI.HardwareType.none, flags: 0, name: "wg0", kind: "wireguard")
        )
    }

    func testThatIfinfomsgFieldsAreReadAtTheirOffsets() throws {
        let rows: [(index: Int32, hardwareType: UInt16, flags: UInt32, line: UInt)] = [
            (1, ABI.HardwareType.loopback, ABI.LinkFlag.up | ABI.LinkFlag.loopback | ABI.LinkFlag.running | ABI.LinkFlag.lowerUp, #line),
            (2, ABI.HardwareType.ether, 0, #line),
            (3, ABI.HardwareType.ether, ABI.LinkFlag.up, #line),
            (4, ABI.HardwareType.ether, ABI.LinkFlag.up | ABI.LinkFlag.broadcast | ABI.LinkFlag.multicast, #line),
            (5, ABI.HardwareType.none, ABI.LinkFlag.lowerUp, #line),
            (0x7fff_ffff, 0xffff, 0xffff_ffff, #line),
        ]
        for row in rows {
            // Given: ifi_change differs from ifi_flags, so reading the wrong word shows
            let datagram = Wire.message(
                type: ABI.MessageType.newLink,
                body: Wire.linkInfo(hardwareType: row.hardwareType, index: row.index, flags: row.flags, change: 0x5a5a_5a5a)
            )

            // When
            let link = try parseSingleMessage(datagram, line: row.line).payload.link

            // Then
            XCTAssertEqual(
                link, LinkFields(index: row.index, hardwareType: row.hardwareType, flags: row.flags, name: nil, kind: nil),
                line: row.line
            )
        }
    }

    func testThatOnlyUnspecifiedFamilyMessagesDescribeTheLink() throws {
        let rows: [(name: String, type: UInt16, family: UInt8, isLink: Bool, line: UInt)] = [
            ("RTM_NEWLINK AF_UNSPEC: the link", ABI.MessageType.newLink, ABI.Family.unspecified, true, #line),
            ("RTM_DELLINK AF_UNSPEC: the link is gone", ABI.MessageType.deleteLink, ABI.Family.unspecified, true, #line),
            // `ip link set eth0 nomaster`: the port leaves its bridge, eth0 stays
            ("RTM_DELLINK AF_BRIDGE: a port left its bridge", ABI.MessageType.deleteLink, ABI.Family.bridge, false, #line),
            ("RTM_NEWLINK AF_BRIDGE: a port's bridge state", ABI.MessageType.newLink, ABI.Family.bridge, false, #line),
            // IPv6's per-link information (after a router advertisement, addrgenmode)
            ("RTM_NEWLINK AF_INET6: IPv6 link information", ABI.MessageType.newLink, ABI.Family.ipv6, false, #line),
        ]
        for row in rows {
            // Given
            let datagram = Wire.message(
                type: row.type,
                body: Wire.linkInfo(family: row.family, hardwareType: ABI.HardwareType.ether, index: 2, flags: ABI.LinkFlag.up)
                    + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("eth0"))
            )

            // When
            let payload = try parseSingleMessage(datagram, line: row.line).payload

            // Then
            XCTAssertEqual(payload.link != nil, row.isLink, row.name, line: row.line)
            if !row.isLink { XCTAssertEqual(payload, .linkFamilyInformation, row.name, line: row.line) }
        }
    }

    func testThatALowerLinkInAnotherNamespaceIsMarked() throws {
        let rows: [(name: String, attributes: [UInt8], lowerIndex: Int32?, isElsewhere: Bool, line: UInt)] = [
            ("IFLA_LINK alone: a local parent", Wire.attribute(ABI.LinkAttribute.lower, Wire.u32(2)), 2, false, #line),
            ("IFLA_LINK with IFLA_LINK_NETNSID: the parent is elsewhere",
             Wire.attribute(ABI.LinkAttribute.lower, Wire.u32(2)) + Wire.attribute(ABI.LinkAttribute.linkNamespaceID, Wire.u32(0)), 2, true, #line),
            ("IFLA_LINK_NETNSID first", Wire.attribute(ABI.LinkAttribute.linkNamespaceID, Wire.u32(3)) + Wire.attribute(ABI.LinkAttribute.lower, Wire.u32(9)), 9, true, #line),
            ("neither", [], nil, false, #line),
        ]
        for row in rows {
            // Given: a container's macvlan whose parent eth0 stays in the host's namespace
            let datagram = Wire.message(
                type: ABI.MessageType.newLink,
                body: Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 5, flags: ABI.LinkFlag.up)
                    + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("mv0")) + row.attributes
            )

            // When
            guard case let .newLink(link) = try parseSingleMessage(datagram, line: row.line).payload else {
                XCTFail(row.name, line: row.line)
                continue
            }

            // Then
            XCTAssertEqual(link.lowerIndex?.rawValue, row.lowerIndex, row.name, line: row.line)
            XCTAssertEqual(link.isLowerInOtherNamespace, row.isElsewhere, row.name, line: row.line)
        }
    }

    func testThatTheKindIsFoundInsideLinkInfo() throws {
        let kind = Wire.attribute(ABI.LinkAttribute.infoKind, Wire.cString("bridge"))
        let data = Wire.attribute(ABI.LinkAttribute.infoData | ABI.nestedAttribute, Wire.attribute(1, Wire.u32(1500)))
        let rows: [(name: String, attributes: [UInt8], kind: String?, line: UInt)] = [
            ("nested flag set", Wire.nested(ABI.LinkAttribute.linkInfo, [kind]), "bridge", #line),
            ("nested flag not set (older kernels)", Wire.attribute(ABI.LinkAttribute.linkInfo, kind), "bridge", #line),
            ("after IFLA_INFO_DATA", Wire.nested(ABI.LinkAttribute.linkInfo, [data, kind]), "bridge", #line),
            ("before IFLA_INFO_DATA", Wire.nested(ABI.LinkAttribute.linkInfo, [kind, data]), "bridge", #line),
            ("link info without a kind", Wire.nested(ABI.LinkAttribute.linkInfo, [data]), nil, #line),
            ("empty link info", Wire.nested(ABI.LinkAttribute.linkInfo, []), nil, #line),
            // Type 1 at the top level is IFLA_ADDRESS (the MAC), not IFLA_INFO_KIND.
            ("type 1 outside link info", Wire.attribute(ABI.LinkAttribute.address, Array("bridge".utf8) + [0]), nil, #line),
            ("two link infos: the last wins", Wire.nested(ABI.LinkAttribute.linkInfo, [kind])
                + Wire.nested(ABI.LinkAttribute.linkInfo, [Wire.attribute(ABI.LinkAttribute.infoKind, Wire.cString("vlan"))]), "vlan", #line),
            ("two kinds in one link info: the last wins", Wire.nested(ABI.LinkAttribute.linkInfo, [
                kind, Wire.attribute(ABI.LinkAttribute.infoKind, Wire.cString("bond")),
            ]), "bond", #line),
        ]
        for row in rows {
            // Given
            let datagram = Wire.message(
                type: ABI.MessageType.newLink,
                body: Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 7, flags: ABI.LinkFlag.up)
                    + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("br0")) + row.attributes
            )

            // When
            let link = try parseSingleMessage(datagram, line: row.line).payload.link

            // Then
            XCTAssertEqual(link?.kind, row.kind, row.name, line: row.line)
            XCTAssertEqual(link?.name, "br0", row.name, line: row.line)
        }
    }

    func testThatNamesOfEveryLengthKeepTheFollowingAttributesAligned() throws {
        // Given: IFNAMSIZ allows 1 to 15 characters; with the NUL, rta_len is 6 to 20, so every
        // padding (0 to 3 bytes) occurs before IFLA_MTU and IFLA_LINKINFO
        let names = [
            "a", "lo", "br0", "eth0", "wlan0", "enp0s3", "docker0", "enp0s31f", "vethab12c", "wlp0s20f3",
            "enx00e04c6", "enp0s20f0u1", "wlx00c0ca9a1", "enp0s20f0u1u4", "enp0s20f0u10u4", "tailscale012345",
        ]
        XCTAssertEqual(Set(names.map(\.utf8.count)), Set(1...15), "the table covers every name length")

        for name in names {
            let datagram = Wire.message(
                type: ABI.MessageType.newLink,
                body: Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 9, flags: ABI.LinkFlag.up)
                    + Wire.attribute(ABI.LinkAttribute.name, Wire.cString(name))
                    + Wire.attribute(ABI.LinkAttribute.mtu, Wire.u32(1500))
                    + Wire.nested(ABI.LinkAttribute.linkInfo, [Wire.attribute(ABI.LinkAttribute.infoKind, Wire.cString("dummy"))])
            )

            // When
            let link = try parseSingleMessage(datagram).payload.link

            // Then
            XCTAssertEqual(link?.name, name)
            XCTAssertEqual(link?.kind, "dummy", "kind after a \(name.utf8.count)-character name")
        }
    }

    func testThatANameAsTheLastAttributeNeedsNoPaddingInsideTheMessage() throws {
        // Given: nlmsg_len = 16 + 16 + 10 = 42 ends right after "wlan0\0"; the datagram pads to 44
        let body = Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 3, flags: 0)
            + Array(Wire.attribute(ABI.LinkAttribute.name, Wire.cString("wlan0")).prefix(10))
        let datagram = Wire.message(type: ABI.MessageType.newLink, body: body)
        XCTAssertEqual(Wire.readU32(datagram, at: 0), 42)
        XCTAssertEqual(datagram.count, 44)

        // When
        let link = try parseSingleMessage(datagram).payload.link

        // Then
        XCTAssertEqual(link?.name, "wlan0")
    }

    func testThatNameBytesAreReadUpToTheFirstNul() throws {
        let rows: [(value: [UInt8], name: String, line: UInt)] = [
            (Array("eth0".utf8), "eth0", #line),  // no terminating NUL: the whole value
            (Array("eth0".utf8) + [0, 0x6a, 0x75, 0x6e, 0x6b], "eth0", #line),  // "eth0\0junk"
            ([0], "", #line),
            ([], "", #line),
            (Array("wlan0".utf8) + [0, 0, 0], "wlan0", #line),
        ]
        for row in rows {
            // Given
            let datagram = Wire.message(
                type: ABI.MessageType.newLink,
                body: Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 2, flags: 0)
                    + Wire.attribute(ABI.LinkAttribute.name, row.value)
            )

            // When
            let link = try parseSingleMessage(datagram, line: row.line).payload.link

            // Then
            XCTAssertEqual(link?.name, row.name, line: row.line)
        }
    }

    func testThatUnknownAttributesAreSkipped() throws {
        // Given: attributes the parser does not interpret, of every padding, around the name
        let datagram = Wire.message(
            type: ABI.MessageType.newLink,
            body: Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 2, flags: ABI.LinkFlag.up)
                + Wire.attribute(ABI.LinkAttribute.address, [0x02, 0x42, 0xac, 0x11, 0x00, 0x02])  // MAC, 2 bytes of padding
                + Wire.attribute(0, [])  // IFLA_UNSPEC, empty
                + Wire.attribute(ABI.LinkAttribute.operationalState, [6])  // IF_OPER_UP, 3 bytes of padding
                + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("eth0"))
                + Wire.attribute(0x3fff, [1, 2, 3, 4, 5, 6, 7])  // the largest type, 1 byte of padding
                + Wire.attribute(0x1234 | ABI.nestedAttribute, Wire.attribute(1, Wire.cString("not a kind")))
                + Wire.attribute(ABI.LinkAttribute.mtu | ABI.networkByteOrderAttribute, [0, 0, 0x05, 0xdc])
        )

        // When
        let link = try parseSingleMessage(datagram).payload.link

        // Then
        XCTAssertEqual(link, LinkFields(index: 2, hardwareType: ABI.HardwareType.ether, flags: ABI.LinkFlag.up, name: "eth0", kind: nil))
    }

    func testThatARepeatedNameMeansTheLastOne() throws {
        // Given
        let datagram = Wire.message(
            type: ABI.MessageType.newLink,
            body: Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 2, flags: 0)
                + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("eth0"))
                + Wire.attribute(ABI.LinkAttribute.mtu, Wire.u32(1500))
                + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("lan"))
        )

        // When
        let link = try parseSingleMessage(datagram).payload.link

        // Then
        XCTAssertEqual(link?.name, "lan")
    }
}
