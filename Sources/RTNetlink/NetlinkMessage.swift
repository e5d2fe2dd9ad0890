import NetworkTypes

/// The fixed header of every netlink message (`struct nlmsghdr`).
package struct NetlinkHeader: Sendable, Hashable {
    /// Length of the message including this header.
    package var length: UInt32
    /// Message type (`RTM_*`, `NLMSG_*`).
    package var type: NetlinkMessageType
    /// `NLM_F_*` flags.
    package var flags: NetlinkHeaderFlags
    /// Sequence number; replies carry the request's.
    package var sequence: UInt32
    /// Sender port id; 0 for the kernel.
    package var portID: UInt32
}

/// A netlink message's type (`nlmsg_type`: `RTM_*`, `NLMSG_*`). The kernel's number stays in
/// this module; the layers above read the message's ``RouteNetlinkPayload``, and a log its
/// ``description``.
package struct NetlinkMessageType: Sendable, Hashable, CustomStringConvertible {
    /// The kernel's number.
    let rawValue: UInt16

    /// The kernel's name of the type (`RTM_NEWROUTE`), or its number for one this module does
    /// not name.
    package var description: String {
        switch rawValue {
        case LinuxNetlink.noop: "NLMSG_NOOP"
        case LinuxNetlink.error: "NLMSG_ERROR"
        case LinuxNetlink.done: "NLMSG_DONE"
        case LinuxNetlink.overrun: "NLMSG_OVERRUN"
        case LinuxNetlink.newLink: "RTM_NEWLINK"
        case LinuxNetlink.deleteLink: "RTM_DELLINK"
        case LinuxNetlink.newAddress: "RTM_NEWADDR"
        case LinuxNetlink.deleteAddress: "RTM_DELADDR"
        case LinuxNetlink.newRoute: "RTM_NEWROUTE"
        case LinuxNetlink.deleteRoute: "RTM_DELROUTE"
        case LinuxNetlink.newRule: "RTM_NEWRULE"
        case LinuxNetlink.deleteRule: "RTM_DELRULE"
        case LinuxNetlink.newNeighbour: "RTM_NEWNEIGH"
        case LinuxNetlink.deleteNeighbour: "RTM_DELNEIGH"
        case LinuxNetlink.newNexthop: "RTM_NEWNEXTHOP"
        case LinuxNetlink.deleteNexthop: "RTM_DELNEXTHOP"
        case LinuxNetlink.newRouterOption: "RTM_NEWNDUSEROPT"
        default: "type \(rawValue)"
        }
    }
}

/// A netlink message's flags (`nlmsg_flags`, `NLM_F_*`): the ones this module reads are named
/// (from the kernel's headers); the others are kept as the kernel sent them.
package struct NetlinkHeaderFlags: OptionSet, Sendable, Hashable {
    /// The kernel's bits.
    package let rawValue: UInt16

    /// Flags from the kernel's bits.
    package init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// `NLM_F_MULTI`: one part of a multipart reply (a dump), which `NLMSG_DONE` ends.
    package static let multipart = NetlinkHeaderFlags(rawValue: LinuxNetlink.multipart)
    /// `NLM_F_DUMP_INTR`: the objects changed while the kernel dumped them; the dump is inconsistent.
    package static let dumpInterrupted = NetlinkHeaderFlags(rawValue: LinuxNetlink.dumpInterrupted)
    /// `NLM_F_REPLACE`, on a new object's notification: it replaced an existing one.
    package static let replace = NetlinkHeaderFlags(rawValue: LinuxNetlink.replace)
}

/// A link (`RTM_NEWLINK` / `RTM_DELLINK`, `struct ifinfomsg` plus attributes).
package struct LinkMessage: Sendable, Hashable {
    /// Interface index.
    package var index: InterfaceIndex
    /// Hardware type (`ARPHRD_*`).
    package var hardwareType: HardwareType
    /// Device flags (`IFF_*`).
    package var flags: LinkFlags
    /// `IFLA_IFNAME`.
    package var name: String?
    /// `IFLA_LINKINFO` / `IFLA_INFO_KIND`, e.g. "veth", "wireguard".
    package var kind: String?
    /// `IFLA_LINK`: the link this one is stacked on (a VLAN's parent, a tunnel's bound device).
    package var lowerIndex: InterfaceIndex?
    /// `IFLA_MASTER`: the bridge or bond this link is a port of.
    package var masterIndex: InterfaceIndex?
    /// `IFLA_MTU`: the link's MTU in bytes.
    package var mtu: UInt32?
    /// `IFLA_LINK_NETNSID` was present: ``lowerIndex`` is an index in another network namespace
    /// (a container's macvlan, a veth whose peer lives elsewhere), not one of this namespace's links.
    package var isLowerInOtherNamespace = false
}

/// An address (`RTM_NEWADDR` / `RTM_DELADDR`, `struct ifaddrmsg` plus attributes).
///
/// The kernel's numbers (family, flags, scope, address bytes) stay in this module; the layers
/// above read ``addressFamily``, ``ipAddress`` and the flag tests.
package struct AddressMessage: Sendable, Hashable {
    /// `AF_INET` or `AF_INET6`.
    var family: UInt8
    /// Prefix length.
    package var prefixLength: UInt8
    /// `IFA_F_*` flags; the 32-bit `IFA_FLAGS` attribute when present, else `ifa_flags`.
    var flags: AddressFlags
    /// `RT_SCOPE_*`.
    var scope: UInt8
    /// Interface index.
    package var index: InterfaceIndex
    /// `IFA_LOCAL` when present (the local end of point-to-point links), else `IFA_ADDRESS`.
    var address: [UInt8]?
}

/// A route (`RTM_NEWROUTE` / `RTM_DELROUTE`, `struct rtmsg` plus attributes), also the answer
/// to a route lookup.
///
/// The kernel's numbers (family, scope, flags, address bytes) stay in this module; the layers
/// above read ``addressFamily``, ``gatewayAddress``, ``destinationAddress``,
/// ``preferredSourceAddress`` and ``isLinkDown``.
package struct RouteMessage: Sendable, Hashable {
    /// `AF_INET` or `AF_INET6`.
    var family: UInt8
    /// Destination prefix length.
    package var destinationLength: UInt8
    /// Routing table: `RTA_TABLE` when present, else `rtm_table`.
    package var table: RouteTable
    /// `RTN_*` route type.
    package var type: RouteType
    /// `RT_SCOPE_*`.
    var scope: UInt8
    /// `RTM_F_*` / `RTNH_F_*` flags.
    var flags: RouteFlags
    /// `RTA_DST`.
    var destination: [UInt8]?
    /// `RTA_OIF`.
    package var outputInterface: InterfaceIndex?
    /// `RTA_GATEWAY`.
    var gateway: [UInt8]?
    /// `RTA_PRIORITY` (the metric).
    package var priority: UInt32?
    /// `RTA_PREFSRC`: in a lookup's answer, the source address the kernel selects for the flow
    /// when the lookup named none.
    var preferredSource: [UInt8]?
    /// `rtm_protocol`: who installed the route (`RTPROT_*`).
    var origin: UInt8 = 0

    /// Whether a router advertisement installed the route (`RTPROT_RA`): the kernel's own
    /// handling, or systemd-networkd's (which installs each advertisement's routes again to
    /// refresh their lifetimes).
    package var isFromRouterAdvertisement: Bool { origin == LinuxNetlink.routeOriginRouterAdvertisement }
}

/// What a neighbour entry (`ndm_state`) says about reaching its address on its link.
package enum NeighbourState: Sendable, Hashable {
    /// Resolution is under way (`NUD_INCOMPLETE`), or no state (`NUD_NONE`).
    case resolving
    /// The link-layer address is known (reachable, stale, delay, probe, permanent, noarp).
    case resolved
    /// Resolution failed (`NUD_FAILED`): nothing answered.
    case failed

    /// The state the kernel's `ndm_state` bits describe.
    init(kernelState: UInt16) {
        if kernelState & LinuxNetlink.neighbourFailed != 0 {
            self = .failed
        } else if kernelState & LinuxNetlink.neighbourValid != 0 {
            self = .resolved
        } else {
            self = .resolving
        }
    }
}

/// `RTM_NEWNEIGH` / `RTM_DELNEIGH`: one neighbour (ARP or NDP) entry.
///
/// The kernel's numbers (family, address bytes) stay in this module; the layers above read
/// ``addressFamily`` and ``destinationAddress``.
package struct NeighbourMessage: Sendable, Hashable {
    /// `AF_INET` or `AF_INET6`.
    var family: UInt8
    /// The link (`ndm_ifindex`).
    package var index: InterfaceIndex
    /// `ndm_state`, interpreted.
    package var state: NeighbourState
    /// `NDA_DST`: the neighbour's address.
    var destination: [UInt8]?
    /// `NDA_LLADDR`: the neighbour's link-layer address (a MAC), once resolved.
    package var linkLayerAddress: [UInt8]?

    /// Creates a neighbour message.
    init(family: UInt8, index: InterfaceIndex, state: NeighbourState, destination: [UInt8]? = nil) {
        self.family = family
        self.index = index
        self.state = state
        self.destination = destination
    }
}

/// `RTM_NEWNDUSEROPT`: one option of a router advertisement received on a link.
package struct RouterAdvertisementOption: Sendable, Hashable {
    /// The link it came in on.
    package var index: InterfaceIndex
    /// For RFC 8910's option, the network's captive-portal API URI (NUL padding removed); nil
    /// for any other option.
    package var captivePortalAPI: String?
    /// For RFC 8781's PREF64 option, the NAT64 prefix and its lifetime; nil for any other option
    /// (and for a prefix length code RFC 8781 does not define).
    package var nat64Prefix: NAT64PrefixOption?
    /// `NDUSEROPT_SRCADDR`: the router that sent the advertisement (its link-local address).
    package var router: IPAddress?

    /// Creates a router advertisement option.
    package init(index: InterfaceIndex, captivePortalAPI: String? = nil, nat64Prefix: NAT64PrefixOption? = nil, router: IPAddress? = nil) {
        self.index = index
        self.captivePortalAPI = captivePortalAPI
        self.nat64Prefix = nat64Prefix
        self.router = router
    }
}

/// RFC 8781's PREF64 option (ND option 38): the prefix a network's NAT64 translates with, and how
/// long the router vouches for it.
package struct NAT64PrefixOption: Sendable, Hashable {
    /// The prefix: 96, 64, 56, 48, 40 or 32 bits (RFC 6052 §2.2).
    package var prefix: IPPrefix
    /// Its lifetime in seconds: the scaled lifetime times 8 (0: withdrawn).
    package var lifetimeSeconds: UInt32

    /// Creates the option's value.
    package init(prefix: IPPrefix, lifetimeSeconds: UInt32) {
        self.prefix = prefix
        self.lifetimeSeconds = lifetimeSeconds
    }

    /// The prefix lengths of the option's prefix length codes 0 through 5 (RFC 8781 §4); the
    /// codes 6 and 7 are undefined and the option is then ignored.
    package static let prefixLengths = [96, 64, 56, 48, 40, 32]

    /// The option's value from its 14 bytes after type and length (scaled lifetime and prefix
    /// length code, then the prefix's highest 96 bits); nil when too short or the code is undefined.
    package init?(value: some Collection<UInt8>) {
        let bytes = Array(value)
        guard bytes.count >= 14 else { return nil }
        let field = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let code = Int(field & 0x7)
        guard code < Self.prefixLengths.count else { return nil }
        let address = IPAddress(family: .ipv6, bytes: Array(bytes[2..<14]) + [0, 0, 0, 0])!
        self.init(prefix: IPPrefix(address, length: Self.prefixLengths[code]), lifetimeSeconds: UInt32(field >> 3) * 8)
    }
}

/// The body of one rtnetlink message.
package enum RouteNetlinkPayload: Sendable, Hashable {
    /// `RTM_NEWLINK`.
    case newLink(LinkMessage)
    /// `RTM_DELLINK`.
    case deleteLink(LinkMessage)
    /// `RTM_NEWLINK` or `RTM_DELLINK` of one protocol family's view of a link (`ifi_family`
    /// not `AF_UNSPEC`: `AF_BRIDGE` port state, `AF_INET6` link information), never the link
    /// itself: an `AF_BRIDGE` `RTM_DELLINK` is a port leaving its bridge, not a deletion.
    case linkFamilyInformation
    /// `RTM_NEWADDR`.
    case newAddress(AddressMessage)
    /// `RTM_DELADDR`.
    case deleteAddress(AddressMessage)
    /// `RTM_NEWROUTE`.
    case newRoute(RouteMessage)
    /// `RTM_DELROUTE`.
    case deleteRoute(RouteMessage)
    /// `RTM_NEWRULE` (`added`) or `RTM_DELRULE`, with what the rule selects on (nil: a body too
    /// short to tell), so that a copy of the rules' selectors follows without a dump of every rule.
    case ruleChanged(added: Bool, selectors: PolicyRuleSelectors?)
    /// `RTM_NEWNEXTHOP` or `RTM_DELNEXTHOP`: a nexthop object (`ip nexthop`) changed. Routes
    /// that use it change without a route message of their own (its deletion removes them;
    /// with `nexthop_compat_mode=0` a replacement moves them silently), so the kernel is asked again.
    case nexthopChanged
    /// `RTM_NEWNEIGH`.
    case newNeighbour(NeighbourMessage)
    /// `RTM_DELNEIGH`.
    case deleteNeighbour(NeighbourMessage)
    /// `RTM_NEWNDUSEROPT`.
    case routerAdvertisementOption(RouterAdvertisementOption)
    /// `NLMSG_DONE`: the end of a dump.
    case done
    /// `NLMSG_ERROR`: 0 for an acknowledgement, else a positive errno.
    case error(errno: Int32)
    /// `NLMSG_OVERRUN`.
    case overrun
    /// `NLMSG_NOOP` or any type this parser does not interpret.
    case other(type: UInt16)

    /// The link of a route a router advertisement installed (``RouteMessage/isFromRouterAdvertisement``),
    /// added, replaced or deleted; nil for any other message.
    package var linkOfRouteFromRouterAdvertisement: InterfaceIndex? {
        switch self {
        case .newRoute(let route), .deleteRoute(let route): route.isFromRouterAdvertisement ? route.outputInterface : nil
        default: nil
        }
    }
}

/// One parsed netlink message.
package struct NetlinkMessage: Sendable, Hashable {
    /// The header.
    package var header: NetlinkHeader
    /// The interpreted body.
    package var payload: RouteNetlinkPayload
}

/// Why bytes could not be parsed as rtnetlink messages.
package enum NetlinkParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer bytes than a `nlmsghdr` remain at `offset`.
    case truncatedHeader(offset: Int, available: Int)
    /// The header's length is smaller than a header or larger than the bytes that remain.
    case invalidMessageLength(offset: Int, length: UInt32, available: Int)
    /// The message is too short for its fixed payload struct.
    case truncatedPayload(messageType: UInt16, needed: Int, available: Int)
    /// An attribute's length is smaller than its header or runs past the message.
    case invalidAttributeLength(messageType: UInt16, attributeType: UInt16, length: Int, available: Int)
    /// An attribute has the wrong size for its type (e.g. a 3-byte interface index).
    case invalidAttributeValue(messageType: UInt16, attributeType: UInt16, length: Int)
    /// An `NLMSG_ERROR` whose code is not 0 or a negative errno.
    case invalidErrorCode(Int32)

    /// A sentence for the log.
    package var description: String {
        switch self {
        case let .truncatedHeader(offset, available):
            "truncated netlink header at offset \(offset) (\(available) bytes left)"
        case let .invalidMessageLength(offset, length, available):
            "invalid netlink message length \(length) at offset \(offset) (\(available) bytes left)"
        case let .truncatedPayload(type, needed, available):
            "netlink message type \(type) too short: \(available) bytes, needs \(needed)"
        case let .invalidAttributeLength(type, attribute, length, available):
            "netlink message type \(type): attribute \(attribute) has invalid length \(length) (\(available) bytes left)"
        case let .invalidAttributeValue(type, attribute, length):
            "netlink message type \(type): attribute \(attribute) has unexpected size \(length)"
        case let .invalidErrorCode(code):
            "netlink error message with invalid code \(code)"
        }
    }
}
