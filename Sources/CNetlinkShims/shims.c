#include "CNetlinkShims.h"

#include <linux/if.h>
#include <linux/if_arp.h>
#include <stddef.h>

// The layouts the Swift parser relies on (it reads these structs at fixed offsets).
_Static_assert(sizeof(struct nlmsghdr) == 16, "nlmsghdr layout");
_Static_assert(sizeof(struct nlmsgerr) == 20, "nlmsgerr layout");
_Static_assert(sizeof(struct ifinfomsg) == 16, "ifinfomsg layout");
_Static_assert(sizeof(struct ifaddrmsg) == 8, "ifaddrmsg layout");
_Static_assert(sizeof(struct rtmsg) == 12, "rtmsg layout");
_Static_assert(sizeof(struct rtattr) == 4, "rtattr layout");
_Static_assert(offsetof(struct ifinfomsg, ifi_index) == 4, "ifinfomsg.ifi_index offset");
_Static_assert(offsetof(struct ifinfomsg, ifi_flags) == 8, "ifinfomsg.ifi_flags offset");
_Static_assert(offsetof(struct rtmsg, rtm_flags) == 8, "rtmsg.rtm_flags offset");
_Static_assert(sizeof(struct ndmsg) == 12, "ndmsg layout");
_Static_assert(offsetof(struct ndmsg, ndm_ifindex) == 4, "ndmsg.ndm_ifindex offset");
_Static_assert(offsetof(struct ndmsg, ndm_state) == 8, "ndmsg.ndm_state offset");
_Static_assert(sizeof(struct nduseroptmsg) == 16, "nduseroptmsg layout");
_Static_assert(offsetof(struct nduseroptmsg, nduseropt_opts_len) == 2, "nduseroptmsg.nduseropt_opts_len offset");
_Static_assert(offsetof(struct nduseroptmsg, nduseropt_ifindex) == 4, "nduseroptmsg.nduseropt_ifindex offset");

// The kernel's numbers NetworkTypes names (it is pure Swift and cannot import these headers):
// a header that disagrees with them stops the build here.
_Static_assert(IFF_UP == 0x1, "NetworkTypes LinkFlags.up");
_Static_assert(IFF_LOOPBACK == 0x8, "NetworkTypes LinkFlags.loopback");
_Static_assert(IFF_LOWER_UP == 0x10000, "NetworkTypes LinkFlags.lowerUp");
_Static_assert(ARPHRD_ETHER == 1, "NetworkTypes HardwareType.ethernet");
_Static_assert(ARPHRD_PPP == 512, "NetworkTypes HardwareType.ppp");
_Static_assert(ARPHRD_RAWIP == 519, "NetworkTypes HardwareType.rawIP");
_Static_assert(ARPHRD_TUNNEL == 768, "NetworkTypes HardwareType.ipip");
_Static_assert(ARPHRD_TUNNEL6 == 769, "NetworkTypes HardwareType.ip6ip6");
_Static_assert(ARPHRD_LOOPBACK == 772, "NetworkTypes HardwareType.loopback");
_Static_assert(ARPHRD_SIT == 776, "NetworkTypes HardwareType.sit");
_Static_assert(ARPHRD_IPGRE == 778, "NetworkTypes HardwareType.gre");
_Static_assert(ARPHRD_IEEE80211 == 801, "NetworkTypes HardwareType.ieee80211");
_Static_assert(ARPHRD_IEEE80211_RADIOTAP == 803, "NetworkTypes HardwareType.ieee80211Radiotap");
_Static_assert(ARPHRD_NONE == 65534, "NetworkTypes HardwareType.none");
_Static_assert(RTN_UNICAST == 1, "NetworkTypes RouteType.unicast");
_Static_assert(RTN_LOCAL == 2, "NetworkTypes RouteType.local");
_Static_assert(RTN_BLACKHOLE == 6, "NetworkTypes RouteType.blackhole");
_Static_assert(RTN_UNREACHABLE == 7, "NetworkTypes RouteType.unreachable");
_Static_assert(RTN_PROHIBIT == 8, "NetworkTypes RouteType.prohibit");
_Static_assert(RTN_THROW == 9, "NetworkTypes RouteType.throw");
_Static_assert(RT_TABLE_DEFAULT == 253, "NetworkTypes RouteTable.default");
_Static_assert(RT_TABLE_MAIN == 254, "NetworkTypes RouteTable.main");
_Static_assert(RT_TABLE_LOCAL == 255, "NetworkTypes RouteTable.local");
