#!/usr/bin/env python3
"""Sends IPv6 router advertisements with a PREF64 option (RFC 8781) on one link, every 3 s, until
killed: pref64-advertiser.py INTERFACE PREFIX/LENGTH LIFETIME. The router lifetime is 1800 s; no
prefix information (no addresses are configured from it). LIFETIME 0 withdraws the prefix."""
import ipaddress, socket, struct, sys, time

interface, prefix_text, lifetime = sys.argv[1], sys.argv[2], int(sys.argv[3])
prefix = ipaddress.IPv6Network(prefix_text)
code = {96: 0, 64: 1, 56: 2, 48: 3, 40: 4, 32: 5}[prefix.prefixlen]
# ICMPv6 type 134, code 0, checksum (the kernel fills it in), hop limit 64, no flags, router
# lifetime 1800 s, reachable time and retransmission timer unspecified.
advertisement = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 1800, 0, 0)
# Option 38, 2 units of 8 bytes: scaled lifetime (units of 8 s) and length code, the prefix's first 96 bits.
advertisement += struct.pack("!BBH", 38, 2, (lifetime // 8) << 3 | code) + prefix.network_address.packed[:12]
sender = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
sender.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
index = socket.if_nametoindex(interface)
while True:
    try:
        sender.sendto(advertisement, ("ff02::1", 0, 0, index))
    except OSError as error:  # the link-local address may still be tentative
        print(f"not sent: {error}", file=sys.stderr, flush=True)
    time.sleep(3)
