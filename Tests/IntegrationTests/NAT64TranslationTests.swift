import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// An IPv6-only host behind a real NAT64: Debian's tayga on a tun in the router's namespace, in
/// front of an HTTP server reachable over IPv4 only. The router advertises tayga's prefix
/// (PREF64) and itself as the default router; the host has no IPv4 address at all.
final class NAT64TranslationTests: DaemonTestCase {
    private static let tayga = TestPaths.tayga
    /// tayga's prefix: not the well-known one, with which tayga (RFC 6052 §3.1) refuses private
    /// IPv4 destinations such as the server's.
    private static let prefix = "2001:db8:64::/96"
    /// The IPv4-only server, on the router's loopback.
    private static let server = IPAddress("10.99.0.1")!

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
        let (router, nat64) = try startIPv6OnlyHostBehindNAT64()
        defer { nat64.forEach { _ = $0.terminate() } }
        try router.namespace.advertiseNAT64Prefix(Self.prefix, lifetime: 1800, routerLifetime: 1800, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("IPv4Access nat64") { $0.string(.nat64Prefix) == Self.prefix && $0.string(.ipv4Access) == "nat64" }

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
        let (router, nat64) = try startIPv6OnlyHostBehindNAT64()
        defer { nat64.forEach { _ = $0.terminate() } }
        try router.namespace.advertiseNAT64Prefix("64:ff9b::/96", lifetime: 1800, routerLifetime: 1800, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("NAT64Prefix 64:ff9b::/96") { $0.string(.nat64Prefix) == "64:ff9b::/96" && $0.string(.ipv4Access) == "nat64" }

        // When / Then: a private address stays not reachable, and the reason says why (RFC 6052 §3.1)
        let private10 = try busctl.checkDestination("10.1.2.3")
        XCTAssertEqual(private10["status"], "not-reachable", "\(private10)")
        XCTAssertEqual(private10["via"], "direct")
        XCTAssertEqual(private10["address"], "10.1.2.3")
        XCTAssertTrue(private10["reason"]?.contains("10.1.2.3 is private-use (10.0.0.0/8), which NAT64 with the well-known prefix 64:ff9b::/96 does not translate (RFC 6052 §3.1)") == true,
                      "\(private10)")
        // a global one is reached at 64:ff9b::a.b.c.d
        let global = try busctl.checkDestination("8.8.8.8")
        XCTAssertEqual(global["via"], "nat64", "\(global)")
        XCTAssertEqual(global["address"], "64:ff9b::808:808")
        XCTAssertEqual(global["status"], "reachable-via-ethernet")
    }

    func testWithACLATTheLiteralWorksAndTheStatusDescribesTheUplinkNotTheTun() throws {
        // Given an IPv6-only host behind the NAT64, which it knows of
        let (router, nat64) = try startIPv6OnlyHostBehindNAT64()
        defer { nat64.forEach { _ = $0.terminate() } }
        try router.namespace.advertiseNAT64Prefix(Self.prefix, lifetime: 1800, routerLifetime: 1800, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("IPv4Access nat64") { $0.string(.ipv4Access) == "nat64" }

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

    /// A router namespace running tayga in front of the IPv4-only server (``startNAT64(in:)``),
    /// and this test's namespace an IPv6-only host: link-local and fd00::2 on ra0, no IPv4
    /// address, router advertisements accepted while forwarding (for a CLAT); the daemon started.
    private func startIPv6OnlyHostBehindNAT64() throws -> (RouterNamespace, [ChildProcess]) {
        guard FileManager.default.isExecutableFile(atPath: Self.tayga) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw HarnessError("\(Self.tayga) is missing (make deps unpacks it)") }
            throw XCTSkip("\(Self.tayga) is missing: make deps unpacks it")
        }
        let router = try RouterNamespace(linkedTo: try netns)
        let nat64 = try startNAT64(in: router)
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.sysctl("net.ipv6.conf.ra0.accept_ra", "2")
        try netns.ip("addr", "add", "fe80::2/64", "dev", "ra0", "nodad")
        try netns.ip("addr", "add", "fd00::2/64", "dev", "ra0", "nodad")
        try startDaemon()
        return (router, nat64)
    }

    /// Starts tayga as this host's CLAT (tun `clat`, 192.0.0.1 mapped to fd00::c1a7, answered
    /// for on ra0 by proxy NDP) with IPv4's default route through it.
    private func startCLAT() throws -> ChildProcess {
        let configuration = try XCTUnwrap(directory).file("clat.conf")
        try "tun-device clat\nipv4-addr 192.0.0.2\nprefix \(Self.prefix)\nmap 192.0.0.1 fd00::c1a7\ndata-dir \(try XCTUnwrap(directory).path)\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        try Command.run("ip", ["netns", "exec", try netns.name, Self.tayga, "--config", configuration, "--mktun"]).check()
        try netns.sysctl("net.ipv6.conf.all.forwarding", "1")
        try netns.sysctl("net.ipv6.conf.ra0.proxy_ndp", "1")
        try netns.ip("-6", "neigh", "add", "proxy", "fd00::c1a7", "dev", "ra0")
        let clat = try ChildProcess("ip", ["netns", "exec", try netns.name, Self.tayga, "--config", configuration, "--nodetach"],
                                    standardOutput: try XCTUnwrap(directory).file("clat.log"), standardError: try XCTUnwrap(directory).file("clat.log"))
        try netns.ip("link", "set", "clat", "up")
        try netns.ip("addr", "add", "192.0.0.1/32", "dev", "clat")
        try netns.ip("-6", "route", "add", "fd00::c1a7/128", "dev", "clat")
        try netns.ip("route", "add", "default", "dev", "clat")
        return clat
    }

    /// Starts tayga (prefix ``prefix``, pool 10.64.0.0/24 on tun `nat64`) and a python HTTP server
    /// on ``server`` in the router's namespace, forwarding both families; returns both processes.
    private func startNAT64(in router: RouterNamespace) throws -> [ChildProcess] {
        let namespace = router.namespace
        try namespace.sysctl("net.ipv6.conf.all.forwarding", "1")
        try namespace.sysctl("net.ipv4.ip_forward", "1")
        try namespace.ip("link", "set", "lo", "up")
        try namespace.ip("addr", "add", "\(Self.server)/32", "dev", "lo")
        let configuration = router.state.file("tayga.conf")
        try "tun-device nat64\nipv4-addr 10.64.0.1\nprefix \(Self.prefix)\ndynamic-pool 10.64.0.0/24\ndata-dir \(router.state.path)\n"
            .write(toFile: configuration, atomically: true, encoding: .utf8)
        try Command.run("ip", ["netns", "exec", namespace.name, Self.tayga, "--config", configuration, "--mktun"]).check()
        try namespace.ip("link", "set", "nat64", "up")
        try namespace.ip("route", "add", "10.64.0.0/24", "dev", "nat64")
        try namespace.ip("-6", "route", "add", Self.prefix, "dev", "nat64")
        let tayga = try ChildProcess("ip", ["netns", "exec", namespace.name, Self.tayga, "--config", configuration, "--nodetach"],
                                     standardOutput: router.state.file("tayga.log"), standardError: router.state.file("tayga.log"))
        let site = router.state.file("site")
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        try "served over IPv4\n".write(toFile: "\(site)/index.html", atomically: true, encoding: .utf8)
        let server = try ChildProcess("ip", ["netns", "exec", namespace.name, "python3", "-m", "http.server", "--bind", "\(Self.server)", "8081",
                                             "--directory", site], standardOutput: router.state.file("http.log"), standardError: router.state.file("http.log"))
        try Poll.until("the IPv4-only server listens") {
            try Command.run("ip", ["netns", "exec", namespace.name, "curl", "-sS", "-m", "1", "-o", "/dev/null", "http://\(Self.server):8081/"]).succeeded
        }
        return [tayga, server]
    }

    /// curl from the host's namespace.
    private func curl(_ url: String) throws -> CommandResult {
        try Command.run("ip", ["netns", "exec", try netns.name, "curl", "-sS", "-m", "10", url], timeout: .seconds(15))
    }
}
