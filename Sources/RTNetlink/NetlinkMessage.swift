/// The fixed header of every netlink message (`struct nlmsghdr`).
public struct NetlinkHeader: Sendable, Hashable {
    /// Length of the message including this header.
    public var length: UInt32
    /// Message type (`RTM_*`, `NLMSG_*`).
    public var type: UInt16
    /// `NLM_F_*` flags.
    public var flags: UInt16
    /// Sequence number; replies carry the request's.
    public var sequence: UInt32
    /// Sender port id; 0 for the kernel.
    public var portID: UInt32
}

/// A link (`RTM_NEWLINK` / `RTM_DELLINK`, `struct ifinfomsg` plus attributes).
public struct LinkMessage: Sendable, Hashable {
    /// Interface index.
    public var index: Int32
    /// Hardware type (`ARPHRD_*`).
    public var hardwareType: UInt16
    /// Device flags (`IFF_*`).
    public var flags: UInt32
    /// `IFLA_IFNAME`.
    public var name: String?
    /// `IFLA_LINKINFO` / `IFLA_INFO_KIND`, e.g. "veth", "wireguard".
    public var kind: String?
    /// `IFLA_LINK`: the link this one is stacked on (a VLAN's parent, a tunnel's bound device).
    public var lowerIndex: Int32?
    /// `IFLA_MASTER`: the bridge or bond this link is a port of.
    public var masterIndex: Int32?
    /// `IFLA_LINK_NETNSID` was present: ``lowerIndex`` is an index in another network namespace
    /// (a container's macvlan, a veth whose peer lives elsewhere), not one of this namespace's links.
    public var isLowerInOtherNamespace = false
}

/// An address (`RTM_NEWADDR` / `RTM_DELADDR`, `struct ifaddrmsg` plus attributes).
public struct AddressMessage: Sendable, Hashable {
    /// `AF_INET` or `AF_INET6`.
    public var family: UInt8
    /// Prefix length.
    public var prefixLength: UInt8
    /// `IFA_F_*` flags; the 32-bit `IFA_FLAGS` attribute when present, else `ifa_flags`.
    public var flags: UInt32
    /// `RT_SCOPE_*`.
    public var scope: UInt8
    /// Interface index.
    public var index: Int32
    /// `IFA_LOCAL` when present (the local end of point-to-point links), else `IFA_ADDRESS`.
    public var address: [UInt8]?
}

/// A route (`RTM_NEWROUTE` / `RTM_DELROUTE`, `struct rtmsg` plus attributes), also the answer
/// to a route lookup.
public struct RouteMessage: Sendable, Hashable {
    /// `AF_INET` or `AF_INET6`.
    public var family: UInt8
    /// Destination prefix length.
    public var destinationLength: UInt8
    /// Routing table: `RTA_TABLE` when present, else `rtm_table`.
    public var table: UInt32
    /// `RTN_*` route type.
    public var type: UInt8
    /// `RT_SCOPE_*`.
    public var scope: UInt8
    /// `RTM_F_*` / `RTNH_F_*` flags.
    public var flags: UInt32
    /// `RTA_DST`.
    public var destination: [UInt8]?
    /// `RTA_OIF`.
    public var outputInterface: Int32?
    /// `RTA_GATEWAY`.
    public var gateway: [UInt8]?
    /// `RTA_PRIORITY` (the metric).
    public var priority: UInt32?
    /// `RTA_PREFSRC`: in a lookup's answer, the source address the kernel selects for the flow
    /// when the lookup named none.
    public var preferredSource: [UInt8]?
}

/// What a neighbour entry (`ndm_state`) says about reaching its address on its link.
public enum NeighbourState: Sendable, Hashable {
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
public struct NeighbourMessage: Sendable, Hashable {
    /// `AF_INET` or `AF_INET6`.
    public var family: UInt8
    /// The link (`ndm_ifindex`).
    public var index: Int32
    /// `ndm_state`, interpreted.
    public var state: NeighbourState
    /// `NDA_DST`: the neighbour's address.
    public var destination: [UInt8]?

    /// Creates a neighbour message.
    public init(family: UInt8, index: Int32, state: NeighbourState, destination: [UInt8]? = nil) {
        self.family = family
        self.index = index
        self.state = state
        self.destination = destination
    }
}

/// `RTM_NEWNDUSEROPT`: one option of a router advertisement received on a link.
public struct RouterAdvertisementOption: Sendable, Hashable {
    /// The link it came in on.
    public var index: Int32
    /// For RFC 8910's option, the network's captive-portal API URI (NUL padding removed); nil
    /// for any other option.
    public var captivePortalAPI: String?

    /// Creates a router advertisement option.
    public init(index: Int32, captivePortalAPI: String? = nil) {
        self.index = index
        self.captivePortalAPI = captivePortalAPI
    }
}

/// The body of one rtnetlink message.
public enum RouteNetlinkPayload: Sendable, Hashable {
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
    /// `RTM_NEWRULE` or `RTM_DELRULE` (the rule itself is not needed: the kernel is asked again).
    case ruleChanged
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
}

/// One parsed netlink message.
public struct NetlinkMessage: Sendable, Hashable {
    /// The header.
    public var header: NetlinkHeader
    /// The interpreted body.
    public var payload: RouteNetlinkPayload
}

/// Why bytes could not be parsed as rtnetlink messages.
public enum NetlinkParseError: Error, Sendable, Hashable, CustomStringConvertible {
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
    public var description: String {
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

/// Parses rtnetlink datagrams. Pure: bytes in, typed messages out.
///
/// Repeated attributes: the last one wins. Unknown message and attribute types are skipped.
public enum NetlinkParser {
    /// Parses every message of one datagram.
    ///
    /// A message whose payload is malformed yields a failure and parsing goes on with the next
    /// message; a framing error (bad header length) ends the datagram with a failure.
    public static func parse(datagram bytes: UnsafeRawBufferPointer) -> [Result<NetlinkMessage, NetlinkParseError>] {
        var results: [Result<NetlinkMessage, NetlinkParseError>] = []
        var offset = 0
        while offset < bytes.count {
            let available = bytes.count - offset
            guard available >= LinuxNetlink.headerLength else {
                results.append(.failure(.truncatedHeader(offset: offset, available: available)))
                break
            }
            let header = NetlinkHeader(
                length: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self),
                type: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self),
                flags: bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self),
                sequence: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self),
                portID: bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
            )
            guard header.length >= LinuxNetlink.headerLength, Int(header.length) <= available else {
                results.append(.failure(.invalidMessageLength(offset: offset, length: header.length, available: available)))
                break
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + LinuxNetlink.headerLength)..<(offset + Int(header.length))])
            do {
                results.append(.success(NetlinkMessage(header: header, payload: try parsePayload(type: header.type, body: body))))
            } catch {
                results.append(.failure(error))
            }
            offset += LinuxNetlink.align(Int(header.length))
        }
        return results
    }

    /// Parses every message of one datagram given as an array (tests, fuzzing).
    public static func parse(datagram bytes: [UInt8]) -> [Result<NetlinkMessage, NetlinkParseError>] {
        bytes.withUnsafeBytes { parse(datagram: $0) }
    }

    private static func parsePayload(type: UInt16, body: UnsafeRawBufferPointer) throws(NetlinkParseError) -> RouteNetlinkPayload {
        switch type {
        case LinuxNetlink.newLink, LinuxNetlink.deleteLink:
            try requireLength(LinuxNetlink.linkInfoLength, type: type, body: body)
            // Only AF_UNSPEC messages describe the link; the bridge family's RTM_DELLINK when a
            // port leaves its bridge does not delete the port.
            guard body[0] == LinuxNetlink.unspecifiedFamily else { return .linkFamilyInformation }
            let link = try parseLink(type: type, body: body)
            return type == LinuxNetlink.newLink ? .newLink(link) : .deleteLink(link)
        case LinuxNetlink.newAddress: return .newAddress(try parseAddress(type: type, body: body))
        case LinuxNetlink.deleteAddress: return .deleteAddress(try parseAddress(type: type, body: body))
        case LinuxNetlink.newRoute: return .newRoute(try parseRoute(type: type, body: body))
        case LinuxNetlink.deleteRoute: return .deleteRoute(try parseRoute(type: type, body: body))
        case LinuxNetlink.newRule, LinuxNetlink.deleteRule: return .ruleChanged
        case LinuxNetlink.newNexthop, LinuxNetlink.deleteNexthop: return .nexthopChanged
        case LinuxNetlink.newNeighbour: return .newNeighbour(try parseNeighbour(type: type, body: body))
        case LinuxNetlink.deleteNeighbour: return .deleteNeighbour(try parseNeighbour(type: type, body: body))
        case LinuxNetlink.newRouterOption: return .routerAdvertisementOption(try parseRouterOption(type: type, body: body))
        case LinuxNetlink.done: return .done
        case LinuxNetlink.overrun: return .overrun
        case LinuxNetlink.error:
            try requireLength(LinuxNetlink.errorLength, type: type, body: body)
            let code = body.loadUnaligned(as: Int32.self)
            // The kernel sends 0 or a negative errno; anything else is forged or corrupt.
            guard code <= 0, code > -4096 else { throw .invalidErrorCode(code) }
            return .error(errno: -code)
        default: return .other(type: type)
        }
    }

    private static func requireLength(_ needed: Int, type: UInt16, body: UnsafeRawBufferPointer) throws(NetlinkParseError) {
        if body.count < needed { throw .truncatedPayload(messageType: type, needed: needed, available: body.count) }
    }

    private static func parseLink(type: UInt16, body: UnsafeRawBufferPointer) throws(NetlinkParseError) -> LinkMessage {
        try requireLength(LinuxNetlink.linkInfoLength, type: type, body: body)
        var link = LinkMessage(
            index: body.loadUnaligned(fromByteOffset: 4, as: Int32.self),
            hardwareType: body.loadUnaligned(fromByteOffset: 2, as: UInt16.self),
            flags: body.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        )
        try forEachAttribute(in: body, from: LinuxNetlink.linkInfoLength, messageType: type) { (attribute, value) throws(NetlinkParseError) in
            switch attribute {
            case LinuxNetlink.linkName:
                link.name = string(value)
            case LinuxNetlink.linkLower:
                link.lowerIndex = Int32(bitPattern: try uint32(value, type: type, attribute: attribute))
            case LinuxNetlink.linkMaster:
                link.masterIndex = Int32(bitPattern: try uint32(value, type: type, attribute: attribute))
            case LinuxNetlink.linkNamespaceID:
                link.isLowerInOtherNamespace = true
            case LinuxNetlink.linkInfo:
                try forEachAttribute(in: value, from: 0, messageType: type) { (nested, nestedValue) throws(NetlinkParseError) in
                    if nested == LinuxNetlink.linkInfoKind { link.kind = string(nestedValue) }
                }
            default: break
            }
        }
        return link
    }

    private static func parseAddress(type: UInt16, body: UnsafeRawBufferPointer) throws(NetlinkParseError) -> AddressMessage {
        try requireLength(LinuxNetlink.addressInfoLength, type: type, body: body)
        var address = AddressMessage(
            family: body[0],
            prefixLength: body[1],
            flags: UInt32(body[2]),
            scope: body[3],
            index: body.loadUnaligned(fromByteOffset: 4, as: Int32.self)
        )
        var local: [UInt8]?
        try forEachAttribute(in: body, from: LinuxNetlink.addressInfoLength, messageType: type) { (attribute, value) throws(NetlinkParseError) in
            switch attribute {
            case LinuxNetlink.addressAddress: address.address = try ipAddress(value, family: address.family, type: type, attribute: attribute)
            case LinuxNetlink.addressLocal: local = try ipAddress(value, family: address.family, type: type, attribute: attribute)
            case LinuxNetlink.addressFlags: address.flags = try uint32(value, type: type, attribute: attribute)
            default: break
            }
        }
        if let local { address.address = local }
        return address
    }

    private static func parseRoute(type: UInt16, body: UnsafeRawBufferPointer) throws(NetlinkParseError) -> RouteMessage {
        try requireLength(LinuxNetlink.routeInfoLength, type: type, body: body)
        var route = RouteMessage(
            family: body[0],
            destinationLength: body[1],
            table: UInt32(body[4]),
            type: body[7],
            scope: body[6],
            flags: body.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        )
        try forEachAttribute(in: body, from: LinuxNetlink.routeInfoLength, messageType: type) { (attribute, value) throws(NetlinkParseError) in
            switch attribute {
            case LinuxNetlink.routeDestination: route.destination = try ipAddress(value, family: route.family, type: type, attribute: attribute)
            case LinuxNetlink.routeGateway: route.gateway = try ipAddress(value, family: route.family, type: type, attribute: attribute)
            case LinuxNetlink.routeOutputInterface: route.outputInterface = Int32(bitPattern: try uint32(value, type: type, attribute: attribute))
            case LinuxNetlink.routePriority: route.priority = try uint32(value, type: type, attribute: attribute)
            case LinuxNetlink.routeTable: route.table = try uint32(value, type: type, attribute: attribute)
            case LinuxNetlink.routePreferredSource:
                route.preferredSource = try ipAddress(value, family: route.family, type: type, attribute: attribute)
            default: break
            }
        }
        return route
    }

    private static func parseNeighbour(type: UInt16, body: UnsafeRawBufferPointer) throws(NetlinkParseError) -> NeighbourMessage {
        try requireLength(LinuxNetlink.neighbourInfoLength, type: type, body: body)
        var neighbour = NeighbourMessage(
            family: body[0],
            index: body.loadUnaligned(fromByteOffset: 4, as: Int32.self),
            state: NeighbourState(kernelState: body.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        )
        try forEachAttribute(in: body, from: LinuxNetlink.neighbourInfoLength, messageType: type) { (attribute, value) throws(NetlinkParseError) in
            if attribute == LinuxNetlink.neighbourDestination {
                neighbour.destination = try ipAddress(value, family: neighbour.family, type: type, attribute: attribute)
            }
        }
        return neighbour
    }

    /// `struct nduseroptmsg`, then the option as it was on the wire (type, length in units of
    /// 8 bytes, value), then attributes (the router's address).
    private static func parseRouterOption(type: UInt16, body: UnsafeRawBufferPointer) throws(NetlinkParseError) -> RouterAdvertisementOption {
        let header = LinuxNetlink.routerOptionInfoLength
        try requireLength(header, type: type, body: body)
        let optionsLength = Int(body.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        try requireLength(header + optionsLength, type: type, body: body)
        var option = RouterAdvertisementOption(index: body.loadUnaligned(fromByteOffset: 4, as: Int32.self))
        let bytes = body[header..<(header + optionsLength)]
        guard bytes.count >= 2, bytes[header] == LinuxNetlink.captivePortalOption else { return option }
        let length = min(Int(bytes[header + 1]) * 8, bytes.count)
        let uri = bytes[(header + 2)..<(header + max(length, 2))].prefix { $0 != 0 }
        option.captivePortalAPI = String(decoding: uri, as: UTF8.self)
        return option
    }

    /// Calls `body` with each attribute's type (flags masked) and value, starting at `start`.
    private static func forEachAttribute(
        in bytes: UnsafeRawBufferPointer, from start: Int, messageType: UInt16,
        _ body: (UInt16, UnsafeRawBufferPointer) throws(NetlinkParseError) -> Void
    ) throws(NetlinkParseError) {
        var offset = LinuxNetlink.alignAttribute(start)
        while offset + LinuxNetlink.attributeHeaderLength <= bytes.count {
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let type = bytes.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self) & LinuxNetlink.attributeTypeMask
            let available = bytes.count - offset
            guard length >= LinuxNetlink.attributeHeaderLength, length <= available else {
                throw .invalidAttributeLength(messageType: messageType, attributeType: type, length: length, available: available)
            }
            try body(type, UnsafeRawBufferPointer(rebasing: bytes[(offset + LinuxNetlink.attributeHeaderLength)..<(offset + length)]))
            offset += LinuxNetlink.alignAttribute(length)
        }
    }

    private static func string(_ value: UnsafeRawBufferPointer) -> String {
        String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
    }

    private static func uint32(_ value: UnsafeRawBufferPointer, type: UInt16, attribute: UInt16) throws(NetlinkParseError) -> UInt32 {
        guard value.count == 4 else { throw .invalidAttributeValue(messageType: type, attributeType: attribute, length: value.count) }
        return value.loadUnaligned(as: UInt32.self)
    }

    private static func ipAddress(_ value: UnsafeRawBufferPointer, family: UInt8, type: UInt16, attribute: UInt16) throws(NetlinkParseError) -> [UInt8] {
        let expected = IPAddressBytes.length(family: family)
        guard expected == nil || value.count == expected else {
            throw .invalidAttributeValue(messageType: type, attributeType: attribute, length: value.count)
        }
        return Array(value)
    }
}
