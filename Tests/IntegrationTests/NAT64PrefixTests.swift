import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// RFC 8781: the NAT64 prefix a network advertises in its router advertisements (PREF64, option
/// 38), read from the kernel (`RTM_NEWNDUSEROPT`), published as `NAT64Prefix` for the lifetime
/// the router gave. The router is ra1 (fe80::3), in the test's namespace; the advertisements never
/// leave it.
final class NAT64PrefixTests: DaemonTestCase {
    private static let router = "fe80::3"

    func testTheAdvertisedPrefixIsPublishedAndExpiresWithItsLifetime() throws {
        // Given IPv6 on ra0 and a router on ra1
        try startDaemon()
        try bringUpLinkLocalOnBothLinks()

        // When the router advertises the well-known prefix for 8 s
        try netns.advertiseNAT64Prefix("64:ff9b::/96", lifetime: 8, source: Self.router)

        // Then NAT64Prefix names it and Explain says where it came from
        try waitForProperties("NAT64Prefix 64:ff9b::/96") { $0.string(.nat64Prefix) == "64:ff9b::/96" }
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("NAT64 prefix: 64:ff9b::/96 (the only one known)"), explain)
        XCTAssertTrue(explain.contains("64:ff9b::/96 from router advertisement (RFC 8781) by \(Self.router) on ra0"), explain)

        // And when its lifetime runs out (the kernel sends nothing), it goes
        let advertised = Date()
        try Poll.until("NAT64Prefix expired", timeout: .seconds(30), observe: { try busctl.properties() }) { $0.string(.nat64Prefix) == "" }
        XCTAssertGreaterThan(Date().timeIntervalSince(advertised), 6, "expired with its lifetime, not before")
    }

    func testEveryPrefixLengthIsPublishedAndALinkGoingDownTakesItsPrefix() throws {
        // Given IPv6 on ra0 and a router on ra1
        try startDaemon()
        try bringUpLinkLocalOnBothLinks()

        // When the router advertises each prefix length RFC 8781 allows, each replacing the last
        for prefix in ["2001:db8:64::/64", "2001:db8:100::/56", "2001:db8:300::/48", "2001:db8:100::/40", "2001:db8::/32", "64:ff9b::/96"] {
            try netns.advertiseNAT64Prefix(prefix, lifetime: 1800, routerLifetime: 1800, source: Self.router)
            // Then it is published
            try waitForProperties("NAT64Prefix \(prefix)") { $0.string(.nat64Prefix) == prefix }
            try netns.advertiseNAT64Prefix(prefix, lifetime: 0, routerLifetime: 1800, source: Self.router)
            try waitForProperties("NAT64Prefix \(prefix) withdrawn") { $0.string(.nat64Prefix) == "" }
        }

        // When it advertises again and ra0 goes down, the prefix goes
        try netns.advertiseNAT64Prefix("64:ff9b::/96", lifetime: 1800, source: Self.router)
        try waitForProperties("NAT64Prefix 64:ff9b::/96 again") { $0.string(.nat64Prefix) == "64:ff9b::/96" }
        try netns.ip("link", "set", "ra0", "down")
        try waitForProperties("NAT64Prefix forgotten with its link") { $0.string(.nat64Prefix) == "" }
    }

    func testARouterThatStopsBeingADefaultRouterKeepsItsPrefixForThePrefixsOwnLifetime() throws {
        // Given two default routers on ra1: the first (fe80::3) advertised 2001:db8:a::/96, the
        // second (fe80::4) 2001:db8:b::/96 later; the one learned first is in use
        try startDaemon()
        try bringUpLinkLocalOnBothLinks()
        try netns.ip("addr", "add", "fe80::4/64", "dev", "ra1", "nodad")
        try netns.ip("addr", "add", "2001:db8:77::2/64", "dev", "ra0", "nodad")
        try netns.advertiseNAT64Prefix("2001:db8:a::/96", lifetime: 1800, routerLifetime: 1800, source: Self.router)
        try waitForProperties("the first router's prefix") { $0.string(.nat64Prefix) == "2001:db8:a::/96" }
        try netns.advertiseNAT64Prefix("2001:db8:b::/96", lifetime: 1800, routerLifetime: 1800, source: "fe80::4")
        try Poll.until("both routers' prefixes", observe: { try self.busctl.explain() }) { $0.contains("2001:db8:b::/96 from router advertisement") }

        // When the first router's advertisement says router lifetime 0 (the kernel drops its
        // default route) while still carrying its prefix with 1800 s left
        try netns.advertiseNAT64Prefix("2001:db8:a::/96", lifetime: 1800, routerLifetime: 0, source: Self.router)
        // (a fence: the events after it come on the same socket, in order)
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "ra0")
        try addIPv4DefaultRoute()
        let published = try waitForProperties("IPv4 reachable") { $0.bool(.ipv4Reachable) == true }

        // Then its default route is gone, and its prefix is still the one learned first, in use
        // (RFC 8781: the prefix has a lifetime of its own)
        XCTAssertFalse(try netns.ip("-6", "route", "show", "default").contains("via \(Self.router)"))
        XCTAssertEqual(published.string(.nat64Prefix), "2001:db8:a::/96", "\(published)")
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("NAT64 prefix: 2001:db8:a::/96 (learned first)"), explain)
    }

    func testIPv4AccessIsNAT64OnAnIPv6OnlyHostWithARoutedPrefixNativeWithAnIPv4RouteAndCLATFromRFC7335sRange() throws {
        // Given an IPv6-only host: a global address on ra0, its default router on ra1
        try startDaemon()
        try bringUpLinkLocalOnBothLinks()
        try netns.ip("addr", "add", "2001:db8:77::2/64", "dev", "ra0", "nodad")
        try netns.advertiseCaptivePortalAPI(nil, routerLifetime: 1800, source: Self.router)
        try waitForProperties("IPv6 only, no NAT64") {
            $0.bool(.ipv6Reachable) == true && $0.bool(.ipv4Reachable) == false && $0.string(.ipv4Access) == "none"
        }

        // When the router advertises the well-known NAT64 prefix (routed: by the default route)
        try netns.advertiseNAT64Prefix("64:ff9b::/96", lifetime: 1800, routerLifetime: 1800, source: Self.router)
        // Then IPv4 is reached through NAT64
        try waitForProperties("IPv4Access nat64") { $0.string(.ipv4Access) == "nat64" && $0.bool(.ipv4Reachable) == false }

        // When the host gains an IPv4 route
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "ra0")
        try addIPv4DefaultRoute()
        // Then it is native
        try waitForProperties("IPv4Access native") { $0.string(.ipv4Access) == "native" }

        // When IPv4's route leaves from RFC 7335's CLAT range instead, as NetworkManager's CLAT
        // sets it up on the uplink itself (192.0.0.5/32, the default route through the link)
        try netns.ip("addr", "del", "10.77.0.2/24", "dev", "ra0")
        try netns.ip("addr", "add", "192.0.0.5/32", "dev", "ra0")
        try netns.ip("route", "add", "default", "dev", "ra0", "src", "192.0.0.5")
        // Then it is a CLAT's, on the uplink itself
        let published = try waitForProperties("IPv4Access clat") { $0.string(.ipv4Access) == "clat" && $0.bool(.ipv4Reachable) == true }
        XCTAssertTrue(published.string(.reason)?.hasSuffix("; via CLAT") == true, "\(published)")
        XCTAssertEqual(published.string(.interface), "ra0")

        // When IPv4's route goes and the prefix is withdrawn, nothing is left
        try netns.ip("route", "del", "default", "dev", "ra0")
        try netns.advertiseNAT64Prefix("64:ff9b::/96", lifetime: 0, routerLifetime: 1800, source: Self.router)
        try waitForProperties("IPv4Access none") { $0.string(.ipv4Access) == "none" }
    }
}
