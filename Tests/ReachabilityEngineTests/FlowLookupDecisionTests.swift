@testable import RTNetlink
import ReachabilityCore
import XCTest
@testable import ReachabilityEngine

/// Which questions a rule set needs: the two source-less lookups that tell the UDP probe's
/// source from the application's only where a policy rule can make them differ.
final class FlowLookupDecisionTests: XCTestCase {
    func testThatFlowLookupsAreAskedOnlyWhereARuleSelectsOnWhatTheFlowsDifferIn() {
        let plain = PolicyRuleSelectors(family: .ipv4)
        let ipv4Port = PolicyRuleSelectors(family: .ipv4, selectsOnTransport: true)
        let ipv6Port = PolicyRuleSelectors(family: .ipv6, selectsOnTransport: true)
        let ipv4User = PolicyRuleSelectors(family: .ipv4, selectsOnUser: true)
        let multicast = PolicyRuleSelectors(family: nil, selectsOnTransport: true, selectsOnUser: true)
        let rows: [(name: String, rules: [PolicyRuleSelectors]?, family: AddressFamily, uid: UInt32?, expected: Bool, line: UInt)] = [
            ("the default rules (local, main, default): the probe's source stands", [plain, plain, plain], .ipv4, nil, false, #line),
            ("the rules are not known (their dump failed): ask", nil, .ipv4, nil, true, #line),
            ("ipproto/sport/dport rule of the family: ask", [plain, ipv4Port], .ipv4, nil, true, #line),
            ("a port rule of the other family only: not for this one", [plain, ipv6Port], .ipv4, nil, false, #line),
            ("the other family's port rule counts for its own family", [plain, ipv6Port], .ipv6, nil, true, #line),
            ("uidrange rule, the daemon's own flow (no uid named): same uid as the probe", [plain, ipv4User], .ipv4, nil, false, #line),
            ("uidrange rule, a caller's uid named: ask", [plain, ipv4User], .ipv4, 65534, true, #line),
            ("a caller's uid, no uidrange rule: the probe's source stands", [plain, ipv6Port], .ipv4, 65534, false, #line),
            ("a multicast routing rule: no family of ours", [multicast], .ipv4, 1000, false, #line),
            ("no rules at all", [], .ipv6, 0, false, #line),
        ]
        for row in rows {
            // Given the policy rules' selectors and a destination of a family, asked for a uid

            // When
            let needed = StatusReducer.needsFlowLookups(rules: row.rules, family: row.family, uid: row.uid)

            // Then
            XCTAssertEqual(needed, row.expected, row.name, line: row.line)
        }
    }
}
