import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// RFC 8910: the captive-portal API a network advertises in its router advertisements (option
/// 37), read from the kernel (`RTM_NEWNDUSEROPT`) and shown per link. The router is ra1, in the
/// test's namespace; the advertisements never leave it.
final class RouterAdvertisementTests: DaemonTestCase {
    func testTheAdvertisedCaptivePortalAPIIsShownForTheLinkItCameIn() throws {
        // Given IPv6 on ra0 and a router on ra1 (link-local addresses without DAD)
        try startDaemon()
        try bringUpLinkLocalOnBothLinks()

        // When the router advertises a captive-portal API (router lifetime 0: no default route)
        try advertise("https://portal.example/capport/api")

        // Then Explain shows it for ra0
        try Poll.until("the API in Explain", observe: { try busctl.explain() }) {
            $0.contains("captive-portal API (RFC 8910, router advertisement): https://portal.example/capport/api")
        }

        // When the network says there is no portal, the API goes
        try advertise("urn:ietf:params:capport:unrestricted")
        try Poll.until("no API in Explain", observe: { try busctl.explain() }) { !$0.contains("portal.example") }
    }

    /// Sends one router advertisement from ra1 to all nodes, with RFC 8910's option.
    private func advertise(_ uri: String) throws {
        let script = """
            import socket, struct
            index = socket.if_nametoindex("ra1")
            s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"ra1")
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
            uri = \(uri.debugDescription).encode()
            units = (2 + len(uri) + 7) // 8
            option = bytes([37, units]) + uri + bytes(units * 8 - 2 - len(uri))
            s.sendto(struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 0, 0, 0) + option, ("ff02::1", 0, 0, index))
            """
        try Command.run("ip", ["netns", "exec", try netns.name, "python3", "-c", script]).check()
    }
}
