/// Lays out rtnetlink structs field by field, little-endian, for parser fixtures.
///
/// Written independently of `NetlinkRequest` so that the builder and the parser cannot share a
/// mistake; `WireBuilderTests` checks it against hand-written bytes.
enum Wire {
    // MARK: Scalars

    static func u16(_ value: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }

    static func u32(_ value: UInt32) -> [UInt8] {
        [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: value >> $0) }
    }

    static func i32(_ value: Int32) -> [UInt8] {
        u32(UInt32(bitPattern: value))
    }

    /// `text` with its terminating NUL, as the kernel sends names and kinds.
    static func cString(_ text: String) -> [UInt8] {
        Array(text.utf8) + [0]
    }

    /// `bytes` padded with zeros to the next multiple of 4 (`NLMSG_ALIGN`, `RTA_ALIGN`).
    static func padded(_ bytes: [UInt8]) -> [UInt8] {
        bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    // MARK: Structs

    /// `struct nlmsghdr` followed by `body` and its padding. `length` overrides `nlmsg_len`
    /// (which is otherwise 16 + `body.count`, without the padding).
    static func message(
        type: UInt16, flags: UInt16 = 0, sequence: UInt32 = 0, portID: UInt32 = 0, length: UInt32? = nil, body: [UInt8]
    ) -> [UInt8] {
        let header = u32(length ?? UInt32(ABI.Size.header + body.count))  // nlmsg_len
            + u16(type)  // nlmsg_type
            + u16(flags)  // nlmsg_flags
            + u32(sequence)  // nlmsg_seq
            + u32(portID)  // nlmsg_pid
        return padded(header + body)
    }

    /// `struct ifinfomsg`.
    static func linkInfo(
        family: UInt8 = ABI.Family.unspecified, hardwareType: UInt16, index: Int32, flags: UInt32, change: UInt32 = 0
    ) -> [UInt8] {
        [family, 0]  // ifi_family, __ifi_pad
            + u16(hardwareType)  // ifi_type
            + i32(index)  // ifi_index
            + u32(flags)  // ifi_flags
            + u32(change)  // ifi_change
    }

    /// `struct ifaddrmsg`.
    static func addressInfo(family: UInt8, prefixLength: UInt8, flags: UInt8, scope: UInt8, index: Int32) -> [UInt8] {
        [family, prefixLength, flags, scope]  // ifa_family, ifa_prefixlen, ifa_flags, ifa_scope
            + i32(index)  // ifa_index (u32 in the header, an interface index)
    }

    /// `struct rtmsg`.
    static func routeInfo(
        family: UInt8, destinationLength: UInt8, sourceLength: UInt8 = 0, tos: UInt8 = 0, table: UInt8,
        protocol: UInt8, scope: UInt8, type: UInt8, flags: UInt32
    ) -> [UInt8] {
        [family, destinationLength, sourceLength, tos]  // rtm_family, rtm_dst_len, rtm_src_len, rtm_tos
            + [table, `protocol`, scope, type]  // rtm_table, rtm_protocol, rtm_scope, rtm_type
            + u32(flags)  // rtm_flags
    }

    /// `struct rtattr` followed by `value` and its padding. `length` overrides `rta_len`
    /// (which is otherwise 4 + `value.count`, without the padding).
    static func attribute(_ type: UInt16, _ value: [UInt8], length: UInt16? = nil) -> [UInt8] {
        padded(u16(length ?? UInt16(ABI.Size.attributeHeader + value.count)) + u16(type) + value)
    }

    /// A nested attribute (`NLA_F_NESTED` set on its type, as the kernel does for `IFLA_LINKINFO`).
    static func nested(_ type: UInt16, _ attributes: [[UInt8]]) -> [UInt8] {
        attribute(type | ABI.nestedAttribute, attributes.flatMap { $0 })
    }

    /// `struct ndmsg`.
    static func neighbourInfo(family: UInt8, index: Int32, state: UInt16) -> [UInt8] {
        [family, 0] + u16(0) + i32(index) + u16(state) + [0, 1]  // ndm_flags, ndm_type (NDA unicast)
    }

    /// `struct nlmsgerr`: the error code and the header of the request it answers.
    static func errorBody(_ code: Int32, answering request: [UInt8]) -> [UInt8] {
        i32(code) + Array(request.prefix(ABI.Size.header))
    }

    // MARK: Reading back

    /// The little-endian `u32` at `offset`.
    static func readU32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    /// The little-endian `u16` at `offset`.
    static func readU16(_ bytes: [UInt8], at offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    /// The bytes a hex string (as a capture prints them) spells.
    static func bytes(hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
        }
    }

    /// `bytes` as space-separated hex, for failure messages.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
    }
}
