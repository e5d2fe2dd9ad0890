// Small C shims for what Swift cannot import directly from the kernel's headers: the rtnetlink
// function-like macros and the BPF filter structs; shims.c checks the struct layouts the parser
// reads and the IFF_*, ARPHRD_*, RTN_* and RT_TABLE_* numbers NetworkTypes names. No libsystemd here.
// Everything is prefixed `CReach_`.
#ifndef CNETLINK_SHIMS_H
#define CNETLINK_SHIMS_H

#include <stdint.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if_link.h>
#include <linux/if_addr.h>
// struct fib_rule_hdr and the FRA_* attributes of policy rules (RTM_GETRULE dumps).
#include <linux/fib_rules.h>
// struct sock_filter / sock_fprog and the BPF_* opcodes for the netlink socket filter
// (glibc does not include the kernel's filter header).
#include <linux/filter.h>

// MARK: - netlink

/// `NLMSG_ALIGN(len)`: netlink messages are padded to 4 bytes.
static inline uint32_t CReach_NLMSG_ALIGN(uint32_t length) { return NLMSG_ALIGN(length); }
/// `NLMSG_HDRLEN`: the aligned size of `struct nlmsghdr`.
static inline uint32_t CReach_NLMSG_HDRLEN(void) { return NLMSG_HDRLEN; }
/// `RTA_ALIGN(len)`: attributes are padded to 4 bytes.
static inline uint32_t CReach_RTA_ALIGN(uint32_t length) { return RTA_ALIGN(length); }
/// `RTA_LENGTH(0)`: the aligned size of `struct rtattr`.
static inline uint32_t CReach_RTA_HDRLEN(void) { return RTA_LENGTH(0); }
/// `NLA_TYPE_MASK`: an attribute's type without the nested / byte-order flag bits.
static inline uint16_t CReach_NLA_TYPE_MASK(void) { return (uint16_t)(NLA_TYPE_MASK & 0xffff); }

#endif
