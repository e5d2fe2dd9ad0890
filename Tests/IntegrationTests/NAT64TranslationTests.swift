import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// An IPv6-only host behind a real NAT64: Debian's tayga on a tun in the router's namespace, in
/// front of an HTTP server reachable over IPv4 only. The router advertises tayga's prefix
/// (PREF64) and itself as the default router; the host has no IPv4 address at all.
final class NAT64TranslationTests: DaemonTestCase {
    private static let prefix = NAT64Testbed.prefix
    private static let server = NAT64Testbed.server

    func testAnIPv6OnlyHostReachesAnIPv4OnlyServerAtTheSynthesizedAddressAndNotAtTheLiteral() throws {
        // Given an IPv6-only host behind a router with tayga in front of an IPv4-only HTTP server
        let (router, nat64) = try startIPv6OnlyHostBehindNAT64()
        defer { nat64.forEach { _ = $0.terminate() } }

        // When the router advertises itself and tayga's prefix
        try router.namespace.advertiseNAT64Prefix(Self.prefix, lifetime: 1800, routerLifetime: 1800, source: RouterNamespace.linkLocalAddress)

        // Then the daemon publishes the prefix and IPv4 reached through NAT64
        try waitForProperties("NAT64Prefix and IPv4Access nat64") {
            $0.string(.nat64Prefix) == Self.prefix && $0.string(.ipv4Access) == "nat64" && $0.bool(.ipv4Reachable) == false
        }
        // and what it says is what an application gets: the synthesized address serves the page,
        // the literal through an AF_INET socket does not connect
        let synthesized = try XCTUnwrap(NAT64Synthesis.address(embedding: Self.server, in: IPAddress("2001:db8:64::")!, length: 96))
        let page = try curl("http://[\(synthesized)]:8081/index.html")
        XCTAssertEqual(page.termination, .exited(0), page.standardError)
        XCTAssertEqual(page.standardOutput, "served over IPv4\n")
        let literal = try curl("http://\(Self.server):8081/index.html")
        XCTAssertEqual(literal.termination, .exited(7), "curl: couldn't connect: \(literal.standardError)")
    }

    func testCheckDestinationOfTheIPv4ServerGivesTheSynthesizedAddressWhichServesThePage() throws {
        // Given an IPv6-only host behind tayga, which the router advertises
        try startIPv6OnlyHostBehindNAT64Advertising(Self.prefix)

        // When an application asks where to connect to the IPv4-only server
        let destination = try busctl.checkDestination("\(Self.server)")

        // Then through NAT64, at the synthesized address, over ra0
        let synthesized = try XCTUnwrap(NAT64Synthesis.address(embedding: Self.server, in: IPAddress("2001:db8:64::")!, length: 96))
        XCTAssertEqual(destination["via"], "nat64", "\(destination)")
        XCTAssertEqual(destination["address"], "\(synthesized)")
        XCTAssertEqual(destination["status"], "reachable-via-ethernet")
        XCTAssertEqual(destination["interface"], "ra0")
        XCTAssertEqual(destination["transport"], "ethernet")
        XCTAssertEqual(destination["source"], "fd00::2")
        XCTAssertEqual(destination["gateway"], RouterNamespace.linkLocalAddress)
        XCTAssertTrue(destination["reason"]?.hasPrefix("through NAT64 at \(synthesized) (prefix \(Self.prefix)): ") == true, "\(destination)")
        // and CheckAddress keeps its meaning: the literal as given has no route
        XCTAssertEqual(try busctl.checkAddress("\(Self.server)"), .reply(status: ReachabilityStatus.notReachable.rawValue, interface: ""))
        // and the address it gives serves the page
        let page = try curl("http://[\(try XCTUnwrap(destination["address"]))]:8081/index.html")
        XCTAssertEqual(page.termination, .exited(0), page.standardError)
        XCTAssertEqual(page.standardOutput, "served over IPv4\n")
    }

    func testWithTheWellKnownPrefixAPrivateAddressIsNotSynthesizedAndAGlobalOneIs() throws {
        // Given an IPv6-only host whose router advertises the well-known prefix 64:ff9b::/96
        try startIPv6OnlyHostBehindNAT64Advertising("64:ff9b::/96")

        // When / Then: a private address stays not reachable, and the reason says why (RFC 6052 §3.1)
        try assertNotReachable(
            "10.1.2.3", via: "direct",
            because: "10.1.2.3 is private-use (10.0.0.0/8), which NAT64 with the well-known prefix 64:ff9b::/96 does not translate (RFC 6052 §3.1)"
        )
        // a global one is reached at 64:ff9b::a.b.c.d
        let global = try busctl.checkDestination("8.8.8.8")
        XCTAssertEqual(global["via"], "nat64", "\(global)")
        XCTAssertEqual(global["address"], "64:ff9b::808:808")
        XCTAssertEqual(global["status"], "reachable-via-ethernet")
    }

    func testWithACLATTheLiteralWorksAndTheStatusDescribesTheUplinkNotTheTun() throws {
        // Given an IPv6-only host behind the NAT64, which it knows of
        try startIPv6OnlyHostBehindNAT64Advertising(Self.prefix)

        // When a CLAT runs on the host: tayga on tun clat, 192.0.0.1 (RFC 7335) mapped to
        // fd00::c1a7, IPv4's default route through it
        let clat = try startCLAT()
        defer { _ = clat.terminate() }

        // Then IPv4 is reachable via CLAT, and Status, Interface and Transport are ra0's
        let published = try waitForProperties("IPv4Access clat") { $0.string(.ipv4Access) == "clat" && $0.bool(.ipv4Reachable) == true }
        XCTAssertEqual(published.status, "reachable-via-ethernet", "\(published)")
        XCTAssertEqual(published.string(.interface), "ra0")
        XCTAssertEqual(published.string(.transport), "ethernet")
        XCTAssertEqual(published.string(.ipv4Interface), "ra0")
        XCTAssertTrue(published.string(.reason)?.hasSuffix("; via CLAT on clat onto ra0 (ethernet)") == true, "\(published)")
        // and CheckDestination says the literal goes via the CLAT, over ra0
        let destination = try busctl.checkDestination("\(Self.server)")
        XCTAssertEqual(destination["via"], "clat", "\(destination)")
        XCTAssertEqual(destination["address"], "\(Self.server)")
        XCTAssertEqual(destination["interface"], "ra0")
        XCTAssertEqual(destination["source"], "192.0.0.1")
        // and an application's IPv4 literal connects
        let page = try curl("http://\(Self.server):8081/index.html")
        XCTAssertEqual(page.termination, .exited(0), page.standardError)
        XCTAssertEqual(page.standardOutput, "served over IPv4\n")
    }

    func testAPlainTunVPNOverTheIPv6OnlyUplinkIsAVPNNotACLAT() throws {
        // Given an IPv6-only host whose router advertises the NAT64 prefix
        try startIPv6OnlyHostBehindNAT64Advertising(Self.prefix)

        // When a VPN client brings up tun0 with 10.8.0.2/24 and IPv4's default route over it
        _ = try attachedTun(address: "10.8.0.2/24")
        try netns.ip("route", "add", "default", "dev", "tun0")

        // Then it is a VPN: IPv4 native over tun0, not a CLAT
        let published = try waitForProperties("IPv4 reachable over tun0") { $0.bool(.ipv4Reachable) == true && $0.string(.ipv4Interface) == "tun0" }
        XCTAssertEqual(published.string(.ipv4Access), "native", "\(published)")
        XCTAssertEqual(published.string(.interface), "tun0")
        XCTAssertEqual(published.string(.transport), "vpn")
        XCTAssertFalse(published.string(.reason)?.contains("CLAT") == true, "\(published)")
        XCTAssertEqual(published.interfaces.first { $0.name == "tun0" }?.transport, .vpn)
        // and the VPN's own network is reached directly over it
        let destination = try busctl.checkDestination("10.8.0.1")
        XCTAssertEqual(destination["via"], "direct", "\(destination)")
        XCTAssertEqual(destination["interface"], "tun0")
        XCTAssertEqual(destination["transport"], "ethernet", "the medium beneath the tunnel")
    }

    func testThroughTheCLATAnAddressNoNAT64TranslatesIsNotReachable() throws {
        // Given an IPv6-only host with a CLAT (tayga, 192.0.0.1) and IPv4's default route through it
        try startIPv6OnlyHostBehindNAT64Advertising(Self.prefix)
        let clat = try startCLAT()
        defer { _ = clat.terminate() }
        try waitForProperties("IPv4Access clat") { $0.string(.ipv4Access) == "clat" && $0.bool(.ipv4Reachable) == true }

        // When / Then: what no NAT64 translates stays not reachable through the CLAT, as through NAT64
        for (address, range) in [("169.254.1.1", "link-local (169.254.0.0/16)"), ("240.0.0.1", "reserved (240.0.0.0/4)")] {
            try assertNotReachable(address, via: "clat", because: "\(address) is \(range), which no NAT64 translates")
        }
        // and an application's connection there fails, as the answer says
        let refused = try curl("http://169.254.1.1:8081/", seconds: 3)
        XCTAssertNotEqual(refused.termination, .exited(0), refused.standardOutput)
        // while the IPv4-only server (a private address the network-specific prefix translates) is reached
        XCTAssertEqual(try busctl.checkDestination("\(Self.server)")["via"], "clat")
    }

    func testTheCLATsTunIsListedWithItsUplinksTransportNotAsAVPN() throws {
        // Given an IPv6-only host over ra0 (ethernet)
        try startIPv6OnlyHostBehindNAT64Advertising(Self.prefix)

        // When a CLAT runs on tun clat (192.0.0.1)
        let clat = try startCLAT()
        defer { _ = clat.terminate() }

        // Then Interfaces lists clat with ra0's transport, and Reason does not call it a VPN
        let published = try waitForProperties("IPv4Access clat, clat listed") {
            $0.string(.ipv4Access) == "clat" && $0.bool(.ipv4Reachable) == true && $0.interfaces.contains { $0.name == "clat" && $0.operational == .up }
        }
        XCTAssertEqual(published.interfaces.first { $0.name == "clat" }?.transport, .ethernet, "\(published.interfaces)")
        let reason = try XCTUnwrap(published.string(.reason))
        XCTAssertFalse(reason.contains("vpn"), reason)
        XCTAssertTrue(reason.contains("on clat (CLAT over ra0, ethernet)"), reason)
    }

    func testWithTheWellKnownPrefixAnIPv6LiteralEmbeddingAPrivateAddressIsNotReachable() throws {
        // Given an IPv6-only host whose router advertises the well-known prefix 64:ff9b::/96
        try startIPv6OnlyHostBehindNAT64Advertising("64:ff9b::/96")

        // When an application asks about 64:ff9b::a01:203, which embeds 10.1.2.3
        // Then not reachable, as NAT64 refuses it (RFC 6052 §3.1), and the reason says why
        try assertNotReachable("64:ff9b::a01:203", via: "nat64", because: "64:ff9b::a01:203 embeds 10.1.2.3, which is private-use (10.0.0.0/8)")
        // while one embedding a global address is reached through NAT64
        let global = try busctl.checkDestination("64:ff9b::808:808")
        XCTAssertEqual(global["status"], "reachable-via-ethernet", "\(global)")
        XCTAssertEqual(global["via"], "nat64")
    }

    /// ``startIPv6OnlyHostBehindNAT64()`` with the router advertising `prefix`, once the daemon
    /// publishes it with `IPv4Access` `nat64`; the router and the NAT64's processes are kept
    /// until the test's teardown, which stops them.
    private func startIPv6OnlyHostBehindNAT64Advertising(_ prefix: String) throws {
        let (router, nat64) = try startIPv6OnlyHostBehindNAT64()
        addTeardownBlock {
            nat64.forEach { _ = $0.terminate() }
            router.stop()
        }
        try router.namespace.advertiseNAT64Prefix(prefix, lifetime: 1800, routerLifetime: 1800, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("NAT64Prefix \(prefix), IPv4Access nat64") { $0.string(.nat64Prefix) == prefix && $0.string(.ipv4Access) == "nat64" }
    }

    /// Asserts that `CheckDestination(address)` is not reachable `via`, at the address given,
    /// with a reason containing `reason`.
    private func assertNotReachable(_ address: String, via: String, because reason: String, line: UInt = #line) throws {
        let destination = try busctl.checkDestination(address)
        XCTAssertEqual(destination["status"], "not-reachable", "\(destination)", line: line)
        XCTAssertEqual(destination["via"], via, "\(destination)", line: line)
        XCTAssertEqual(destination["address"], address, line: line)
        XCTAssertTrue(destination["reason"]?.contains(reason) == true, "\(destination)", line: line)
    }

    /// curl from the host's namespace.
    private func curl(_ url: String, seconds: Int = 10) throws -> CommandResult {
        try Command.run("ip", ["netns", "exec", try netns.name, "curl", "-sS", "-m", "\(seconds)", url], timeout: .seconds(seconds + 5))
    }
}
