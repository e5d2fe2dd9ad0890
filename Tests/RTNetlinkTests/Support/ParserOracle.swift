@testable import RTNetlink

/// An independent reading of a datagram's framing, and the checks every parser result must pass
/// whatever the bytes: the robustness test's oracle.
enum ParserOracle {
    /// What the framing says about one slot of the result list.
    enum Frame {
        /// A message whose `nlmsghdr` is valid; its payload may still be malformed.
        case message(HeaderFields)
        /// Fewer than 16 bytes left: must be `.truncatedHeader` and the last result.
        case truncatedHeader(offset: Int, available: Int)
        /// `nlmsg_len` < 16 or past the end: must be `.invalidMessageLength` and the last result.
        case invalidLength(offset: Int, length: UInt32, available: Int)
    }

    /// Walks `bytes` by `nlmsg_len` (aligned to 4), the way `NLMSG_NEXT` does.
    static func frames(of bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var offset = 0
        while offset < bytes.count {
            let available = bytes.count - offset
            guard available >= ABI.Size.header else {
                frames.append(.truncatedHeader(offset: offset, available: available))
                break
            }
            let length = Wire.readU32(bytes, at: offset)
            guard length >= UInt32(ABI.Size.header), Int(length) <= available else {
                frames.append(.invalidLength(offset: offset, length: length, available: available))
                break
            }
            frames.append(.message(HeaderFields(
                length: length,
                type: Wire.readU16(bytes, at: offset + 4),
                flags: Wire.readU16(bytes, at: offset + 6),
                sequence: Wire.readU32(bytes, at: offset + 8),
                portID: Wire.readU32(bytes, at: offset + 12)
            )))
            offset += (Int(length) + 3) & ~3
        }
        return frames
    }

    /// Why `results` cannot be the parse of `bytes`, or nil when they are consistent.
    static func inconsistency(of results: [Result<NetlinkMessage, NetlinkParseError>], for bytes: [UInt8]) -> String? {
        let frames = frames(of: bytes)
        guard frames.count == results.count else {
            return "\(results.count) results for \(frames.count) frames"
        }
        for (position, (frame, result)) in zip(frames, results).enumerated() {
            if let problem = inconsistency(of: result, in: frame) {
                return "result \(position): \(problem) (\(result))"
            }
        }
        return nil
    }

    private static func inconsistency(of result: Result<NetlinkMessage, NetlinkParseError>, in frame: Frame) -> String? {
        switch (frame, result) {
        case let (.truncatedHeader(offset, available), .failure(error)):
            return error == .truncatedHeader(offset: offset, available: available) ? nil : "expected truncatedHeader"
        case let (.invalidLength(offset, length, available), .failure(error)):
            return error == .invalidMessageLength(offset: offset, length: length, available: available)
                ? nil : "expected invalidMessageLength"
        case let (.message(header), .success(message)):
            guard HeaderFields(message.header) == header else { return "header \(message.header) differs from the bytes \(header)" }
            return inconsistency(of: message.payload, type: header.type)
        case let (.message(header), .failure(error)):
            return inconsistency(of: error, in: header)
        default:
            return "does not match frame \(frame)"
        }
    }

    /// The payload case must follow from the message type alone, and address bytes must have
    /// their family's length.
    static func inconsistency(of payload: RouteNetlinkPayload, type: UInt16) -> String? {
        let matches: Bool
        switch payload {
        case .newLink: matches = type == ABI.MessageType.newLink
        case .deleteLink: matches = type == ABI.MessageType.deleteLink
        case .linkFamilyInformation: matches = type == ABI.MessageType.newLink || type == ABI.MessageType.deleteLink
        case let .newAddress(address):
            matches = type == ABI.MessageType.newAddress
            if let problem = lengthProblem(address.address, family: address.family, "address") { return problem }
        case let .deleteAddress(address):
            matches = type == ABI.MessageType.deleteAddress
            if let problem = lengthProblem(address.address, family: address.family, "address") { return problem }
        case let .newRoute(route):
            matches = type == ABI.MessageType.newRoute
            if let problem = routeProblem(route) { return problem }
        case let .deleteRoute(route):
            matches = type == ABI.MessageType.deleteRoute
            if let problem = routeProblem(route) { return problem }
        case .ruleChanged: matches = type == ABI.MessageType.newRule || type == ABI.MessageType.deleteRule
        case .nexthopChanged: matches = type == ABI.MessageType.newNexthop || type == ABI.MessageType.deleteNexthop
        case let .newNeighbour(neighbour):
            matches = type == ABI.MessageType.newNeighbour
            if let problem = lengthProblem(neighbour.destination, family: neighbour.family, "neighbour") { return problem }
        case let .deleteNeighbour(neighbour):
            matches = type == ABI.MessageType.deleteNeighbour
            if let problem = lengthProblem(neighbour.destination, family: neighbour.family, "neighbour") { return problem }
        case .routerAdvertisementOption: matches = type == ABI.MessageType.newRouterOption
        case .done: matches = type == ABI.MessageType.done
        case .error: matches = type == ABI.MessageType.error
        case .overrun: matches = type == ABI.MessageType.overrun
        case let .other(otherType): matches = otherType == type && !interpretedTypes.contains(type)
        }
        return matches ? nil : "payload \(payload) for message type \(type)"
    }

    /// A payload error must name the message's own type, and only types with a fixed payload
    /// struct can have one; its numbers must describe an actual fault.
    private static func inconsistency(of error: NetlinkParseError, in header: HeaderFields) -> String? {
        let bodyLength = Int(header.length) - ABI.Size.header
        switch error {
        case let .truncatedPayload(type, needed, available):
            guard type == header.type, let size = payloadSizes[type], needed == size || (blobTypes.contains(type) && needed > size),
                  available == bodyLength, available < needed
            else { return "inconsistent truncatedPayload for a \(bodyLength)-byte body" }
        case let .invalidAttributeLength(type, _, length, available):
            guard type == header.type, attributeTypes.contains(type), length < ABI.Size.attributeHeader || length > available,
                  available <= bodyLength
            else { return "inconsistent invalidAttributeLength for a \(bodyLength)-byte body" }
        case let .invalidAttributeValue(type, _, length):
            guard type == header.type, attributeTypes.contains(type), length <= bodyLength
            else { return "inconsistent invalidAttributeValue for a \(bodyLength)-byte body" }
        case let .invalidErrorCode(code):
            // The kernel sends 0 or -errno, and errno is below 4096 (MAX_ERRNO = 4095).
            guard header.type == ABI.MessageType.error, code > 0 || code <= -4096
            else { return "invalidErrorCode \(code) in message type \(header.type)" }
        case .truncatedHeader, .invalidMessageLength:
            return "framing error for a well-framed message"
        }
        return nil
    }

    private static func routeProblem(_ route: RouteMessage) -> String? {
        lengthProblem(route.destination, family: route.family, "destination")
            ?? lengthProblem(route.gateway, family: route.family, "gateway")
    }

    private static func lengthProblem(_ bytes: [UInt8]?, family: UInt8, _ what: String) -> String? {
        guard let bytes else { return nil }
        let expected: Int? = family == ABI.Family.ipv4 ? 4 : family == ABI.Family.ipv6 ? 16 : nil
        guard let expected, bytes.count != expected else { return nil }
        return "\(what) of \(bytes.count) bytes for family \(family)"
    }

    /// Message types with a fixed payload struct, and its size.
    private static let payloadSizes: [UInt16: Int] = [
        ABI.MessageType.newLink: ABI.Size.linkInfo, ABI.MessageType.deleteLink: ABI.Size.linkInfo,
        ABI.MessageType.newAddress: ABI.Size.addressInfo, ABI.MessageType.deleteAddress: ABI.Size.addressInfo,
        ABI.MessageType.newRoute: ABI.Size.routeInfo, ABI.MessageType.deleteRoute: ABI.Size.routeInfo,
        ABI.MessageType.newNeighbour: ABI.Size.neighbourInfo, ABI.MessageType.deleteNeighbour: ABI.Size.neighbourInfo,
        ABI.MessageType.newRouterOption: ABI.Size.routerOptionInfo,
        ABI.MessageType.error: 4,
    ]

    /// Message types whose attributes the parser reads.
    private static let attributeTypes: Set<UInt16> = [
        ABI.MessageType.newLink, ABI.MessageType.deleteLink, ABI.MessageType.newAddress,
        ABI.MessageType.deleteAddress, ABI.MessageType.newRoute, ABI.MessageType.deleteRoute,
        ABI.MessageType.newNeighbour, ABI.MessageType.deleteNeighbour,
    ]

    /// Message types whose fixed payload is followed by a length-prefixed blob (the options of
    /// `RTM_NEWNDUSEROPT`): a short blob is a truncated payload too.
    private static let blobTypes: Set<UInt16> = [ABI.MessageType.newRouterOption]

    /// Message types that must never come out as `.other`.
    private static let interpretedTypes: Set<UInt16> = attributeTypes.union([
        ABI.MessageType.newRouterOption, ABI.MessageType.newRule, ABI.MessageType.deleteRule, ABI.MessageType.newNexthop, ABI.MessageType.deleteNexthop, ABI.MessageType.done,
        ABI.MessageType.error, ABI.MessageType.overrun,
    ])
}
