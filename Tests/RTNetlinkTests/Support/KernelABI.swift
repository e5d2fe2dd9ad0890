/// The rtnetlink numbers the fixtures are written in, copied by hand from the kernel's UAPI
/// headers (<linux/netlink.h>, <linux/rtnetlink.h>, <linux/if_link.h>, <linux/if_addr.h>,
/// <linux/if_arp.h>, <linux/if.h>).
///
/// Deliberately not taken from the module under test: a wrong constant there must make a test
/// fail, not move the fixture along with it.
enum ABI {
    /// `nlmsg_type` values.
    enum MessageType {
        static let noop: UInt16 = 1  // NLMSG_NOOP
        static let error: UInt16 = 2  // NLMSG_ERROR
        static let done: UInt16 = 3  // NLMSG_DONE
        static let overrun: UInt16 = 4  // NLMSG_OVERRUN
        static let newLink: UInt16 = 16  // RTM_NEWLINK
        static let deleteLink: UInt16 = 17  // RTM_DELLINK
        static let getLink: UInt16 = 18  // RTM_GETLINK
        static let newAddress: UInt16 = 20  // RTM_NEWADDR
        static let deleteAddress: UInt16 = 21  // RTM_DELADDR
        static let getAddress: UInt16 = 22  // RTM_GETADDR
        static let newRoute: UInt16 = 24  // RTM_NEWROUTE
        static let deleteRoute: UInt16 = 25  // RTM_DELROUTE
        static let getRoute: UInt16 = 26  // RTM_GETROUTE
        static let newNeighbour: UInt16 = 28  // RTM_NEWNEIGH
        static let deleteNeighbour: UInt16 = 29  // RTM_DELNEIGH
        static let getNeighbour: UInt16 = 30  // RTM_GETNEIGH
        static let newRouterOption: UInt16 = 68  // RTM_NEWNDUSEROPT
        static let newRule: UInt16 = 32  // RTM_NEWRULE
        static let deleteRule: UInt16 = 33  // RTM_DELRULE
        static let newNexthop: UInt16 = 104  // RTM_NEWNEXTHOP
        static let deleteNexthop: UInt16 = 105  // RTM_DELNEXTHOP
    }

    /// `nlmsg_flags` bits.
    enum HeaderFlag {
        static let request: UInt16 = 0x1  // NLM_F_REQUEST
        static let multipart: UInt16 = 0x2  // NLM_F_MULTI
        static let dump: UInt16 = 0x300  // NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH
        static let dumpInterrupted: UInt16 = 0x10  // NLM_F_DUMP_INTR
        static let replace: UInt16 = 0x100  // NLM_F_REPLACE
    }

    /// Fixed payload sizes.
    enum Size {
        static let header = 16  // struct nlmsghdr
        static let linkInfo = 16  // struct ifinfomsg
        static let addressInfo = 8  // struct ifaddrmsg
        static let routeInfo = 12  // struct rtmsg
        static let neighbourInfo = 12  // struct ndmsg
        static let routerOptionInfo = 16  // struct nduseroptmsg
        static let attributeHeader = 4  // struct rtattr
    }

    /// Address families.
    enum Family {
        static let unspecified: UInt8 = 0  // AF_UNSPEC
        static let ipv4: UInt8 = 2  // AF_INET
        static let ipv6: UInt8 = 10  // AF_INET6
        static let bridge: UInt8 = 7  // AF_BRIDGE
        static let mpls: UInt8 = 28  // AF_MPLS
    }

    /// `ifi_type`.
    enum HardwareType {
        static let ether: UInt16 = 1  // ARPHRD_ETHER
        static let loopback: UInt16 = 772  // ARPHRD_LOOPBACK
        static let none: UInt16 = 65534  // ARPHRD_NONE (wireguard, tun)
    }

    /// `ifi_flags` (`IFF_*`).
    enum LinkFlag {
        static let up: UInt32 = 0x1  // IFF_UP
        static let broadcast: UInt32 = 0x2  // IFF_BROADCAST
        static let loopback: UInt32 = 0x8  // IFF_LOOPBACK
        static let running: UInt32 = 0x40  // IFF_RUNNING
        static let multicast: UInt32 = 0x1000  // IFF_MULTICAST
        static let lowerUp: UInt32 = 0x10000  // IFF_LOWER_UP
    }

    /// `IFLA_*` link attributes.
    enum LinkAttribute {
        static let address: UInt16 = 1  // IFLA_ADDRESS (MAC)
        static let name: UInt16 = 3  // IFLA_IFNAME
        static let mtu: UInt16 = 4  // IFLA_MTU
        static let operationalState: UInt16 = 16  // IFLA_OPERSTATE (u8)
        static let lower: UInt16 = 5  // IFLA_LINK (u32)
        static let linkInfo: UInt16 = 18  // IFLA_LINKINFO (nested)
        static let linkNamespaceID: UInt16 = 37  // IFLA_LINK_NETNSID (s32)
        static let infoKind: UInt16 = 1  // IFLA_INFO_KIND, inside IFLA_LINKINFO
        static let infoData: UInt16 = 2  // IFLA_INFO_DATA, inside IFLA_LINKINFO
    }

    /// `IFA_*` address attributes.
    enum AddressAttribute {
        static let address: UInt16 = 1  // IFA_ADDRESS
        static let local: UInt16 = 2  // IFA_LOCAL
        static let label: UInt16 = 3  // IFA_LABEL
        static let cacheInfo: UInt16 = 6  // IFA_CACHEINFO
        static let flags: UInt16 = 8  // IFA_FLAGS (u32)
    }

    /// `IFA_F_*` address flags.
    enum AddressFlag {
        static let noDuplicateAddressDetection: UInt32 = 0x02  // IFA_F_NODAD
        static let duplicateAddressDetectionFailed: UInt32 = 0x08  // IFA_F_DADFAILED
        static let optimistic: UInt32 = 0x04  // IFA_F_OPTIMISTIC
        static let tentative: UInt32 = 0x40  // IFA_F_TENTATIVE
        static let permanent: UInt32 = 0x80  // IFA_F_PERMANENT
        static let noPrefixRoute: UInt32 = 0x200  // IFA_F_NOPREFIXROUTE (only in IFA_FLAGS)
    }

    /// `RTA_*` route attributes.
    enum RouteAttribute {
        static let destination: UInt16 = 1  // RTA_DST
        static let outputInterface: UInt16 = 4  // RTA_OIF (u32)
        static let gateway: UInt16 = 5  // RTA_GATEWAY
        static let priority: UInt16 = 6  // RTA_PRIORITY (u32)
        static let preferredSource: UInt16 = 7  // RTA_PREFSRC
        static let table: UInt16 = 15  // RTA_TABLE (u32)
        static let preference: UInt16 = 20  // RTA_PREF (u8)
    }

    /// `rtm_table`.
    enum Table {
        static let compat: UInt8 = 252  // RT_TABLE_COMPAT: "look at RTA_TABLE"
        static let main: UInt8 = 254  // RT_TABLE_MAIN
        static let local: UInt8 = 255  // RT_TABLE_LOCAL
    }

    /// `rtm_type` (`RTN_*`).
    enum RouteType {
        static let unicast: UInt8 = 1  // RTN_UNICAST
        static let local: UInt8 = 2  // RTN_LOCAL
        static let blackhole: UInt8 = 6  // RTN_BLACKHOLE
        static let unreachable: UInt8 = 7  // RTN_UNREACHABLE
        static let prohibit: UInt8 = 8  // RTN_PROHIBIT
        static let `throw`: UInt8 = 9  // RTN_THROW
    }

    /// `rtm_protocol` (`RTPROT_*`).
    enum RouteProtocol {
        static let kernel: UInt8 = 2  // RTPROT_KERNEL
        static let boot: UInt8 = 3  // RTPROT_BOOT
        static let dhcp: UInt8 = 16  // RTPROT_DHCP
        static let ra: UInt8 = 9  // RTPROT_RA
    }

    /// `rtm_table` (`RT_TABLE_*`).
    enum RouteTable {
        static let main: UInt32 = 254  // RT_TABLE_MAIN
    }

    /// `RT_SCOPE_*`.
    enum Scope {
        static let universe: UInt8 = 0  // RT_SCOPE_UNIVERSE
        static let link: UInt8 = 253  // RT_SCOPE_LINK
        static let host: UInt8 = 254  // RT_SCOPE_HOST
    }

    /// `rtm_flags` (`RTNH_F_*`, `RTM_F_*`).
    enum RouteFlag {
        static let linkDown: UInt32 = 0x10  // RTNH_F_LINKDOWN
        static let cloned: UInt32 = 0x200  // RTM_F_CLONED
    }

    /// Attribute type bits.
    static let nestedAttribute: UInt16 = 0x8000  // NLA_F_NESTED
    static let networkByteOrderAttribute: UInt16 = 0x4000  // NLA_F_NET_BYTEORDER

    /// errno values the fixtures use (Linux numbering).
    enum Errno {
        static let ioError: Int32 = 5  // EIO
        static let invalidArgument: Int32 = 22  // EINVAL
        static let networkUnreachable: Int32 = 101  // ENETUNREACH
    }

    /// `ndm_state` bits (`NUD_*`) and neighbour attributes.
    enum Neighbour {
        static let incomplete: UInt16 = 0x01  // NUD_INCOMPLETE
        static let reachable: UInt16 = 0x02  // NUD_REACHABLE
        static let stale: UInt16 = 0x04  // NUD_STALE
        static let failed: UInt16 = 0x20  // NUD_FAILED
        static let permanent: UInt16 = 0x80  // NUD_PERMANENT
        static let destination: UInt16 = 1  // NDA_DST
        static let linkLayerAddress: UInt16 = 2  // NDA_LLADDR
    }
}
