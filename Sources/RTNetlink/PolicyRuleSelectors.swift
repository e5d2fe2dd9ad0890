import NetworkTypes

/// What one policy rule (`ip rule`) selects on among the keys in which the lookups the engine
/// could skip differ: the transport protocol and ports (`ipproto`, `sport`, `dport`), which
/// tell the UDP probe's flow from an application's TCP one, and the user (`uidrange`), which
/// tells the daemon's own flow from a caller's. Read from an `RTM_GETRULE` dump
/// (``NetlinkQueryClient/dumpRuleSelectors(attempts:)``), then kept from the rule messages
/// (``RouteNetlinkPayload/ruleChanged(added:selectors:)``).
package struct PolicyRuleSelectors: Sendable, Hashable {
    /// The rule's family; nil for one other than IPv4 and IPv6 (multicast routing's rules).
    package var family: AddressFamily?
    /// Whether the rule selects on the transport protocol or a port (`FRA_IP_PROTO`,
    /// `FRA_SPORT_RANGE`, `FRA_DPORT_RANGE`).
    package var selectsOnTransport: Bool
    /// Whether the rule selects on the user (`FRA_UID_RANGE`).
    package var selectsOnUser: Bool

    /// A rule of `family` selecting on what the flags say.
    package init(family: AddressFamily?, selectsOnTransport: Bool = false, selectsOnUser: Bool = false) {
        self.family = family
        self.selectsOnTransport = selectsOnTransport
        self.selectsOnUser = selectsOnUser
    }
}

extension NetlinkParser {
    /// The selectors of an `RTM_NEWRULE` message's `body` (after its `nlmsghdr`); nil for
    /// another message type or a body too short for `struct fib_rule_hdr`.
    static func policyRuleSelectors(_ header: NetlinkHeader, _ body: UnsafeRawBufferPointer) -> PolicyRuleSelectors? {
        header.type.rawValue == LinuxNetlink.newRule ? policyRuleSelectors(ofRuleMessage: header.type.rawValue, body) : nil
    }

    /// The selectors of the `body` of a rule message of `type` (`RTM_NEWRULE`, `RTM_DELRULE`);
    /// nil for a body too short for `struct fib_rule_hdr`.
    static func policyRuleSelectors(ofRuleMessage type: UInt16, _ body: UnsafeRawBufferPointer) -> PolicyRuleSelectors? {
        guard body.count >= LinuxNetlink.ruleInfoLength else { return nil }
        var rule = PolicyRuleSelectors(family: AddressFamily(netlinkFamily: body[0]))
        do {
            try forEachAttribute(in: body, from: LinuxNetlink.ruleInfoLength, messageType: type) { attribute, _ in
                switch attribute {
                case LinuxNetlink.ruleIPProtocol, LinuxNetlink.ruleSourcePortRange, LinuxNetlink.ruleDestinationPortRange: rule.selectsOnTransport = true
                case LinuxNetlink.ruleUIDRange: rule.selectsOnUser = true
                default: break
                }
            }
        } catch {
            // What a malformed rule selects on is not known: as if on everything.
            rule.selectsOnTransport = true
            rule.selectsOnUser = true
        }
        return rule
    }
}
