@testable import RTNetlink
import XCTest

/// The exact bytes of the requests the daemon sends, and what the parser reads back from them.
final class NetlinkRequestTests: XCTestCase {
    func testThatALinkDumpRequestIsAHeaderAndAnEmptyIfinfomsg() {
        // Given, When
        let bytes = NetlinkRequest.dumpLinks(sequence: 0x0102_0304)

        // Then
        XCTAssertEqual(bytes, [
            // struct nlmsghdr
            0x20, 0x00, 0x00, 0x00,  // nlmsg_len = 32
            0x12, 0x00,  // nlmsg_type = RTM_GETLINK (18)
            0x01, 0x03,  // nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP (0x301)
            0x04, 0x03, 0x02, 0x01,  // nlmsg_seq
            0x00, 0x00, 0x00, 0x00,  // nlmsg_pid = 0 (the kernel assigns)
            // struct ifinfomsg: every family, every link
            0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
        ])
    }

    func testThatAnAddressDumpRequestIsAHeaderAndAnEmptyIfaddrmsg() {
        // Given, When
        let bytes = NetlinkRequest.dumpAddresses(sequence: 7)

        // Then
        XCTAssertEqual(bytes, [
            // struct nlmsghdr
            0x18, 0x00, 0x00, 0x00,  // nlmsg_len = 24
            0x16, 0x00,  // nlmsg_type = RTM_GETADDR (22)
            0x01, 0x03,  // nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP (0x301)
            0x07, 0x00, 0x00, 0x00,  // nlmsg_seq = 7
            0x00, 0x00, 0x00, 0x00,  // nlmsg_pid = 0
            // struct ifaddrmsg: AF_UNSPEC, every address
            0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00,
        ])
    }

    func testThatAnIPv4RouteLookupAsksForOneHostRoute() {
        // Given, When
        let bytes = NetlinkRequest.lookupRoute(to: [8, 8, 8, 8], family: ABI.Family.ipv4, sequence: 42)

        // Then
        XCTAssertEqual(bytes, [
            // struct nlmsghdr
            0x24, 0x00, 0x00, 0x00,  // nlmsg_len = 36
            0x1a, 0x00,  // nlmsg_type = RTM_GETROUTE (26)
            0x01, 0x00,  // nlmsg_flags = NLM_F_REQUEST (no dump: one answer)
            0x2a, 0x00, 0x00, 0x00,  // nlmsg_seq = 42
            0x00, 0x00, 0x00, 0x00,  // nlmsg_pid = 0
            // struct rtmsg
            0x02, 0x20, 0x00, 0x00,  // rtm_family = AF_INET, rtm_dst_len = 32, rtm_src_len, rtm_tos
            0x00, 0x00, 0x00, 0x00,  // rtm_table, rtm_protocol, rtm_scope, rtm_type
            0x00, 0x10, 0x00, 0x00,  // rtm_flags = RTM_F_LOOKUP_TABLE (0x1000)
            // RTA_DST
            0x08, 0x00, 0x01, 0x00,  // rta_len = 8, rta_type = RTA_DST (1)
            0x08, 0x08, 0x08, 0x08,  // 8.8.8.8
        ])
    }

    func testThatAnIPv6RouteLookupAsksForOneHostRoute() {
        // Given
        let destination: [UInt8] = [0x20, 0x01, 0x48, 0x60, 0x48, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x88]  // 2001:4860:4860::8888

        // When
        let bytes = NetlinkRequest.lookupRoute(to: destination, family: ABI.Family.ipv6, sequence: 0xffff_ffff)

        // Then
        XCTAssertEqual(bytes, [
            // struct nlmsghdr
            0x30, 0x00, 0x00, 0x00,  // nlmsg_len = 48
            0x1a, 0x00,  // nlmsg_type = RTM_GETROUTE (26)
            0x01, 0x00,  // nlmsg_flags = NLM_F_REQUEST
            0xff, 0xff, 0xff, 0xff,  // nlmsg_seq = UInt32.max
            0x00, 0x00, 0x00, 0x00,  // nlmsg_pid = 0
            // struct rtmsg
            0x0a, 0x80, 0x00, 0x00,  // rtm_family = AF_INET6, rtm_dst_len = 128, rtm_src_len, rtm_tos
            0x00, 0x00, 0x00, 0x00,  // rtm_table, rtm_protocol, rtm_scope, rtm_type
            0x00, 0x10, 0x00, 0x00,  // rtm_flags = RTM_F_LOOKUP_TABLE (0x1000)
            // RTA_DST
            0x14, 0x00, 0x01, 0x00,  // rta_len = 20, rta_type = RTA_DST (1)
        ] + destination)
    }

    func testThatARouteLookupFromASourceCarriesIt() {
        // Given, When: the lookup for the source a UDP connect selected
        let bytes = NetlinkRequest.lookupRoute(to: [8, 8, 8, 8], family: ABI.Family.ipv4, source: [192, 0, 2, 10], sequence: 7)

        // Then
        XCTAssertEqual(bytes, [
            // struct nlmsghdr
            0x2c, 0x00, 0x00, 0x00,  // nlmsg_len = 44
            0x1a, 0x00,  // nlmsg_type = RTM_GETROUTE (26)
            0x01, 0x00,  // nlmsg_flags = NLM_F_REQUEST
            0x07, 0x00, 0x00, 0x00,  // nlmsg_seq = 7
            0x00, 0x00, 0x00, 0x00,  // nlmsg_pid = 0
            // struct rtmsg
            0x02, 0x20, 0x20, 0x00,  // rtm_family = AF_INET, rtm_dst_len = 32, rtm_src_len = 32, rtm_tos
            0x00, 0x00, 0x00, 0x00,  // rtm_table, rtm_protocol, rtm_scope, rtm_type
            0x00, 0x10, 0x00, 0x00,  // rtm_flags = RTM_F_LOOKUP_TABLE (0x1000)
            // RTA_DST
            0x08, 0x00, 0x01, 0x00,  // rta_len = 8, rta_type = RTA_DST (1)
            0x08, 0x08, 0x08, 0x08,  // 8.8.8.8
            // RTA_SRC
            0x08, 0x00, 0x02, 0x00,  // rta_len = 8, rta_type = RTA_SRC (2)
            0xc0, 0x00, 0x02, 0x0a,  // 192.0.2.10
        ])
    }

    func testThatARouteLookupForAFlowCarriesItsProtocolAndPort() {
        // Given, When: the lookup for a TCP connection to port 443 (`ip route get 8.8.8.8
        // ipproto tcp dport 443`), which policy rules on ipproto and dport match
        let bytes = NetlinkRequest.lookupRoute(to: [8, 8, 8, 8], family: ABI.Family.ipv4, flow: FlowKeys(.tcp, destinationPort: 443), sequence: 9)

        // Then
        XCTAssertEqual(bytes, [
            // struct nlmsghdr
            0x34, 0x00, 0x00, 0x00,  // nlmsg_len = 52
            0x1a, 0x00,  // nlmsg_type = RTM_GETROUTE (26)
            0x01, 0x00,  // nlmsg_flags = NLM_F_REQUEST
            0x09, 0x00, 0x00, 0x00,  // nlmsg_seq = 9
            0x00, 0x00, 0x00, 0x00,  // nlmsg_pid = 0
            // struct rtmsg
            0x02, 0x20, 0x00, 0x00,  // rtm_family = AF_INET, rtm_dst_len = 32, rtm_src_len, rtm_tos
            0x00, 0x00, 0x00, 0x00,  // rtm_table, rtm_protocol, rtm_scope, rtm_type
            0x00, 0x10, 0x00, 0x00,  // rtm_flags = RTM_F_LOOKUP_TABLE (0x1000)
            // RTA_DST
            0x08, 0x00, 0x01, 0x00,  // rta_len = 8, rta_type = RTA_DST (1)
            0x08, 0x08, 0x08, 0x08,  // 8.8.8.8
            // RTA_IP_PROTO
            0x05, 0x00, 0x1b, 0x00,  // rta_len = 5, rta_type = RTA_IP_PROTO (27)
            0x06, 0x00, 0x00, 0x00,  // IPPROTO_TCP (6), padding
            // RTA_DPORT
            0x06, 0x00, 0x1d, 0x00,  // rta_len = 6, rta_type = RTA_DPORT (29)
            0x01, 0xbb, 0x00, 0x00,  // 443, network order, padding
        ])
    }

    func testThatARouteLookupForAUsersFlowCarriesItsUid() {
        // Given, When: the lookup for user 65534's TCP connection to port 443 (`ip route get
        // 8.8.8.8 ipproto tcp dport 443 uid 65534`), which policy rules on uidrange match
        let flow = FlowKeys(.tcp, destinationPort: 443).of(uid: 65534)
        let bytes = NetlinkRequest.lookupRoute(to: [8, 8, 8, 8], family: ABI.Family.ipv4, flow: flow, sequence: 9)

        // Then: the flow's attributes, then RTA_UID; the description is iproute2's words
        XCTAssertEqual(bytes.count, 60)
        XCTAssertEqual(bytes[0..<4], [0x3c, 0x00, 0x00, 0x00])  // nlmsg_len = 60
        XCTAssertEqual(bytes[52...], [
            // RTA_UID
            0x08, 0x00, 0x19, 0x00,  // rta_len = 8, rta_type = RTA_UID (25)
            0xfe, 0xff, 0x00, 0x00,  // 65534, host order
        ])
        XCTAssertEqual(flow.description, "ipproto tcp dport 443 uid 65534")
        XCTAssertEqual(flow.of(uid: nil), FlowKeys(.tcp, destinationPort: 443), "nil: the asker's own uid, no attribute")
    }

    func testThatTheProbeFlowIsUDPToTheSamePort() {
        // Given, When
        let bytes = NetlinkRequest.lookupRoute(to: [8, 8, 8, 8], family: ABI.Family.ipv4, flow: FlowKeys(.udp, destinationPort: 443), sequence: 9)

        // Then: IPPROTO_UDP (17) where TCP's request has 6; the description is iproute2's words
        XCTAssertEqual(bytes[40], 17)
        XCTAssertEqual(FlowKeys(.udp, destinationPort: 443).description, "ipproto udp dport 443")
    }

    func testThatRequestHeadersParseBack() throws {
        let rows: [(name: String, bytes: [UInt8], type: UInt16, flags: UInt16, sequence: UInt32, line: UInt)] = [
            ("link dump", NetlinkRequest.dumpLinks(sequence: 1), ABI.MessageType.getLink, 0x301, 1, #line),
            ("address dump", NetlinkRequest.dumpAddresses(sequence: 2), ABI.MessageType.getAddress, 0x301, 2, #line),
            ("IPv4 lookup", NetlinkRequest.lookupRoute(to: [192, 0, 2, 1], family: ABI.Family.ipv4, sequence: 3),
             ABI.MessageType.getRoute, 0x1, 3, #line),
            ("IPv6 lookup", NetlinkRequest.lookupRoute(to: Fixture.documentationIPv6(1), family: ABI.Family.ipv6, sequence: 0),
             ABI.MessageType.getRoute, 0x1, 0, #line),
        ]
        for row in rows {
            // Given, When
            let message = try parseSingleMessage(row.bytes, line: row.line)

            // Then: a request type is not interpreted, but its header is read as written
            XCTAssertEqual(
                HeaderFields(message.header),
                HeaderFields(length: UInt32(row.bytes.count), type: row.type, flags: row.flags, sequence: row.sequence, portID: 0),
                row.name, line: row.line
            )
            XCTAssertEqual(message.payload, .other(type: row.type), row.name, line: row.line)
            XCTAssertEqual(row.bytes.count % 4, 0, "\(row.name) is padded", line: row.line)
        }
    }

    func testThatARouteLookupReadsBackAsTheRouteItAsksFor() throws {
        let rows: [(family: UInt8, destination: [UInt8], line: UInt)] = [
            (ABI.Family.ipv4, [8, 8, 8, 8], #line),
            (ABI.Family.ipv4, [0, 0, 0, 0], #line),
            (ABI.Family.ipv6, Fixture.documentationIPv6(0x99), #line),
        ]
        for row in rows {
            // Given: the request retyped RTM_NEWROUTE, as the kernel's answer starts out
            var bytes = NetlinkRequest.lookupRoute(to: row.destination, family: row.family, sequence: 5)
            bytes.replaceSubrange(4..<6, with: Wire.u16(ABI.MessageType.newRoute))

            // When
            let route = try parseSingleMessage(bytes, line: row.line).payload.route

            // Then
            XCTAssertEqual(
                route,
                RouteFields(
                    family: row.family, destinationLength: UInt8(row.destination.count * 8), table: 0, type: 0,
                    scope: 0, flags: 0x1000, destination: row.destination
                ),
                line: row.line
            )
        }
    }

    func testThatDumpRequestsReadBackAsEmptyLinksAndAddresses() throws {
        // Given: the dump requests retyped RTM_NEWLINK / RTM_NEWADDR
        var links = NetlinkRequest.dumpLinks(sequence: 1)
        links.replaceSubrange(4..<6, with: Wire.u16(ABI.MessageType.newLink))
        var addresses = NetlinkRequest.dumpAddresses(sequence: 1)
        addresses.replaceSubrange(4..<6, with: Wire.u16(ABI.MessageType.newAddress))

        // When
        let link = try parseSingleMessage(links).payload.link
        let address = try parseSingleMessage(addresses).payload.address

        // Then: exactly one fixed struct each, no attributes
        XCTAssertEqual(link, LinkFields(index: 0, hardwareType: 0, flags: 0, name: nil, kind: nil))
        XCTAssertEqual(address, AddressFields(family: 0, prefixLength: 0, flags: 0, scope: 0, index: 0, address: nil))
    }
}
