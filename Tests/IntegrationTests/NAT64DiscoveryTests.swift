import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// RFC 7050: with the connectivity check configured and no router advertising a NAT64 prefix,
/// the daemon asks the system resolver for the AAAA records of ipv4only.arpa, as an application
/// would, and takes the prefix the network's DNS64 embedded the well-known addresses in. A real
/// DNS server (dnsmasq) in the router namespace answers as a DNS64 does; the client namespace is
/// IPv6-only.
final class NAT64DiscoveryTests: DaemonTestCase {
    private static let nameServer = "2001:db8:77::1"

    func testThePrefixIsDiscoveredOnlyOnceTheCheckIsConfigured() throws {
        // Given an IPv6-only host (a global address on ra0, its default route through the
        // router) whose resolver is a DNS64 answering ipv4only.arpa with 64:ff9b::c000:aa, and
        // no CheckURL=
        let (netns, router) = try ipv6OnlyHost()
        try router.startDNS64NameServer(at: Self.nameServer, synthesized: "64:ff9b::c000:aa")
        try writeConfiguration("")
        try startDaemon(arguments: ["--config", try configurationPath])

        // Then IPv6 is reachable, and nothing was looked up: no NAT64 prefix
        try waitForProperties("IPv6 only") { $0.bool(.ipv6Reachable) == true && $0.bool(.ipv4Reachable) == false }
        XCTAssertTrue(try busctl.explain().contains("NAT64 prefix: none (no router advertised one)"))
        XCTAssertEqual(try busctl.properties().string(.nat64Prefix), "")
        XCTAssertFalse(router.nameServerLog(at: Self.nameServer).contains("ipv4only.arpa"), router.nameServerLog(at: Self.nameServer))

        // When the check is configured (its server is not needed: the path is what counts)
        try writeConfiguration("[Connectivity]\nCheckURL=http://[\(Self.nameServer)]:8080/check\nCheckIntervalSec=60\nCheckTimeoutSec=1\n")
        try XCTUnwrap(daemon).send(SIGHUP)

        // Then the DNS64's prefix is discovered, and IPv4 destinations are reached through it
        let discovered = try waitForProperties("NAT64Prefix from RFC 7050", timeout: .seconds(30)) { $0.string(.nat64Prefix) == "64:ff9b::/96" }
        XCTAssertEqual(discovered.string(.ipv4Access), "nat64", "\(discovered)")
        XCTAssertTrue(router.nameServerLog(at: Self.nameServer).contains("query[AAAA] ipv4only.arpa"), router.nameServerLog(at: Self.nameServer))
        // And CheckDestination of a global IPv4 literal answers with the synthesized address
        let destination = try busctl.checkDestination("93.184.216.34")
        XCTAssertEqual(destination["via"], "nat64", "\(destination)")
        XCTAssertEqual(destination["address"], "64:ff9b::5db8:d822", "\(destination)")
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("NAT64 prefix: 64:ff9b::/96 (no router advertised one: RFC 7050 discovery)"), explain)
        XCTAssertTrue(explain.contains("64:ff9b::/96 from RFC 7050 discovery (AAAA of ipv4only.arpa through the system resolver) over ra0"), explain)

        // When a router advertises a prefix of its own: it is the one used
        try router.namespace.advertiseNAT64Prefix("2001:db8:64::/96", lifetime: 1800, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("the router's prefix") { $0.string(.nat64Prefix) == "2001:db8:64::/96" }

        // When the route goes (another path): the discovered prefix goes with it
        try router.namespace.advertiseNAT64Prefix("2001:db8:64::/96", lifetime: 0, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("back to RFC 7050's") { $0.string(.nat64Prefix) == "64:ff9b::/96" }
        try netns.ip("-6", "route", "del", "default")
        try waitForProperties("no path, no prefix") { $0.string(.nat64Prefix) == "" && $0.bool(.ipv6Reachable) == false }
    }

    func testALookupThatFoundNoPrefixIsRepeatedSoonNotAfterTheInterval() throws {
        // Given the IPv6-only host with the check configured (every 60 s), and its resolver
        // not running yet
        let (_, router) = try ipv6OnlyHost()
        try writeConfiguration("[Connectivity]\nCheckURL=http://[\(Self.nameServer)]:8080/check\nCheckIntervalSec=60\nCheckTimeoutSec=1\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        try Poll.until("a lookup that found no prefix", timeout: .seconds(20)) { (self.daemon?.log ?? "").contains("RFC 7050: no NAT64 prefix") }

        // When the DNS64 starts answering
        try router.startDNS64NameServer(at: Self.nameServer, synthesized: "64:ff9b::c000:aa")

        // Then the prefix is found within seconds, not after CheckIntervalSec= (60 s)
        try waitForProperties("NAT64Prefix from RFC 7050 after a miss", timeout: .seconds(20)) { $0.string(.nat64Prefix) == "64:ff9b::/96" }
    }

    /// The test's namespace as an IPv6-only host: a global address on ra0, its default route
    /// through the router (whose address is the resolver's, once a name server runs there),
    /// resolv.conf naming it (one try, 1 s); and the router namespace on ra0's other end.
    private func ipv6OnlyHost() throws -> (TestNamespace, RouterNamespace) {
        let netns = try netns
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n")
        try netns.writeEtcFile("resolv.conf", "nameserver \(Self.nameServer)\noptions timeout:1 attempts:1\n")
        try netns.setIPv6(enabled: true, on: "ra0")
        let router = try RouterNamespace(linkedTo: netns)
        try netns.ip("addr", "add", "fe80::2/64", "dev", "ra0", "nodad")
        try netns.ip("addr", "add", "2001:db8:77::2/64", "dev", "ra0", "nodad")
        try netns.ip("-6", "route", "add", "default", "via", Self.nameServer, "dev", "ra0")
        return (netns, router)
    }
}
