@testable import RTNetlink
import XCTest

/// Malformed datagrams become typed errors: framing errors end the datagram, payload errors
/// skip one message.
final class NetlinkParserMalformedTests: XCTestCase {
    func testThatAnEmptyDatagramHasNoMessages() {
        // Given, When
        let results = NetlinkParser.parse(datagram: [])

        // Then
        XCTAssertEqual(results, [])
    }

    func testThatFewerBytesThanAHeaderAreATruncatedHeader() {
        for count in 1..<ABI.Size.header {
            // Given
            let datagram = Array(Fixture.eth0Link.prefix(count))

            // When
            let results = NetlinkParser.parse(datagram: datagram)

            // Then
            XCTAssertEqual(results, [.failure(.truncatedHeader(offset: 0, available: count))], "\(count) bytes")
        }
    }

    func testThatTrailingBytesAfterTheLastMessageAreATruncatedHeader() {
        for count in [1, 4, 15] {
            // Given: 68 bytes of link, then `count` bytes
            let datagram = Fixture.eth0Link + [UInt8](repeating: 0, count: count)

            // When
            let results = parseOutcomes(datagram)

            // Then
            XCTAssertEqual(results.count, 2, "\(count) trailing bytes: \(results)")
            XCTAssertEqual(results.first?.map(\.link?.name), .success("eth0"))
            XCTAssertEqual(results.last, .failure(.truncatedHeader(offset: 68, available: count)), "\(count) trailing bytes")
        }
    }

    func testThatAMessageLengthBelowTheHeaderSizeEndsTheDatagram() {
        for length: UInt32 in [0, 1, 4, 15] {
            // Given: a link with a bad nlmsg_len, then a valid NLMSG_DONE that must not be read
            var datagram = Fixture.eth0Link + Fixture.dumpDone
            datagram.replaceSubrange(0..<4, with: Wire.u32(length))

            // When
            let results = NetlinkParser.parse(datagram: datagram)

            // Then
            XCTAssertEqual(
                results, [.failure(.invalidMessageLength(offset: 0, length: length, available: 88))], "nlmsg_len \(length)"
            )
        }
    }

    func testThatAMessageLengthPastTheEndEndsTheDatagram() {
        for length: UInt32 in [69, 72, 0xffff, 0x8000_0000, 0xffff_ffff] {
            // Given
            var datagram = Fixture.eth0Link
            datagram.replaceSubrange(0..<4, with: Wire.u32(length))

            // When
            let results = NetlinkParser.parse(datagram: datagram)

            // Then
            XCTAssertEqual(
                results, [.failure(.invalidMessageLength(offset: 0, length: length, available: 68))], "nlmsg_len \(length)"
            )
        }
    }

    func testThatABadLengthInTheSecondMessageKeepsTheFirst() {
        // Given: link (68 bytes), NLMSG_DONE claiming 200 bytes, then an acknowledgement never reached
        var done = Fixture.dumpDone
        done.replaceSubrange(0..<4, with: Wire.u32(200))
        let datagram = Fixture.eth0Link + done + Fixture.acknowledgement

        // When
        let results = parseOutcomes(datagram)

        // Then
        XCTAssertEqual(results.count, 2, "results: \(results)")
        XCTAssertEqual(results.first?.map(\.link?.name), .success("eth0"))
        XCTAssertEqual(results.last, .failure(.invalidMessageLength(offset: 68, length: 200, available: 20 + 36)))
    }

    func testThatAShortFixedPayloadSkipsOnlyItsMessage() {
        let rows: [(name: String, type: UInt16, available: Int, needed: Int, line: UInt)] = [
            ("ifinfomsg of 8 bytes", ABI.MessageType.newLink, 8, 16, #line),
            ("ifinfomsg of 15 bytes", ABI.MessageType.newLink, 15, 16, #line),
            ("RTM_DELLINK without ifinfomsg", ABI.MessageType.deleteLink, 0, 16, #line),
            ("ifaddrmsg of 7 bytes", ABI.MessageType.newAddress, 7, 8, #line),
            ("RTM_DELADDR without ifaddrmsg", ABI.MessageType.deleteAddress, 0, 8, #line),
            ("rtmsg of 11 bytes", ABI.MessageType.newRoute, 11, 12, #line),
            ("RTM_DELROUTE with 4 bytes", ABI.MessageType.deleteRoute, 4, 12, #line),
            ("NLMSG_ERROR with 3 bytes", ABI.MessageType.error, 3, 4, #line),
            ("NLMSG_ERROR without a code", ABI.MessageType.error, 0, 4, #line),
        ]
        for row in rows {
            // Given: the short message, then a valid NLMSG_DONE in the same datagram
            let short = Wire.message(type: row.type, body: [UInt8](repeating: 0x01, count: row.available))
            let datagram = short + Fixture.dumpDone

            // When
            let results = parseOutcomes(datagram)

            // Then
            XCTAssertEqual(
                results,
                [.failure(.truncatedPayload(messageType: row.type, needed: row.needed, available: row.available)), .success(.done)],
                row.name, line: row.line
            )
        }
    }

    func testThatABadAttributeLengthSkipsOnlyItsMessage() {
        let link = Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 2, flags: 0)
        let name = Wire.attribute(ABI.LinkAttribute.name, Wire.cString("eth0"))  // 12 bytes with padding
        let route = Wire.routeInfo(
            family: ABI.Family.ipv4, destinationLength: 0, table: ABI.Table.main, protocol: ABI.RouteProtocol.boot,
            scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: 0
        )
        let address = Wire.addressInfo(family: ABI.Family.ipv4, prefixLength: 24, flags: 0, scope: ABI.Scope.universe, index: 2)
        let rows: [(name: String, type: UInt16, body: [UInt8], error: NetlinkParseError, line: UInt)] = [
            ("rta_len 0", ABI.MessageType.newLink, link + Wire.attribute(ABI.LinkAttribute.name, [], length: 0),
             .invalidAttributeLength(messageType: ABI.MessageType.newLink, attributeType: 3, length: 0, available: 4), #line),
            ("rta_len 1", ABI.MessageType.newLink, link + Wire.attribute(ABI.LinkAttribute.name, [], length: 1),
             .invalidAttributeLength(messageType: ABI.MessageType.newLink, attributeType: 3, length: 1, available: 4), #line),
            ("rta_len 3 after a valid attribute", ABI.MessageType.newLink,
             link + name + Wire.attribute(ABI.LinkAttribute.mtu, Wire.u32(1500), length: 3),
             .invalidAttributeLength(messageType: ABI.MessageType.newLink, attributeType: 4, length: 3, available: 8), #line),
            ("rta_len past the message", ABI.MessageType.newLink,
             link + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("eth0"), length: 64),
             .invalidAttributeLength(messageType: ABI.MessageType.newLink, attributeType: 3, length: 64, available: 12), #line),
            ("rta_len one past the message", ABI.MessageType.deleteLink,
             link + Array(Wire.attribute(ABI.LinkAttribute.name, Wire.cString("eth0"), length: 10).prefix(9)),
             .invalidAttributeLength(messageType: ABI.MessageType.deleteLink, attributeType: 3, length: 10, available: 9), #line),
            ("nested type reported without NLA_F_NESTED", ABI.MessageType.newLink,
             link + Wire.attribute(ABI.LinkAttribute.linkInfo | ABI.nestedAttribute, [], length: 0xffff),
             .invalidAttributeLength(messageType: ABI.MessageType.newLink, attributeType: 18, length: 0xffff, available: 4), #line),
            ("inside IFLA_LINKINFO", ABI.MessageType.newLink,
             link + Wire.nested(ABI.LinkAttribute.linkInfo, [Wire.attribute(ABI.LinkAttribute.infoKind, [], length: 2)]),
             .invalidAttributeLength(messageType: ABI.MessageType.newLink, attributeType: 1, length: 2, available: 4), #line),
            ("address attribute past the message", ABI.MessageType.newAddress,
             address + Wire.attribute(ABI.AddressAttribute.local, [10, 0, 0, 1], length: 9),
             .invalidAttributeLength(messageType: ABI.MessageType.newAddress, attributeType: 2, length: 9, available: 8), #line),
            ("route attribute of rta_len 2", ABI.MessageType.deleteRoute,
             route + Wire.attribute(ABI.RouteAttribute.gateway, [10, 0, 0, 1], length: 2),
             .invalidAttributeLength(messageType: ABI.MessageType.deleteRoute, attributeType: 5, length: 2, available: 8), #line),
        ]
        for row in rows {
            // Given: the broken message, then a valid NLMSG_DONE in the same datagram
            let datagram = Wire.message(type: row.type, body: row.body) + Fixture.dumpDone

            // When
            let results = parseOutcomes(datagram)

            // Then
            XCTAssertEqual(results, [.failure(row.error), .success(.done)], row.name, line: row.line)
        }
    }

    func testThatAnAttributeOfTheWrongSizeSkipsOnlyItsMessage() {
        func route(_ family: UInt8, _ attribute: [UInt8]) -> [UInt8] {
            Wire.routeInfo(
                family: family, destinationLength: 0, table: ABI.Table.main, protocol: ABI.RouteProtocol.boot,
                scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: 0
            ) + attribute
        }
        func address(_ family: UInt8, _ attribute: [UInt8]) -> [UInt8] {
            Wire.addressInfo(family: family, prefixLength: 24, flags: 0, scope: ABI.Scope.universe, index: 2) + attribute
        }
        let ipv4 = ABI.Family.ipv4
        let ipv6 = ABI.Family.ipv6
        let newRoute = ABI.MessageType.newRoute
        let newAddress = ABI.MessageType.newAddress
        let rows: [(name: String, type: UInt16, body: [UInt8], attribute: UInt16, length: Int, line: UInt)] = [
            ("RTA_OIF of 3 bytes", newRoute, route(ipv4, Wire.attribute(ABI.RouteAttribute.outputInterface, [2, 0, 0])), 4, 3, #line),
            ("RTA_OIF of 8 bytes", newRoute, route(ipv4, Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(2) + Wire.u32(0))), 4, 8, #line),
            ("RTA_PRIORITY of 2 bytes", newRoute, route(ipv6, Wire.attribute(ABI.RouteAttribute.priority, [0, 4])), 6, 2, #line),
            ("RTA_TABLE of 0 bytes", newRoute, route(ipv4, Wire.attribute(ABI.RouteAttribute.table, [])), 15, 0, #line),
            ("RTA_GATEWAY of 5 bytes for AF_INET", newRoute, route(ipv4, Wire.attribute(ABI.RouteAttribute.gateway, [10, 0, 0, 1, 0])), 5, 5, #line),
            ("RTA_GATEWAY of 16 bytes for AF_INET", newRoute, route(ipv4, Wire.attribute(ABI.RouteAttribute.gateway, Fixture.documentationIPv6(1))), 5, 16, #line),
            ("RTA_GATEWAY of 4 bytes for AF_INET6", newRoute, route(ipv6, Wire.attribute(ABI.RouteAttribute.gateway, [10, 0, 0, 1])), 5, 4, #line),
            ("RTA_DST of 3 bytes for AF_INET", ABI.MessageType.deleteRoute, route(ipv4, Wire.attribute(ABI.RouteAttribute.destination, [10, 0, 0])), 1, 3, #line),
            ("IFA_ADDRESS of 16 bytes for AF_INET", newAddress, address(ipv4, Wire.attribute(ABI.AddressAttribute.address, Fixture.documentationIPv6(1))), 1, 16, #line),
            ("IFA_LOCAL of 4 bytes for AF_INET6", ABI.MessageType.deleteAddress, address(ipv6, Wire.attribute(ABI.AddressAttribute.local, [10, 0, 0, 1])), 2, 4, #line),
            ("IFA_FLAGS of 1 byte", newAddress, address(ipv6, Wire.attribute(ABI.AddressAttribute.flags, [0x40])), 8, 1, #line),
        ]
        for row in rows {
            // Given: the broken message, then a valid NLMSG_DONE in the same datagram
            let datagram = Wire.message(type: row.type, body: row.body) + Fixture.dumpDone

            // When
            let results = parseOutcomes(datagram)

            // Then
            XCTAssertEqual(
                results,
                [.failure(.invalidAttributeValue(messageType: row.type, attributeType: row.attribute, length: row.length)), .success(.done)],
                row.name, line: row.line
            )
        }
    }

    func testThatParseErrorsDescribeThemselvesForTheLog() {
        let rows: [(error: NetlinkParseError, description: String, line: UInt)] = [
            (.truncatedHeader(offset: 68, available: 3), "truncated netlink header at offset 68 (3 bytes left)", #line),
            (.invalidMessageLength(offset: 0, length: 4, available: 20), "invalid netlink message length 4 at offset 0 (20 bytes left)", #line),
            (.truncatedPayload(messageType: 16, needed: 16, available: 8), "netlink message type 16 too short: 8 bytes, needs 16", #line),
            (.invalidAttributeLength(messageType: 24, attributeType: 5, length: 2, available: 8),
             "netlink message type 24: attribute 5 has invalid length 2 (8 bytes left)", #line),
            (.invalidAttributeValue(messageType: 24, attributeType: 4, length: 3),
             "netlink message type 24: attribute 4 has unexpected size 3", #line),
            (.invalidErrorCode(101), "netlink error message with invalid code 101", #line),
        ]
        for row in rows {
            // Given, When, Then
            XCTAssertEqual(row.error.description, row.description, line: row.line)
        }
    }
}
