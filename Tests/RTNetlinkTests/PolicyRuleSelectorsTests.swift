import NetworkTypes
import XCTest
@testable import RTNetlink

/// What an `RTM_NEWRULE` of a rule dump tells about the flows' keys a rule selects on.
final class PolicyRuleSelectorsTests: XCTestCase {
    /// `struct fib_rule_hdr` of `family` (table main, action FR_ACT_TO_TBL) + `FRA_PRIORITY`.
    private static func ruleHeader(family: UInt8) -> [UInt8] {
        [family, 0, 0, 0] + [ABI.Table.main, 0, 0, 1] + Wire.u32(0) + Wire.attribute(6, Wire.u32(100))
    }

    func testThatTheSelectorsOnProtocolPortsAndUsersAreRead() {
        let proto = Wire.attribute(22, [6])  // FRA_IP_PROTO tcp
        let ports = Wire.u16(443) + Wire.u16(443)
        let rows: [(name: String, body: [UInt8], expected: PolicyRuleSelectors?, line: UInt)] = [
            ("lookup main: nothing the flows differ in", Self.ruleHeader(family: ABI.Family.ipv4),
             PolicyRuleSelectors(family: .ipv4), #line),
            ("ipproto tcp", Self.ruleHeader(family: ABI.Family.ipv4) + proto,
             PolicyRuleSelectors(family: .ipv4, selectsOnTransport: true), #line),
            ("sport 443", Self.ruleHeader(family: ABI.Family.ipv6) + Wire.attribute(23, ports),
             PolicyRuleSelectors(family: .ipv6, selectsOnTransport: true), #line),
            ("dport 443", Self.ruleHeader(family: ABI.Family.ipv6) + Wire.attribute(24, ports),
             PolicyRuleSelectors(family: .ipv6, selectsOnTransport: true), #line),
            ("uidrange 1000-1000", Self.ruleHeader(family: ABI.Family.ipv4) + Wire.attribute(20, Wire.u32(1000) + Wire.u32(1000)),
             PolicyRuleSelectors(family: .ipv4, selectsOnUser: true), #line),
            ("a malformed attribute: as if selecting on everything", Self.ruleHeader(family: ABI.Family.ipv4) + Wire.u16(200) + Wire.u16(22),
             PolicyRuleSelectors(family: .ipv4, selectsOnTransport: true, selectsOnUser: true), #line),
            ("a body shorter than fib_rule_hdr", [ABI.Family.ipv4, 0], nil, #line),
        ]
        for row in rows {
            // Given an RTM_NEWRULE as a rule dump carries it
            let header = NetlinkHeader(length: UInt32(16 + row.body.count), type: NetlinkMessageType(rawValue: ABI.MessageType.newRule), flags: [], sequence: 1, portID: 0)

            // When
            let selectors = row.body.withUnsafeBytes { NetlinkParser.policyRuleSelectors(header, $0) }

            // Then
            XCTAssertEqual(selectors, row.expected, row.name, line: row.line)
        }
    }

    func testThatOtherMessagesAreNoRules() {
        let header = NetlinkHeader(length: 28, type: NetlinkMessageType(rawValue: ABI.MessageType.newRoute), flags: [], sequence: 1, portID: 0)
        XCTAssertNil(Self.ruleHeader(family: ABI.Family.ipv4).withUnsafeBytes { NetlinkParser.policyRuleSelectors(header, $0) })
    }
}

/// Route lookups asked together: one datagram out, the answers matched by sequence number.
final class BatchedRouteLookupTests: XCTestCase {
    func testThatLookupsAskedTogetherAnswerAsEachAskedAlone() throws {
        // Given lookups the loopback answers (read-only: nothing is changed): a route, an error
        // (a link that does not exist) and a matched entry (127.0.0.0/8), more of them than one datagram carries
        let loopback = IPAddress("127.0.0.1")!
        let kinds = [
            NetlinkQueryClient.RouteQuestion(to: loopback),
            NetlinkQueryClient.RouteQuestion(to: loopback, outputInterface: InterfaceIndex(999_999)),
            NetlinkQueryClient.RouteQuestion(to: IPAddress("127.0.0.2")!, flow: FlowKeys(.tcp, destinationPort: 443), matchedEntry: true),
        ]
        let questions = (0..<(NetlinkQueryClient.lookupsPerSend + 5)).map { kinds[$0 % kinds.count] }
        let client = try NetlinkQueryClient()

        // When they are asked together, and each alone
        let together = try client.lookupRoutes(questions)
        let alone = try questions.map { try client.lookupRoutes([$0])[0] }

        // Then every answer is in its question's place, and the same
        XCTAssertEqual(together, alone)
        guard case .route(let route) = together[0] else { return XCTFail("127.0.0.1: \(together[0])") }
        XCTAssertEqual(route.type, .local)
        XCTAssertEqual(together[1], .error(errno: ENODEV))
        guard case .route(let entry) = together[2] else { return XCTFail("matched entry: \(together[2])") }
        XCTAssertEqual(entry.destinationLength, 8)
    }
}
