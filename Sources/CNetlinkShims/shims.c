#include "CNetlinkShims.h"

#include <linux/if.h>
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

const uint32_t CReach_IFF_LOWER_UP = IFF_LOWER_UP;
const uint32_t CReach_IFF_UP = IFF_UP;
const uint32_t CReach_IFF_LOOPBACK = IFF_LOOPBACK;
