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
