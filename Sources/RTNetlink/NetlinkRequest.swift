/// Builds rtnetlink request messages.
package enum NetlinkRequest {
    /// `RTM_GETLINK` dump of every link.
    package static func dumpLinks(sequence: UInt32) -> [UInt8] {
        message(type: LinuxNetlink.getLink, flags: LinuxNetlink.request | LinuxNetlink.dump, sequence: sequence,
                payload: [UInt8](repeating: 0, count: LinuxNetlink.linkInfoLength))
    }

    /// `RTM_GETADDR` dump of every address of every family.
    package static func dumpAddresses(sequence: UInt32) -> [UInt8] {
        message(type: LinuxNetlink.getAddress, flags: LinuxNetlink.request | LinuxNetlink.dump, sequence: sequence,
                payload: [UInt8](repeating: 0, count: LinuxNetlink.addressInfoLength))
    }

    /// `RTM_GETROUTE` dump of every route of every family and table.
    package static func dumpRoutes(sequence: UInt32) -> [UInt8] {
        message(type: LinuxNetlink.getRoute, flags: LinuxNetlink.request | LinuxNetlink.dump, sequence: sequence,
                payload: [UInt8](repeating: 0, count: LinuxNetlink.routeInfoLength))
    }

    /// `RTM_GETRULE` dump of every policy rule of every family.
    package static func dumpRules(sequence: UInt32) -> [UInt8] {
        message(type: LinuxNetlink.getRule, flags: LinuxNetlink.request | LinuxNetlink.dump, sequence: sequence,
                payload: [UInt8](repeating: 0, count: LinuxNetlink.ruleInfoLength))
    }

    /// `RTM_GETNEIGH` for one neighbour entry: `destination` on link `index`.
    static func getNeighbour(_ destination: [UInt8], family: UInt8, index: Int32, sequence: UInt32) -> [UInt8] {
        var payload = [UInt8](repeating: 0, count: LinuxNetlink.neighbourInfoLength)
        payload[0] = family
        withUnsafeBytes(of: index) { payload.replaceSubrange(4..<8, with: $0) }
        payload += attribute(type: LinuxNetlink.neighbourDestination, value: destination)
        return message(type: LinuxNetlink.getNeighbour, flags: LinuxNetlink.request, sequence: sequence, payload: payload)
    }

    /// `RTM_GETROUTE` for one destination: the kernel's own route lookup (policy rules included).
    ///
    /// - Parameters:
    ///   - destination: 4 or 16 address bytes.
    ///   - family: `AF_INET` or `AF_INET6`.
    ///   - source: the source address the lookup is for (`RTA_SRC`: policy rules `from`, IPv6
    ///     source-specific routes), as an application's connection has one; nil for none.
    ///   - flow: the flow's keys (`RTA_IP_PROTO`, `RTA_DPORT`, and `RTA_UID` when it names a
    ///     user: policy rules `ipproto`, `dport`, `uidrange`), as the connection whose route this
    ///     is has them; nil for none.
    ///   - matchedEntry: ask for the routing-table entry that matched (`RTM_F_FIB_MATCH`: its
    ///     prefix and metric) instead of the resolved next hop.
    package static func lookupRoute(
        to destination: [UInt8], family: UInt8, source: [UInt8]? = nil, outputInterface: Int32? = nil, flow: FlowKeys? = nil,
        matchedEntry: Bool = false, sequence: UInt32
    ) -> [UInt8] {
        var payload = [UInt8](repeating: 0, count: LinuxNetlink.routeInfoLength)
        payload[0] = family
        payload[1] = UInt8(destination.count * 8)
        payload[2] = UInt8((source?.count ?? 0) * 8)
        // RTM_F_LOOKUP_TABLE: report the table the lookup used (IPv4 says "main" otherwise).
        let flags = LinuxNetlink.lookupTable | (matchedEntry ? LinuxNetlink.fibMatch : 0)
        withUnsafeBytes(of: flags) { payload.replaceSubrange(8..<12, with: $0) }
        payload += attribute(type: LinuxNetlink.routeDestination, value: destination)
        if let source { payload += attribute(type: LinuxNetlink.routeSource, value: source) }
        if let outputInterface { payload += attribute(type: LinuxNetlink.routeOutputInterface, value: withUnsafeBytes(of: outputInterface) { Array($0) }) }
        if let flow {
            payload += attribute(type: LinuxNetlink.routeIPProtocol, value: [flow.transportProtocol.number])
            payload += attribute(type: LinuxNetlink.routeDestinationPort, value: withUnsafeBytes(of: flow.destinationPort.bigEndian) { Array($0) })
            if let uid = flow.uid { payload += attribute(type: LinuxNetlink.routeUID, value: withUnsafeBytes(of: uid) { Array($0) }) }
        }
        return message(type: LinuxNetlink.getRoute, flags: LinuxNetlink.request, sequence: sequence, payload: payload)
    }

    /// A complete message: `nlmsghdr` followed by `payload` (padded to the netlink alignment).
    static func message(type: UInt16, flags: UInt16, sequence: UInt32, payload: [UInt8]) -> [UInt8] {
        let length = LinuxNetlink.headerLength + payload.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(LinuxNetlink.align(length))
        append(UInt32(length), to: &bytes)
        append(type, to: &bytes)
        append(flags, to: &bytes)
        append(sequence, to: &bytes)
        append(UInt32(0), to: &bytes)
        bytes += payload
        bytes += [UInt8](repeating: 0, count: LinuxNetlink.align(length) - length)
        return bytes
    }

    /// One attribute (`struct rtattr` + value + padding).
    static func attribute(type: UInt16, value: [UInt8]) -> [UInt8] {
        let length = LinuxNetlink.attributeHeaderLength + value.count
        var bytes: [UInt8] = []
        append(UInt16(length), to: &bytes)
        append(type, to: &bytes)
        bytes += value
        bytes += [UInt8](repeating: 0, count: LinuxNetlink.alignAttribute(length) - length)
        return bytes
    }

    private static func append<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value) { bytes += $0 }
    }
}
