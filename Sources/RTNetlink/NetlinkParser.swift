#if canImport(Glibc)
import Glibc
#endif
import NetworkTypes

/// Parses rtnetlink datagrams. Pure: bytes in, typed messages out.
///
/// Repeated attributes: the last one wins. Unknown message and attribute types are skipped.
package enum NetlinkParser {
    /// Parses every message of one datagram.
    ///
    /// A message whose payload is malformed yields a failure and parsing goes on with the next
    /// message; a framing error (bad header length) ends the datagram with a failure.
    package static func parse(datagram bytes: UnsafeRawBufferPointer) -> [Result<NetlinkMessage, NetlinkParseError>] {
        parse(datagram: bytes, skipping: { _, _ in false })
    }

    /// Parses the messages of one datagram that `skip` (given each one's header and body) does
    /// not pass over: a dump reader's way to read a large table without the cost of parsing
    /// what it does not keep.
    static func parse(
        datagram bytes: UnsafeRawBufferPointer, skipping skip: (NetlinkHeader, UnsafeRawBufferPointer) -> Bool
    ) -> [Result<NetlinkMessage, NetlinkParseError>] {
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
                type: NetlinkMessageType(rawValue: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)),
                flags: NetlinkHeaderFlags(rawValue: bytes.loadUnaligned(fromByteOffset: offset + 6, as: UInt16.self)),
                sequence: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self),
                portID: bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
            )
            guard header.length >= LinuxNetlink.headerLength, Int(header.length) <= available else {
                results.append(.failure(.invalidMessageLength(offset: offset, length: header.length, available: available)))
                break
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + LinuxNetlink.headerLength)..<(offset + Int(header.length))])
            if skip(header, body) {
                offset += LinuxNetlink.align(Int(header.length))
                continue
            }
            do {
                results.append(.success(NetlinkMessage(header: header, payload: try parsePayload(type: header.type.rawValue, body: body))))
            } catch {
                results.append(.failure(error))
            }
            offset += LinuxNetlink.align(Int(header.length))
        }
        return results
    }

    /// Whether a message is a route with a prefix (not a default route), read from its
    /// `rtm_dst_len` alone: what a reader of default routes passes over unparsed.
    static func isRouteWithPrefix(_ header: NetlinkHeader, _ body: UnsafeRawBufferPointer) -> Bool {
        header.type.rawValue == LinuxNetlink.newRoute && body.count >= LinuxNetlink.routeInfoLength && body[LinuxNetlink.routeDestinationLengthOffset] != 0
    }

    /// Parses every message of one datagram given as an array (tests, fuzzing).
    package static func parse(datagram bytes: [UInt8]) -> [Result<NetlinkMessage, NetlinkParseError>] {
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
        case LinuxNetlink.newRule, LinuxNetlink.deleteRule:
            return .ruleChanged(added: type == LinuxNetlink.newRule, selectors: policyRuleSelectors(ofRuleMessage: type, body))
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
            index: InterfaceIndex(body.loadUnaligned(fromByteOffset: 4, as: Int32.self)),
            hardwareType: HardwareType(rawValue: body.loadUnaligned(fromByteOffset: 2, as: UInt16.self)),
            flags: LinkFlags(rawValue: body.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        )
        try forEachAttribute(in: body, from: LinuxNetlink.linkInfoLength, messageType: type) { (attribute, value) throws(NetlinkParseError) in
            switch attribute {
            case LinuxNetlink.linkName:
                link.name = string(value)
            case LinuxNetlink.linkLower:
                link.lowerIndex = try interfaceIndex(value, type: type, attribute: attribute)
            case LinuxNetlink.linkMaster:
                link.masterIndex = try interfaceIndex(value, type: type, attribute: attribute)
            case LinuxNetlink.linkMTU:
                link.mtu = try uint32(value, type: type, attribute: attribute)
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
            flags: AddressFlags(rawValue: UInt32(body[2])),
            scope: body[3],
            index: InterfaceIndex(body.loadUnaligned(fromByteOffset: 4, as: Int32.self))
        )
        var local: [UInt8]?
        try forEachAttribute(in: body, from: LinuxNetlink.addressInfoLength, messageType: type) { (attribute, value) throws(NetlinkParseError) in
            switch attribute {
            case LinuxNetlink.addressAddress: address.address = try ipAddress(value, family: address.family, type: type, attribute: attribute)
            case LinuxNetlink.addressLocal: local = try ipAddress(value, family: address.family, type: type, attribute: attribute)
            case LinuxNetlink.addressFlags: address.flags = AddressFlags(rawValue: try uint32(value, type: type, attribute: attribute))
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
            table: RouteTable(rawValue: UInt32(body[4])),
            type: RouteType(rawValue: body[7]),
            scope: body[6],
            flags: RouteFlags(rawValue: body.loadUnaligned(fromByteOffset: 8, as: UInt32.self)),
            origin: body[5]
        )
        try forEachAttribute(in: body, from: LinuxNetlink.routeInfoLength, messageType: type) { (attribute, value) throws(NetlinkParseError) in
            switch attribute {
            case LinuxNetlink.routeDestination: route.destination = try ipAddress(value, family: route.family, type: type, attribute: attribute)
            case LinuxNetlink.routeGateway: route.gateway = try ipAddress(value, family: route.family, type: type, attribute: attribute)
            case LinuxNetlink.routeOutputInterface: route.outputInterface = try interfaceIndex(value, type: type, attribute: attribute)
            case LinuxNetlink.routePriority: route.priority = try uint32(value, type: type, attribute: attribute)
            case LinuxNetlink.routeTable: route.table = RouteTable(rawValue: try uint32(value, type: type, attribute: attribute))
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
            index: InterfaceIndex(body.loadUnaligned(fromByteOffset: 4, as: Int32.self)),
            state: NeighbourState(kernelState: body.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
        )
        try forEachAttribute(in: body, from: LinuxNetlink.neighbourInfoLength, messageType: type) { (attribute, value) throws(NetlinkParseError) in
            switch attribute {
            case LinuxNetlink.neighbourDestination:
                neighbour.destination = try ipAddress(value, family: neighbour.family, type: type, attribute: attribute)
            case LinuxNetlink.neighbourLinkLayerAddress:
                neighbour.linkLayerAddress = Array(value)
            default: break
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
        var option = RouterAdvertisementOption(index: InterfaceIndex(body.loadUnaligned(fromByteOffset: 4, as: Int32.self)))
        try forEachAttribute(in: body, from: header + optionsLength, messageType: type) { attribute, value throws(NetlinkParseError) in
            if attribute == LinuxNetlink.routerOptionSource {
                option.router = IPAddress(family: .ipv6, bytes: try ipAddress(value, family: IPAddressBytes.ipv6Family, type: type, attribute: attribute))
            }
        }
        let bytes = body[header..<(header + optionsLength)]
        guard bytes.count >= 2 else { return option }
        let length = min(Int(bytes[header + 1]) * 8, bytes.count)
        let value = bytes[(header + 2)..<(header + max(length, 2))]
        switch bytes[header] {
        case LinuxNetlink.captivePortalOption: option.captivePortalAPI = String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
        // RFC 8781 §4: a PREF64 option whose Length is not 2 (16 bytes) is ignored.
        case LinuxNetlink.nat64PrefixOption where bytes[header + 1] == 2: option.nat64Prefix = NAT64PrefixOption(value: value)
        default: break
        }
        return option
    }

    /// Calls `body` with each attribute's type (flags masked) and value, starting at `start`.
    static func forEachAttribute(
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

    private static func interfaceIndex(_ value: UnsafeRawBufferPointer, type: UInt16, attribute: UInt16) throws(NetlinkParseError) -> InterfaceIndex {
        InterfaceIndex(Int32(bitPattern: try uint32(value, type: type, attribute: attribute)))
    }

    private static func ipAddress(_ value: UnsafeRawBufferPointer, family: UInt8, type: UInt16, attribute: UInt16) throws(NetlinkParseError) -> [UInt8] {
        let expected = IPAddressBytes.length(family: family)
        guard expected == nil || value.count == expected else {
            throw .invalidAttributeValue(messageType: type, attributeType: attribute, length: value.count)
        }
        return Array(value)
    }
}
