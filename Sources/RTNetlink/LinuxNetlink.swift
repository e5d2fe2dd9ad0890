import CNetlinkShims

/// The rtnetlink constants the parser, the requests and the socket filters use, straight from the
/// kernel headers under Swift names; those files name no `RTM_`/`RTA_`/`NLMSG_` constant of
/// their own. The public flag, route-type and scope values are in `KernelFlags.swift`, and the
/// socket calls (`NetlinkSocket`, `SourceAddressQuery`) keep the C socket API's names
/// (`AF_NETLINK`, `SOCK_RAW`, `sockaddr_nl`).
enum LinuxNetlink {
    static let headerLength = Int(CReach_NLMSG_HDRLEN())
    static let attributeHeaderLength = Int(CReach_RTA_HDRLEN())

    static func align(_ length: Int) -> Int { Int(CReach_NLMSG_ALIGN(UInt32(length))) }
    static func alignAttribute(_ length: Int) -> Int { Int(CReach_RTA_ALIGN(UInt32(length))) }

    // Message types.
    static let noop = UInt16(NLMSG_NOOP)
    static let error = UInt16(NLMSG_ERROR)
    static let done = UInt16(NLMSG_DONE)
    static let overrun = UInt16(NLMSG_OVERRUN)
    static let newLink = UInt16(RTM_NEWLINK)
    static let deleteLink = UInt16(RTM_DELLINK)
    static let getLink = UInt16(RTM_GETLINK)
    static let newAddress = UInt16(RTM_NEWADDR)
    static let deleteAddress = UInt16(RTM_DELADDR)
    static let getAddress = UInt16(RTM_GETADDR)
    static let newRoute = UInt16(RTM_NEWROUTE)
    static let deleteRoute = UInt16(RTM_DELROUTE)
    static let getRoute = UInt16(RTM_GETROUTE)
    static let newRule = UInt16(RTM_NEWRULE)
    static let deleteRule = UInt16(RTM_DELRULE)
    static let getRule = UInt16(RTM_GETRULE)
    static let newNexthop = UInt16(RTM_NEWNEXTHOP)
    static let newNeighbour = UInt16(RTM_NEWNEIGH)
    static let deleteNeighbour = UInt16(RTM_DELNEIGH)
    static let getNeighbour = UInt16(RTM_GETNEIGH)
    static let newRouterOption = UInt16(RTM_NEWNDUSEROPT)
    static let deleteNexthop = UInt16(RTM_DELNEXTHOP)

    // Route lookup flags (rtm_flags).
    static let fibMatch = UInt32(RTM_F_FIB_MATCH)
    static let lookupTable = UInt32(RTM_F_LOOKUP_TABLE)

    // Header flags.
    static let request = UInt16(NLM_F_REQUEST)
    static let dump = UInt16(NLM_F_DUMP)
    static let multipart = UInt16(NLM_F_MULTI)
    static let dumpInterrupted = UInt16(NLM_F_DUMP_INTR)
    static let replace = UInt16(NLM_F_REPLACE)

    // Fixed payload sizes.
    static let linkInfoLength = MemoryLayout<ifinfomsg>.size
    static let addressInfoLength = MemoryLayout<ifaddrmsg>.size
    static let routeInfoLength = MemoryLayout<rtmsg>.size
    /// `rtm_protocol` of a route a router advertisement installed.
    static let routeOriginRouterAdvertisement = UInt8(RTPROT_RA)
    /// Where `rtm_dst_len` is in `struct rtmsg` (after the one-byte `rtm_family`).
    static let routeDestinationLengthOffset = MemoryLayout<rtmsg>.offset(of: \rtmsg.rtm_dst_len)!
    static let neighbourInfoLength = MemoryLayout<ndmsg>.size
    static let ruleInfoLength = MemoryLayout<fib_rule_hdr>.size
    static let routerOptionInfoLength = MemoryLayout<nduseroptmsg>.size
    /// The router advertisement option of RFC 8910 (the network's captive-portal API URI); the
    /// kernel passes it on since Linux 5.10, and its headers do not name it.
    static let captivePortalOption: UInt8 = 37
    /// RFC 8781's PREF64 option (type 38): a NAT64 prefix and its lifetime.
    static let nat64PrefixOption: UInt8 = 38
    static let errorLength = MemoryLayout<Int32>.size

    // Attribute type mask (drops NLA_F_NESTED / NLA_F_NET_BYTEORDER).
    static let attributeTypeMask = CReach_NLA_TYPE_MASK()

    // Link attributes.
    static let linkName = UInt16(IFLA_IFNAME)
    static let linkInfo = UInt16(IFLA_LINKINFO)
    static let linkInfoKind = UInt16(IFLA_INFO_KIND)
    static let linkLower = UInt16(IFLA_LINK)
    static let linkMaster = UInt16(IFLA_MASTER)
    static let linkMTU = UInt16(IFLA_MTU)
    static let linkNamespaceID = UInt16(IFLA_LINK_NETNSID)
    /// `AF_UNSPEC` as the one-byte `ifi_family` of link messages that describe the link itself.
    static let unspecifiedFamily = UInt8(AF_UNSPEC)

    // Address attributes.
    static let addressAddress = UInt16(IFA_ADDRESS)
    static let addressLocal = UInt16(IFA_LOCAL)
    static let addressFlags = UInt16(IFA_FLAGS)

    // Neighbour attributes and states (`NUD_*`, bits of `ndm_state`).
    static let neighbourDestination = UInt16(NDA_DST)
    static let neighbourLinkLayerAddress = UInt16(NDA_LLADDR)
    static let neighbourFailed = UInt16(NUD_FAILED)
    static let neighbourValid = UInt16(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)

    // Router advertisement option attributes: the advertising router's address.
    static let routerOptionSource = UInt16(NDUSEROPT_SRCADDR)

    // Route attributes.
    static let routeDestination = UInt16(RTA_DST.rawValue)
    static let routeSource = UInt16(RTA_SRC.rawValue)
    static let routeOutputInterface = UInt16(RTA_OIF.rawValue)
    static let routeGateway = UInt16(RTA_GATEWAY.rawValue)
    static let routePriority = UInt16(RTA_PRIORITY.rawValue)
    static let routeTable = UInt16(RTA_TABLE.rawValue)
    static let routePreferredSource = UInt16(RTA_PREFSRC.rawValue)
    /// Flow keys of a lookup (Linux 4.17): the transport protocol (one byte) and the
    /// destination port (two bytes, network order), as policy rules' `ipproto` and `dport` see them.
    static let routeIPProtocol = UInt16(RTA_IP_PROTO.rawValue)
    static let routeDestinationPort = UInt16(RTA_DPORT.rawValue)
    /// The user whose flow a lookup is for (Linux 4.10; a `u32`), as policy rules' `uidrange`
    /// see it; without it the kernel takes the asking process's uid.
    static let routeUID = UInt16(RTA_UID.rawValue)

    // Policy rule attributes: the selectors on which an application's flow and the UDP probe
    // (or another user's flow) can differ.
    static let ruleUIDRange = UInt16(FRA_UID_RANGE)
    static let ruleIPProtocol = UInt16(FRA_IP_PROTO)
    static let ruleSourcePortRange = UInt16(FRA_SPORT_RANGE)
    static let ruleDestinationPortRange = UInt16(FRA_DPORT_RANGE)

    // Multicast groups.
    static let linkGroup = UInt32(RTNLGRP_LINK.rawValue)
    static let ipv4AddressGroup = UInt32(RTNLGRP_IPV4_IFADDR.rawValue)
    static let ipv6AddressGroup = UInt32(RTNLGRP_IPV6_IFADDR.rawValue)
    static let ipv4RouteGroup = UInt32(RTNLGRP_IPV4_ROUTE.rawValue)
    static let ipv6RouteGroup = UInt32(RTNLGRP_IPV6_ROUTE.rawValue)
    static let ipv4RuleGroup = UInt32(RTNLGRP_IPV4_RULE.rawValue)
    static let ipv6RuleGroup = UInt32(RTNLGRP_IPV6_RULE.rawValue)
    /// Beyond the 32 groups of the bind-time bitmask: joined with `NETLINK_ADD_MEMBERSHIP`.
    static let nexthopGroup = UInt32(RTNLGRP_NEXTHOP.rawValue)
    static let neighbourGroup = UInt32(RTNLGRP_NEIGH.rawValue)
    static let routerOptionGroup = UInt32(RTNLGRP_ND_USEROPT.rawValue)
}
