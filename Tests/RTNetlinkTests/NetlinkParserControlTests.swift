import NetworkTypes
@testable import RTNetlink
import XCTest

/// Control messages, rules, unknown types, and datagrams holding several messages.
final class NetlinkParserControlTests: XCTestCase {
    func testThatDoneEndsADump() throws {
        // Given
        let datagram = Fixture.dumpDone

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        XCTAssertEqual(message.payload, .done)
        XCTAssertEqual(
            HeaderFields(message.header),
            HeaderFields(length: 20, type: ABI.MessageType.done, flags: ABI.HeaderFlag.multipart, sequence: 42, portID: 0)
        )
    }

    func testThatAnErrorCarriesThePositiveErrno() throws {
        // Given
        let datagram = Fixture.networkUnreachable

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        XCTAssertEqual(message.payload, .error(errno: ABI.Errno.networkUnreachable))
        XCTAssertEqual(message.header.sequence, 10)
    }

    func testThatAnErrorOfZeroIsAnAcknowledgement() throws {
        // Given
        let datagram = Fixture.acknowledgement

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        XCTAssertEqual(message.payload, .error(errno: 0))
        XCTAssertEqual(message.header.sequence, 9)
    }

    func testThatErrorCodesAreNegated() throws {
        let rows: [(code: Int32, errno: Int32, line: UInt)] = [
            (0, 0, #line),
            (-1, 1, #line),
            (-ABI.Errno.ioError, ABI.Errno.ioError, #line),
            (-ABI.Errno.invalidArgument, ABI.Errno.invalidArgument, #line),
            (-ABI.Errno.networkUnreachable, ABI.Errno.networkUnreachable, #line),
            (-4095, 4095, #line),  // -MAX_ERRNO, the largest the kernel can send
        ]
        for row in rows {
            // Given: with and without the echoed request header (NLM_F_CAPPED acks carry it too)
            for body in [Wire.errorBody(row.code, answering: Fixture.request(sequence: 3)), Wire.i32(row.code)] {
                let datagram = Wire.message(type: ABI.MessageType.error, sequence: 3, body: body)

                // When
                let payload = try parseSingleMessage(datagram, line: row.line).payload

                // Then
                XCTAssertEqual(payload, .error(errno: row.errno), line: row.line)
            }
        }
    }

    func testThatAnErrorCodeTheKernelCannotSendIsRejected() {
        let rows: [(name: String, code: Int32, line: UInt)] = [
            ("positive", 1, #line),
            ("positive errno", ABI.Errno.networkUnreachable, #line),
            ("largest positive", Int32.max, #line),
            ("beyond -MAX_ERRNO", -4096, #line),
            ("smallest (its negation does not fit an Int32)", Int32.min, #line),
        ]
        for row in rows {
            // Given: the error, then a valid NLMSG_DONE in the same datagram
            let datagram = Wire.message(
                type: ABI.MessageType.error, sequence: 3, body: Wire.errorBody(row.code, answering: Fixture.request(sequence: 3))
            ) + Fixture.dumpDone

            // When
            let results = parseOutcomes(datagram)

            // Then: a typed failure for that message only
            XCTAssertEqual(results, [.failure(.invalidErrorCode(row.code)), .success(.done)], row.name, line: row.line)
        }
    }

    func testThatRuleChangesSayWhatTheRuleSelectsOnAndNexthopChangesAreReportedWithoutTheirContents() throws {
        let rows: [(name: String, datagram: [UInt8], payload: RouteNetlinkPayload, line: UInt)] = [
            ("RTM_NEWRULE", Fixture.ruleAdded, .ruleChanged(added: true, selectors: PolicyRuleSelectors(family: .ipv4)), #line),
            ("RTM_DELRULE", Fixture.ruleRemoved, .ruleChanged(added: false, selectors: PolicyRuleSelectors(family: .ipv4)), #line),
            ("RTM_NEWRULE without a body", Wire.message(type: ABI.MessageType.newRule, body: []), .ruleChanged(added: true, selectors: nil), #line),
            ("RTM_NEWNEXTHOP", Fixture.nexthopAdded, .nexthopChanged, #line),
            ("RTM_DELNEXTHOP", Fixture.nexthopRemoved, .nexthopChanged, #line),
            ("RTM_DELNEXTHOP without a body", Wire.message(type: ABI.MessageType.deleteNexthop, body: []), .nexthopChanged, #line),
        ]
        for row in rows {
            // Given, When
            let payload = try parseSingleMessage(row.datagram, line: row.line).payload

            // Then
            XCTAssertEqual(payload, row.payload, row.name, line: row.line)
        }
    }

    func testThatOverrunIsReported() throws {
        // Given
        let datagram = Wire.message(type: ABI.MessageType.overrun, body: [])

        // When
        let payload = try parseSingleMessage(datagram).payload

        // Then
        XCTAssertEqual(payload, .overrun)
    }

    func testThatNeighbourEntriesParseWithTheirStateInterpreted() throws {
        let gateway: [UInt8] = [10, 77, 0, 1]
        let rows: [(name: String, type: UInt16, state: UInt16, expected: NeighbourState, line: UInt)] = [
            ("failed", ABI.MessageType.newNeighbour, ABI.Neighbour.failed, .failed, #line),
            ("reachable", ABI.MessageType.newNeighbour, ABI.Neighbour.reachable, .resolved, #line),
            ("stale", ABI.MessageType.newNeighbour, ABI.Neighbour.stale, .resolved, #line),
            ("permanent", ABI.MessageType.newNeighbour, ABI.Neighbour.permanent, .resolved, #line),
            ("incomplete", ABI.MessageType.newNeighbour, ABI.Neighbour.incomplete, .resolving, #line),
            ("none", ABI.MessageType.newNeighbour, 0, .resolving, #line),
            ("deleted, failed", ABI.MessageType.deleteNeighbour, ABI.Neighbour.failed, .failed, #line),
        ]
        for row in rows {
            // Given an entry as the kernel sends it: ndmsg, NDA_DST, NDA_LLADDR
            let body = Wire.neighbourInfo(family: ABI.Family.ipv4, index: 7, state: row.state)
                + Wire.attribute(ABI.Neighbour.destination, gateway)
                + Wire.attribute(ABI.Neighbour.linkLayerAddress, [2, 0, 0, 0, 0, 1])

            // When
            let payload = try parseSingleMessage(Wire.message(type: row.type, body: body), line: row.line).payload

            // Then
            var expected = NeighbourMessage(family: ABI.Family.ipv4, index: 7, state: row.expected, destination: gateway)
            expected.linkLayerAddress = [2, 0, 0, 0, 0, 1]
            XCTAssertEqual(payload, row.type == ABI.MessageType.newNeighbour ? .newNeighbour(expected) : .deleteNeighbour(expected), row.name, line: row.line)
        }
    }

    func testThatARouterAdvertisementsPREF64OptionGivesItsPrefixAndLifetimeForEachPrefixLength() throws {
        // Given / When / Then: RTM_NEWNDUSEROPT as the kernel (6.18) sent it for RAs from fe80::1
        // on link 2 with RFC 8781's option 38 (captured), one row per prefix length code, then
        // an undefined code (6) and an option too short to hold a prefix
        let header = "0a0010000200000086000000000000002602"
        let router = "14000100fe800000000000000000000000000001"
        let rows: [(option: String, prefix: String?, length: Int, lifetime: UInt32, line: UInt)] = [
            ("07080064ff9b0000000000000000", "64:ff9b::", 96, 1800, #line),
            ("025920010db80100000000000000", "2001:db8:100::", 64, 600, #line),
            ("fffa20010db80122000000000000", "2001:db8:122::", 56, 65528, #line),
            ("000b20010db80300000000000000", "2001:db8:300::", 48, 8, #line),
            ("000420010db80100000000000000", "2001:db8:100::", 40, 0, #line),
            ("100520010db80000000000000000", "2001:db8::", 32, 4096, #line),
            ("070e0064ff9b0000000000000000", nil, 0, 0, #line),
        ]
        for row in rows {
            let body = Wire.bytes(hex: header + row.option + router)
            let payload = try parseSingleMessage(Wire.message(type: ABI.MessageType.newRouterOption, body: body)).payload
            let expected = row.prefix.map { NAT64PrefixOption(prefix: IPPrefix(IPAddress($0)!, length: row.length), lifetimeSeconds: row.lifetime) }
            XCTAssertEqual(payload, .routerAdvertisementOption(RouterAdvertisementOption(index: 2, nat64Prefix: expected, router: IPAddress("fe80::1"))), line: row.line)
        }
        let short = [ABI.Family.ipv6, 0] + Wire.u16(8) + Wire.i32(2) + [134, 0, 0, 0, 0, 0, 0, 0] + [38, 1, 7, 8, 0, 0x64, 0xff, 0x9b]
        let payload = try parseSingleMessage(Wire.message(type: ABI.MessageType.newRouterOption, body: short)).payload
        XCTAssertEqual(payload, .routerAdvertisementOption(RouterAdvertisementOption(index: 2)))
    }

    func testThatAPREF64OptionWhoseLengthIsNotTwoIsIgnored() throws {
        // Given RTM_NEWNDUSEROPT carrying option 38 with a valid prefix and lifetime, but a Length
        // of 3 (24 bytes: 8 more after the prefix) — RFC 8781 §4: "the receiver MUST ignore the
        // PREF64 option if the Length field value is not 2"
        let header = "0a001800020000008600000000000000"
        let option = "2603" + "0708" + "0064ff9b0000000000000000" + "0000000000000000"
        let router = "14000100fe800000000000000000000000000001"

        // When
        let payload = try parseSingleMessage(Wire.message(type: ABI.MessageType.newRouterOption, body: Wire.bytes(hex: header + option + router))).payload

        // Then no prefix is taken from it
        XCTAssertEqual(payload, .routerAdvertisementOption(RouterAdvertisementOption(index: 2, router: IPAddress("fe80::1"))))
    }

    func testThatARouterAdvertisementsCaptivePortalOptionGivesItsURI() throws {
        // Given RTM_NEWNDUSEROPT as the kernel sent it for an RA from fe80::1 on link 2 (captured), then
        // another option (RDNSS), then a length running past the message
        let captured = Wire.bytes(hex: "0a002000020000008600000000000000250468747470733a2f2f706f7274616c2e6578616d706c652f6170690000000014000100fe800000000000000000000000000001")
        let rdnss = [ABI.Family.ipv6, 0] + Wire.u16(8) + Wire.i32(2) + [134, 0, 0, 0, 0, 0, 0, 0] + [25, 1, 0, 0, 0, 0, 0, 0]
        let truncated = [ABI.Family.ipv6, 0] + Wire.u16(64) + Wire.i32(2) + [134, 0, 0, 0, 0, 0, 0, 0] + [37, 8]

        // When
        let portal = try parseSingleMessage(Wire.message(type: ABI.MessageType.newRouterOption, body: captured)).payload
        let other = try parseSingleMessage(Wire.message(type: ABI.MessageType.newRouterOption, body: rdnss)).payload
        let broken = NetlinkParser.parse(datagram: Wire.message(type: ABI.MessageType.newRouterOption, body: truncated))

        // Then
        XCTAssertEqual(portal, .routerAdvertisementOption(RouterAdvertisementOption(index: 2, captivePortalAPI: "https://portal.example/api", router: IPAddress("fe80::1"))))
        XCTAssertEqual(other, .routerAdvertisementOption(RouterAdvertisementOption(index: 2)))
        XCTAssertEqual(broken.count, 1)
        guard case .failure(.truncatedPayload(ABI.MessageType.newRouterOption, 80, 18))? = broken.first else {
            return XCTFail("\(broken)")
        }
    }

    func testThatUninterpretedTypesAreOther() throws {
        let rows: [(name: String, type: UInt16, line: UInt)] = [
            ("NLMSG_NOOP", ABI.MessageType.noop, #line),
            ("type 0", 0, #line),
            ("RTM_GETLINK (an echoed request)", ABI.MessageType.getLink, #line),
            ("RTM_GETROUTE", ABI.MessageType.getRoute, #line),
            ("RTM_GETNEIGH (an echoed request)", ABI.MessageType.getNeighbour, #line),
            ("a private type", 0x1234, #line),
            ("the largest type", 0xffff, #line),
        ]
        for row in rows {
            // Given: a body that would be a malformed link, address or route
            let datagram = Wire.message(type: row.type, body: [1, 2, 3])

            // When
            let payload = try parseSingleMessage(datagram, line: row.line).payload

            // Then
            XCTAssertEqual(payload, .other(type: row.type), row.name, line: row.line)
        }
    }

    func testThatEveryMessageOfADumpDatagramIsParsedInOrder() {
        // Given
        let datagram = Fixture.linkDumpDatagram

        // When
        let results = NetlinkParser.parse(datagram: datagram)

        // Then
        let messages = results.compactMap { try? $0.get() }
        XCTAssertEqual(messages.count, 3, "results: \(results)")
        XCTAssertEqual(messages.map(\.header.sequence), [42, 42, 42])
        XCTAssertEqual(messages.map(\.header.flags.rawValue), [ABI.HeaderFlag.multipart, ABI.HeaderFlag.multipart, ABI.HeaderFlag.multipart])
        XCTAssertEqual(messages.map(\.payload.link?.name), ["lo", "eth0", nil])
        XCTAssertEqual(messages.last?.payload, .done)
    }

    func testThatMessagesOfEveryKindFollowEachOtherInOneDatagram() {
        // Given
        let datagram = Fixture.ppp0Address + Fixture.ipv4DefaultRoute + Fixture.ruleAdded + Fixture.wg0Removed
            + Fixture.networkUnreachable + Wire.message(type: ABI.MessageType.noop, body: []) + Fixture.acknowledgement

        // When
        let payloads = NetlinkParser.parse(datagram: datagram).map { result in
            result.map { message -> String in
                switch message.payload {
                case .newAddress: "newAddress"
                case .newRoute: "newRoute"
                case .ruleChanged: "ruleChanged"
                case .deleteLink: "deleteLink"
                case let .error(errno): "error \(errno)"
                case let .other(type): "other \(type)"
                default: "unexpected \(message.payload)"
                }
            }
        }

        // Then
        XCTAssertEqual(
            payloads,
            ["newAddress", "newRoute", "ruleChanged", "deleteLink", "error 101", "other 1", "error 0"].map { .success($0) }
        )
    }

    func testThatTheNextMessageStartsAtTheAlignedEndOfAnUnalignedOne() throws {
        // Given: nlmsg_len 41 (a link ending with "eth0\0"), 3 bytes of padding, then NLMSG_DONE at 44
        let link = Wire.message(
            type: ABI.MessageType.newLink,
            body: Wire.linkInfo(hardwareType: ABI.HardwareType.ether, index: 2, flags: 0)
                + Array(Wire.attribute(ABI.LinkAttribute.name, Wire.cString("eth0")).prefix(9))
        )
        XCTAssertEqual(Wire.readU32(link, at: 0), 41)
        XCTAssertEqual(link.count, 44)

        // When
        let results = parseOutcomes(link + Fixture.dumpDone)

        // Then
        XCTAssertEqual(results.count, 2, "results: \(results)")
        XCTAssertEqual(try results.first?.get().link?.name, "eth0")
        XCTAssertEqual(results.last, .success(.done))
    }

    func testThatHeaderFieldsArePassedThrough() throws {
        // Given: a reply to a request of port 4242 with flags NLM_F_MULTI | NLM_F_DUMP_INTR (0x10)
        let datagram = Wire.message(
            type: ABI.MessageType.done, flags: 0x12, sequence: 0xfedc_ba98, portID: 4242, body: Wire.i32(0)
        )

        // When
        let header = try parseSingleMessage(datagram).header

        // Then
        XCTAssertEqual(HeaderFields(header), HeaderFields(length: 20, type: ABI.MessageType.done, flags: 0x12, sequence: 0xfedc_ba98, portID: 4242))
    }

    func testThatABufferAtAnUnalignedAddressParsesTheSame() {
        // Given: the dump datagram at offset 1 of a larger buffer, as a slice of a receive buffer
        let expected = NetlinkParser.parse(datagram: Fixture.linkDumpDatagram)
        let buffer = [0xaa] + Fixture.linkDumpDatagram + [0xbb, 0xbb]

        // When
        let results = buffer.withUnsafeBytes { bytes in
            NetlinkParser.parse(datagram: UnsafeRawBufferPointer(rebasing: bytes[1..<(1 + Fixture.linkDumpDatagram.count)]))
        }

        // Then
        XCTAssertEqual(results, expected)
        XCTAssertEqual(results.count, 3)
    }
}
