@testable import RTNetlink
import XCTest

/// `RTM_NEWROUTE` / `RTM_DELROUTE`: `struct rtmsg` and the route attributes.
final class NetlinkParserRouteTests: XCTestCase {
    func testThatAReaderOfDefaultRoutesPassesOverTheOthersUnparsed() throws {
        // Given a datagram of a route with a prefix between two default routes
        let datagram = Fixture.ipv4DefaultRoute + Fixture.ipv6LookupAnswer + Fixture.ipv4DefaultRoute

        // When
        let results = datagram.withUnsafeBytes { NetlinkParser.parse(datagram: $0, skipping: NetlinkParser.isRouteWithPrefix) }

        // Then
        let lengths = try results.map { result -> UInt8? in
            if case .newRoute(let route) = try result.get().payload { route.destinationLength } else { nil }
        }
        XCTAssertEqual(lengths, [0, 0])
    }

    func testThatAnIPv4DefaultRouteIsRead() throws {
        // Given: rtm_table says main (254), RTA_TABLE says 100
        let datagram = Fixture.ipv4DefaultRoute

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        guard case let .newRoute(route) = message.payload else { return XCTFail("payload \(message.payload)") }
        XCTAssertEqual(
            RouteFields(route),
            RouteFields(
                family: ABI.Family.ipv4, destinationLength: 0, table: 100, type: ABI.RouteType.unicast, scope: ABI.Scope.universe,
                flags: 0, destination: nil, outputInterface: 2, gateway: [192, 168, 1, 1], priority: 100
            )
        )
    }

    func testThatAnIPv6LookupAnswerIsRead() throws {
        // Given
        let datagram = Fixture.ipv6LookupAnswer

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        XCTAssertEqual(message.header.sequence, 7)
        XCTAssertEqual(
            message.payload.route,
            RouteFields(
                family: ABI.Family.ipv6, destinationLength: 128, table: 254, type: ABI.RouteType.unicast,
                scope: ABI.Scope.universe, flags: ABI.RouteFlag.cloned, destination: Fixture.documentationIPv6(0x99),
                outputInterface: 3, gateway: [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1], priority: 1024
            )
        )
    }

    func testThatALookupAnswerNamesTheSourceTheKernelSelects() throws {
        // Given: an answer to a lookup without a source carries the one selected (RTA_PREFSRC)
        let datagram = Fixture.ipv6LookupAnswer

        // When
        let answer = try parseSingleMessage(datagram).payload
        let tableEntry = try parseSingleMessage(Fixture.ipv4DefaultRoute).payload

        // Then: a route without one has none
        guard case let .newRoute(route) = answer, case let .newRoute(entry) = tableEntry else { return XCTFail("payloads \(answer), \(tableEntry)") }
        XCTAssertEqual(route.preferredSource, Fixture.documentationIPv6(0x10))
        XCTAssertNil(entry.preferredSource)
    }

    func testThatAnUnreachableLookupAnswerIsRead() throws {
        // Given
        let datagram = Fixture.unreachableLookupAnswer

        // When
        let route = try parseSingleMessage(datagram).payload.route

        // Then
        XCTAssertEqual(
            route,
            RouteFields(
                family: ABI.Family.ipv4, destinationLength: 32, table: 254, type: ABI.RouteType.unreachable,
                scope: ABI.Scope.universe, flags: ABI.RouteFlag.cloned, destination: [203, 0, 113, 7], outputInterface: 1
            )
        )
    }

    func testThatRtaTableOverridesRtmTable() throws {
        let rows: [(name: String, rtmTable: UInt8, rtaTable: UInt32?, table: UInt32, line: UInt)] = [
            ("main, no RTA_TABLE", ABI.Table.main, nil, 254, #line),
            ("local, no RTA_TABLE", ABI.Table.local, nil, 255, #line),
            ("main overridden by 100", ABI.Table.main, 100, 100, #line),
            ("compat, the real table in RTA_TABLE", ABI.Table.compat, 1000, 1000, #line),
            ("compat, a 32-bit table", ABI.Table.compat, 0xffff_fffe, 0xffff_fffe, #line),
            ("RTA_TABLE of 0", ABI.Table.main, 0, 0, #line),
        ]
        for row in rows {
            // Given
            var attributes = Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(2))
            if let table = row.rtaTable { attributes += Wire.attribute(ABI.RouteAttribute.table, Wire.u32(table)) }
            let datagram = Wire.message(
                type: ABI.MessageType.newRoute,
                body: Wire.routeInfo(
                    family: ABI.Family.ipv4, destinationLength: 0, table: row.rtmTable, protocol: ABI.RouteProtocol.boot,
                    scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: 0
                ) + attributes
            )

            // When
            let route = try parseSingleMessage(datagram, line: row.line).payload.route

            // Then
            XCTAssertEqual(route?.table, row.table, row.name, line: row.line)
        }
    }

    func testThatRtmsgFieldsAreReadAtTheirOffsets() throws {
        // Given: every byte of rtmsg distinct, so a field read from its neighbour shows
        let rows: [(family: UInt8, destinationLength: UInt8, type: UInt8, scope: UInt8, flags: UInt32, line: UInt)] = [
            (ABI.Family.ipv4, 0, ABI.RouteType.unicast, ABI.Scope.universe, 0, #line),
            (ABI.Family.ipv4, 32, ABI.RouteType.unreachable, ABI.Scope.universe, 0, #line),
            (ABI.Family.ipv4, 0, ABI.RouteType.unicast, ABI.Scope.universe, ABI.RouteFlag.linkDown, #line),
            (ABI.Family.ipv6, 0, ABI.RouteType.unicast, ABI.Scope.universe, ABI.RouteFlag.linkDown | ABI.RouteFlag.cloned, #line),
            (ABI.Family.ipv6, 128, ABI.RouteType.blackhole, ABI.Scope.universe, 0, #line),
            (ABI.Family.ipv6, 64, ABI.RouteType.prohibit, ABI.Scope.link, 0, #line),
            (ABI.Family.ipv4, 8, ABI.RouteType.local, ABI.Scope.host, 0, #line),
            (ABI.Family.ipv4, 24, ABI.RouteType.throw, ABI.Scope.link, 0xdead_beef, #line),
        ]
        for row in rows {
            let datagram = Wire.message(
                type: ABI.MessageType.newRoute,
                body: Wire.routeInfo(
                    family: row.family, destinationLength: row.destinationLength, sourceLength: 0xa1, tos: 0xa2,
                    table: ABI.Table.main, protocol: 0xa3, scope: row.scope, type: row.type, flags: row.flags
                )
            )

            // When
            let route = try parseSingleMessage(datagram, line: row.line).payload.route

            // Then
            XCTAssertEqual(
                route,
                RouteFields(
                    family: row.family, destinationLength: row.destinationLength, table: 254, type: row.type,
                    scope: row.scope, flags: row.flags
                ),
                line: row.line
            )
        }
    }

    func testThatDeleteRouteCarriesTheSameFields() throws {
        // Given: the IPv4 default route, retyped RTM_DELROUTE
        var datagram = Fixture.ipv4DefaultRoute
        datagram[4] = UInt8(ABI.MessageType.deleteRoute)

        // When
        let message = try parseSingleMessage(datagram)

        // Then
        guard case let .deleteRoute(route) = message.payload else { return XCTFail("payload \(message.payload)") }
        XCTAssertEqual(RouteFields(route).gateway, [192, 168, 1, 1])
        XCTAssertEqual(RouteFields(route).table, 100)
    }

    func testThatRepeatedRouteAttributesMeanTheLastOne() throws {
        // Given
        let datagram = Wire.message(
            type: ABI.MessageType.newRoute,
            body: Wire.routeInfo(
                family: ABI.Family.ipv4, destinationLength: 0, table: ABI.Table.main, protocol: ABI.RouteProtocol.boot,
                scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: 0
            )
                + Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(2))
                + Wire.attribute(ABI.RouteAttribute.gateway, [10, 0, 0, 1])
                + Wire.attribute(ABI.RouteAttribute.priority, Wire.u32(100))
                + Wire.attribute(ABI.RouteAttribute.table, Wire.u32(100))
                + Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(3))
                + Wire.attribute(ABI.RouteAttribute.gateway, [10, 0, 0, 2])
                + Wire.attribute(ABI.RouteAttribute.priority, Wire.u32(600))
                + Wire.attribute(ABI.RouteAttribute.table, Wire.u32(200))
        )

        // When
        let route = try parseSingleMessage(datagram).payload.route

        // Then
        XCTAssertEqual(route?.outputInterface, 3)
        XCTAssertEqual(route?.gateway, [10, 0, 0, 2])
        XCTAssertEqual(route?.priority, 600)
        XCTAssertEqual(route?.table, 200)
    }

    func testThatAnOutputInterfaceIsAnIndexBitPattern() throws {
        // Given: ifindex is a C int; the kernel never sends a negative one, but the bits are kept
        let datagram = Wire.message(
            type: ABI.MessageType.newRoute,
            body: Wire.routeInfo(
                family: ABI.Family.ipv4, destinationLength: 0, table: ABI.Table.main, protocol: ABI.RouteProtocol.boot,
                scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: 0
            ) + Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(0xffff_ffff))
        )

        // When
        let route = try parseSingleMessage(datagram).payload.route

        // Then
        XCTAssertEqual(route?.outputInterface, -1)
    }

    func testThatAddressLengthsAreOnlyCheckedForIPFamilies() throws {
        // Given: an AF_MPLS route; its RTA_DST is a 4-byte label stack entry of any count
        let datagram = Wire.message(
            type: ABI.MessageType.newRoute,
            body: Wire.routeInfo(
                family: ABI.Family.mpls, destinationLength: 20, table: ABI.Table.main, protocol: ABI.RouteProtocol.boot,
                scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: 0
            ) + Wire.attribute(ABI.RouteAttribute.destination, [0, 1, 0x91, 0x00, 0, 2, 0x01, 0x00])
        )

        // When
        let route = try parseSingleMessage(datagram).payload.route

        // Then
        XCTAssertEqual(route?.destination, [0, 1, 0x91, 0x00, 0, 2, 0x01, 0x00])
    }
}
