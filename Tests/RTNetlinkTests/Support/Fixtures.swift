/// Valid rtnetlink datagrams as the kernel sends them. Every test that breaks one spells out the
/// one thing it breaks.
enum Fixture {
    // MARK: Written byte by byte

    /// `RTM_NEWLINK` for a container's eth0, which is a veth: index 2, up with carrier, Ethernet.
    static let eth0Link: [UInt8] = [
        // struct nlmsghdr
        0x44, 0x00, 0x00, 0x00,  // nlmsg_len = 68
        0x10, 0x00,  // nlmsg_type = RTM_NEWLINK (16)
        0x00, 0x00,  // nlmsg_flags = 0 (a multicast event)
        0x00, 0x00, 0x00, 0x00,  // nlmsg_seq = 0
        0x00, 0x00, 0x00, 0x00,  // nlmsg_pid = 0 (the kernel)
        // struct ifinfomsg
        0x00, 0x00,  // ifi_family = AF_UNSPEC, __ifi_pad
        0x01, 0x00,  // ifi_type = ARPHRD_ETHER (1)
        0x02, 0x00, 0x00, 0x00,  // ifi_index = 2
        0x01, 0x00, 0x01, 0x00,  // ifi_flags = IFF_UP | IFF_LOWER_UP (0x0001_0001)
        0x00, 0x00, 0x00, 0x00,  // ifi_change = 0
        // IFLA_IFNAME
        0x09, 0x00, 0x03, 0x00,  // rta_len = 9, rta_type = IFLA_IFNAME (3)
        0x65, 0x74, 0x68, 0x30, 0x00,  // "eth0\0"
        0x00, 0x00, 0x00,  // padding to 4 bytes
        // IFLA_MTU (not interpreted: skipped)
        0x08, 0x00, 0x04, 0x00,  // rta_len = 8, rta_type = IFLA_MTU (4)
        0xdc, 0x05, 0x00, 0x00,  // 1500
        // IFLA_LINKINFO
        0x10, 0x00, 0x12, 0x80,  // rta_len = 16, rta_type = IFLA_LINKINFO (18) | NLA_F_NESTED (0x8000)
        0x09, 0x00, 0x01, 0x00,  //   rta_len = 9, rta_type = IFLA_INFO_KIND (1)
        0x76, 0x65, 0x74, 0x68, 0x00,  //   "veth\0"
        0x00, 0x00, 0x00,  //   padding to 4 bytes
    ]

    /// `RTM_NEWADDR` for a point-to-point IPv4 address on ppp0: local 100.64.1.2/32, peer 10.64.64.64.
    static let ppp0Address: [UInt8] = [
        // struct nlmsghdr
        0x34, 0x00, 0x00, 0x00,  // nlmsg_len = 52
        0x14, 0x00,  // nlmsg_type = RTM_NEWADDR (20)
        0x00, 0x00,  // nlmsg_flags = 0
        0x00, 0x00, 0x00, 0x00,  // nlmsg_seq = 0
        0x00, 0x00, 0x00, 0x00,  // nlmsg_pid = 0
        // struct ifaddrmsg
        0x02,  // ifa_family = AF_INET (2)
        0x20,  // ifa_prefixlen = 32
        0x80,  // ifa_flags = IFA_F_PERMANENT (0x80)
        0x00,  // ifa_scope = RT_SCOPE_UNIVERSE (0)
        0x05, 0x00, 0x00, 0x00,  // ifa_index = 5
        // IFA_ADDRESS: the peer on a point-to-point link
        0x08, 0x00, 0x01, 0x00,  // rta_len = 8, rta_type = IFA_ADDRESS (1)
        0x0a, 0x40, 0x40, 0x40,  // 10.64.64.64
        // IFA_LOCAL: this host's end
        0x08, 0x00, 0x02, 0x00,  // rta_len = 8, rta_type = IFA_LOCAL (2)
        0x64, 0x40, 0x01, 0x02,  // 100.64.1.2
        // IFA_LABEL (not interpreted: skipped)
        0x09, 0x00, 0x03, 0x00,  // rta_len = 9, rta_type = IFA_LABEL (3)
        0x70, 0x70, 0x70, 0x30, 0x00,  // "ppp0\0"
        0x00, 0x00, 0x00,  // padding to 4 bytes
    ]

    // MARK: Built field by field

    /// `RTM_DELLINK` for wg0 (index 5, ARPHRD_NONE, down, kind "wireguard").
    static let wg0Removed = Wire.message(
        type: ABI.MessageType.deleteLink,
        body: Wire.linkInfo(hardwareType: ABI.HardwareType.none, index: 5, flags: 0)
            + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("wg0"))
            + Wire.nested(ABI.LinkAttribute.linkInfo, [Wire.attribute(ABI.LinkAttribute.infoKind, Wire.cString("wireguard"))])
    )

    /// `RTM_NEWADDR` for a tentative IPv6 address 2001:db8::10/64 on index 3: the 8-bit `ifa_flags`
    /// says permanent only; the 32-bit `IFA_FLAGS` adds tentative.
    static let tentativeIPv6Address = Wire.message(
        type: ABI.MessageType.newAddress,
        body: Wire.addressInfo(
            family: ABI.Family.ipv6, prefixLength: 64, flags: UInt8(ABI.AddressFlag.permanent), scope: ABI.Scope.universe, index: 3
        )
            + Wire.attribute(ABI.AddressAttribute.address, documentationIPv6(0x10))
            + Wire.attribute(ABI.AddressAttribute.cacheInfo, [UInt8](repeating: 0xff, count: 16))
            + Wire.attribute(ABI.AddressAttribute.flags, Wire.u32(ABI.AddressFlag.permanent | ABI.AddressFlag.tentative))
    )

    /// `RTM_NEWROUTE`: default via 192.168.1.1 dev 2 metric 100, in table 100 (`rtm_table` says main).
    static let ipv4DefaultRoute = Wire.message(
        type: ABI.MessageType.newRoute,
        body: Wire.routeInfo(
            family: ABI.Family.ipv4, destinationLength: 0, table: ABI.Table.main, protocol: ABI.RouteProtocol.dhcp,
            scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: 0
        )
            + Wire.attribute(ABI.RouteAttribute.table, Wire.u32(100))
            + Wire.attribute(ABI.RouteAttribute.priority, Wire.u32(100))
            + Wire.attribute(ABI.RouteAttribute.gateway, [192, 168, 1, 1])
            + Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(2))
    )

    /// `RTM_NEWROUTE` answering an IPv6 lookup: 2001:db8::99/128 via fe80::1 dev 3 metric 1024,
    /// preferred source and preference attributes (skipped).
    static let ipv6LookupAnswer = Wire.message(
        type: ABI.MessageType.newRoute, sequence: 7,
        body: Wire.routeInfo(
            family: ABI.Family.ipv6, destinationLength: 128, table: ABI.Table.main, protocol: ABI.RouteProtocol.ra,
            scope: ABI.Scope.universe, type: ABI.RouteType.unicast, flags: ABI.RouteFlag.cloned
        )
            + Wire.attribute(ABI.RouteAttribute.table, Wire.u32(254))
            + Wire.attribute(ABI.RouteAttribute.destination, documentationIPv6(0x99))
            + Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(3))
            + Wire.attribute(ABI.RouteAttribute.preferredSource, documentationIPv6(0x10))
            + Wire.attribute(ABI.RouteAttribute.gateway, [0xfe, 0x80] + [UInt8](repeating: 0, count: 13) + [1])
            + Wire.attribute(ABI.RouteAttribute.priority, Wire.u32(1024))
            + Wire.attribute(ABI.RouteAttribute.preference, [0])
    )

    /// `RTM_NEWROUTE` answering an IPv4 lookup with an unreachable route (dev lo, table main).
    static let unreachableLookupAnswer = Wire.message(
        type: ABI.MessageType.newRoute, sequence: 8,
        body: Wire.routeInfo(
            family: ABI.Family.ipv4, destinationLength: 32, table: ABI.Table.main, protocol: ABI.RouteProtocol.boot,
            scope: ABI.Scope.universe, type: ABI.RouteType.unreachable, flags: ABI.RouteFlag.cloned
        )
            + Wire.attribute(ABI.RouteAttribute.table, Wire.u32(254))
            + Wire.attribute(ABI.RouteAttribute.destination, [203, 0, 113, 7])
            + Wire.attribute(ABI.RouteAttribute.outputInterface, Wire.u32(1))
    )

    /// `RTM_NEWRULE` (`struct fib_rule_hdr` + `FRA_PRIORITY`): the parser does not look inside.
    static let ruleAdded = Wire.message(type: ABI.MessageType.newRule, body: ruleBody)

    /// `RTM_DELRULE`, same body.
    static let ruleRemoved = Wire.message(type: ABI.MessageType.deleteRule, body: ruleBody)

    /// `RTM_NEWNEXTHOP` as `ip nexthop add id 1 via 10.77.0.1 dev ra0` makes it: `struct nhmsg`
    /// (family, scope, protocol, resvd, flags) + `NHA_ID` + `NHA_GATEWAY` + `NHA_OIF`; the
    /// parser does not look inside.
    static let nexthopAdded = Wire.message(
        type: ABI.MessageType.newNexthop,
        body: [ABI.Family.ipv4, 0, 4, 0] + Wire.u32(0)
            + Wire.attribute(1, Wire.u32(1)) + Wire.attribute(6, [10, 77, 0, 1]) + Wire.attribute(5, Wire.u32(3))
    )

    /// `RTM_DELNEXTHOP` for the same object.
    static let nexthopRemoved = Wire.message(type: ABI.MessageType.deleteNexthop, body: [ABI.Family.ipv4, 0, 4, 0] + Wire.u32(0) + Wire.attribute(1, Wire.u32(1)))

    /// `NLMSG_DONE` closing dump 42.
    static let dumpDone = Wire.message(
        type: ABI.MessageType.done, flags: ABI.HeaderFlag.multipart, sequence: 42, portID: 0, body: Wire.i32(0)
    )

    /// `NLMSG_ERROR` with code 0: the acknowledgement of request 9.
    static let acknowledgement = Wire.message(
        type: ABI.MessageType.error, sequence: 9, body: Wire.errorBody(0, answering: request(sequence: 9))
    )

    /// `NLMSG_ERROR` with -ENETUNREACH: a route lookup that found nothing.
    static let networkUnreachable = Wire.message(
        type: ABI.MessageType.error, sequence: 10,
        body: Wire.errorBody(-ABI.Errno.networkUnreachable, answering: request(sequence: 10))
    )

    /// One datagram of a link dump: lo, eth0 (as above, renumbered), then `NLMSG_DONE`.
    static let linkDumpDatagram: [UInt8] = {
        let lo = Wire.message(
            type: ABI.MessageType.newLink, flags: ABI.HeaderFlag.multipart, sequence: 42, portID: 0,
            body: Wire.linkInfo(hardwareType: ABI.HardwareType.loopback, index: 1, flags: 0x1_0049)
                + Wire.attribute(ABI.LinkAttribute.name, Wire.cString("lo"))
        )
        var eth0 = eth0Link
        eth0[6] = UInt8(ABI.HeaderFlag.multipart)  // nlmsg_flags
        eth0[8] = 42  // nlmsg_seq
        return lo + eth0 + dumpDone
    }()

    /// Every valid fixture, for the robustness test.
    static let all: [(name: String, bytes: [UInt8])] = [
        ("eth0Link", eth0Link), ("ppp0Address", ppp0Address), ("wg0Removed", wg0Removed),
        ("tentativeIPv6Address", tentativeIPv6Address), ("ipv4DefaultRoute", ipv4DefaultRoute),
        ("ipv6LookupAnswer", ipv6LookupAnswer), ("unreachableLookupAnswer", unreachableLookupAnswer),
        ("ruleAdded", ruleAdded), ("ruleRemoved", ruleRemoved), ("nexthopAdded", nexthopAdded), ("nexthopRemoved", nexthopRemoved),
        ("dumpDone", dumpDone),
        ("acknowledgement", acknowledgement), ("networkUnreachable", networkUnreachable),
        ("linkDumpDatagram", linkDumpDatagram),
    ]

    // MARK: Parts

    /// 2001:db8::`last`.
    static func documentationIPv6(_ last: UInt8) -> [UInt8] {
        [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [last]
    }

    /// A bare `RTM_GETROUTE` header (16 bytes) for `NLMSG_ERROR` bodies to echo.
    static func request(sequence: UInt32) -> [UInt8] {
        Wire.message(type: ABI.MessageType.getRoute, flags: ABI.HeaderFlag.request, sequence: sequence, portID: 4242, body: [])
    }

    private static let ruleBody: [UInt8] =
        [ABI.Family.ipv4, 0, 0, 0]  // family, dst_len, src_len, tos
        + [ABI.Table.main, 0, 0, 1]  // table, res1, res2, action = FR_ACT_TO_TBL
        + Wire.u32(0)  // flags
        + Wire.attribute(6, Wire.u32(32766))  // FRA_PRIORITY
}
