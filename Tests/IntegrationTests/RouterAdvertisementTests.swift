import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// RFC 8910: the captive-portal API a network advertises in its router advertisements (option
/// 37), read from the kernel (`RTM_NEWNDUSEROPT`) and shown per link. The router is ra1, in the
/// test's namespace; the advertisements never leave it.
final class RouterAdvertisementTests: DaemonTestCase {
    /// `RTNLGRP_ND_USEROPT` (20) in `/proc/net/netlink`'s group mask (group n is bit n - 1).
    private static let routerOptionGroupBit: UInt32 = 1 << 19

    func testOneSocketAloneReceivesTheRouterAdvertisementOptions() throws {
        // Given the daemon running, its monitor socket and its neighbour socket open
        try startDaemon()
        let daemon = try XCTUnwrap(daemon)
        let sockets = try Poll.until("the monitor and neighbour sockets", observe: {
            try FaultInjection.netlinkSockets(of: daemon.pid, in: try netns)
        }) { $0.filter { $0.groups != 0 }.count >= 2 }

        // Then only the monitor subscribes to the options: each one is read and handled once
        let subscribed = sockets.filter { $0.groups & Self.routerOptionGroupBit != 0 }
        XCTAssertEqual(subscribed.count, 1, "sockets subscribed to RTNLGRP_ND_USEROPT: \(sockets)")
        XCTAssertEqual(subscribed.first?.isMonitor, true, "\(sockets)")
    }

    func testTheAdvertisedCaptivePortalAPIIsShownForTheLinkItCameIn() throws {
        // Given IPv6 on ra0 and a router on ra1 (link-local addresses without DAD)
        try startDaemon()
        try bringUpLinkLocalOnBothLinks()

        // When the router advertises a captive-portal API (router lifetime 0: no default route)
        try netns.advertiseCaptivePortalAPI("https://portal.example/capport/api")

        // Then Explain shows it for ra0
        try Poll.until("the API in Explain", observe: { try busctl.explain() }) {
            $0.contains("captive-portal API: https://portal.example/capport/api (RFC 8910, router advertisement)")
        }

        // When the network says there is no portal, the API goes
        try netns.advertiseCaptivePortalAPI("urn:ietf:params:capport:unrestricted")
        try Poll.until("no API in Explain", observe: { try busctl.explain() }) { !$0.contains("portal.example") }
    }
}
