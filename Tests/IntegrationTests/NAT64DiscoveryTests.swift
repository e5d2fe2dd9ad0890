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

    func testOnADualStackHostThePrefixIsDiscoveredOnlyOnceTheCheckIsConfigured() throws {
        // Given a dual-stack host (the IPv6-only host's addresses and route, and an IPv4 address
        // and default route through the router) whose resolver is a DNS64 answering
        // ipv4only.arpa with 64:ff9b::c000:aa, and no CheckURL=
        let (netns, router) = try ipv6OnlyHost()
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "ra0")
        try netns.ip("route", "add", "default", "via", "10.77.0.1")
        try router.startDNS64NameServer(at: Self.nameServer, synthesized: "64:ff9b::c000:aa")
        try writeConfiguration("")
        try startDaemon(arguments: ["--config", try configurationPath])

        // Then both families are reachable, and nothing was looked up: no NAT64 prefix
        try waitForProperties("dual stack") { $0.bool(.ipv6Reachable) == true && $0.bool(.ipv4Reachable) == true }
        XCTAssertTrue(try busctl.explain().contains("NAT64 prefix: none (no router advertised one)"))
        XCTAssertEqual(try busctl.properties().string(.nat64Prefix), "")
        XCTAssertFalse(router.nameServerLog(at: Self.nameServer).contains("ipv4only.arpa"), router.nameServerLog(at: Self.nameServer))

        // When the check is configured (its server is not needed: the path is what counts)
        try writeConfiguration("[Connectivity]\nCheckURL=http://[\(Self.nameServer)]:8080/check\nCheckIntervalSec=60\nCheckTimeoutSec=1\n")
        try XCTUnwrap(daemon).send(SIGHUP)

        // Then the DNS64's prefix is discovered
        let discovered = try waitForProperties("NAT64Prefix from RFC 7050", timeout: .seconds(30)) { $0.string(.nat64Prefix) == "64:ff9b::/96" }
        XCTAssertEqual(discovered.string(.ipv4Access), "native", "\(discovered)")
        XCTAssertTrue(router.nameServerLog(at: Self.nameServer).contains("query[AAAA] ipv4only.arpa"), router.nameServerLog(at: Self.nameServer))
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

    func testOnAnIPv6OnlyHostWhoseAdvertisementsTheKernelIgnoresThePrefixIsDiscoveredWithoutACheck() throws {
        // Given the IPv6-only host as NetworkManager leaves it (accept_ra=0: the kernel hands no
        // PREF64 option over), its resolver a DNS64, and no CheckURL=
        let (netns, router) = try ipv6OnlyHost()
        try netns.sysctl("net.ipv6.conf.ra0.accept_ra", "0")
        try router.startDNS64NameServer(at: Self.nameServer, synthesized: "64:ff9b::c000:aa")
        try writeConfiguration("")
        try startDaemon(arguments: ["--config", try configurationPath])

        // Then the DNS64's prefix is discovered through the host's own resolver, and IPv4
        // destinations are reached through it
        let discovered = try waitForProperties("NAT64Prefix from RFC 7050 without a check", timeout: .seconds(30)) {
            $0.string(.nat64Prefix) == "64:ff9b::/96" && $0.bool(.ipv4Reachable) == false
        }
        XCTAssertEqual(discovered.string(.ipv4Access), "nat64", "\(discovered)")
        XCTAssertTrue(router.nameServerLog(at: Self.nameServer).contains("query[AAAA] ipv4only.arpa"), router.nameServerLog(at: Self.nameServer))
        let destination = try busctl.checkDestination("93.184.216.34")
        XCTAssertEqual(destination["via"], "nat64", "\(destination)")
        XCTAssertEqual(destination["address"], "64:ff9b::5db8:d822", "\(destination)")
        // And nothing else was asked of the resolver, nor sent anywhere
        let queries = router.nameServerLog(at: Self.nameServer).split(separator: "\n").filter { $0.contains("query[") }
        XCTAssertTrue(queries.allSatisfy { $0.contains("ipv4only.arpa") }, "\(queries)")
        XCTAssertEqual(router.requests, [])

        // When the host gains an IPv4 route (dual stack): the prefix is not looked for any more
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "ra0")
        try netns.ip("route", "add", "default", "via", "10.77.0.1")
        try waitForProperties("dual stack, no discovery") { $0.bool(.ipv4Reachable) == true && $0.string(.nat64Prefix) == "" }
    }

    func testAGatewayChangeOnTheSameLinkKeepsTheDiscoveredPrefixAndLooksNothingUp() throws {
        // Given the IPv6-only host with its DNS64's prefix discovered
        let (netns, router) = try ipv6OnlyHost()
        try router.startDNS64NameServer(at: Self.nameServer, synthesized: "64:ff9b::c000:aa")
        try writeConfiguration("[Connectivity]\nCheckURL=http://[\(Self.nameServer)]:8080/check\nCheckIntervalSec=60\nCheckTimeoutSec=1\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        try waitForProperties("NAT64Prefix from RFC 7050", timeout: .seconds(30)) { $0.string(.nat64Prefix) == "64:ff9b::/96" }
        let lookups = router.nameServerLog(at: Self.nameServer).components(separatedBy: "query[AAAA] ipv4only.arpa").count - 1

        // When IPv6's default route moves to the router's link-local address (same link, same network)
        try netns.ip("-6", "route", "replace", "default", "via", RouterNamespace.linkLocalAddress, "dev", "ra0")
        try Poll.until("the daemon to follow the new gateway", observe: { try self.busctl.explain() }) { $0.contains(RouterNamespace.linkLocalAddress) }

        XCTAssertEqual(router.nameServerLog(at: Self.nameServer).components(separatedBy: "query[AAAA] ipv4only.arpa").count - 1, lookups,
                       "ipv4only.arpa asked again for a gateway change on the same link")
        // (a fence: once the router's own prefix's change is recorded, every earlier one is)
        try router.namespace.advertiseNAT64Prefix("2001:db8:64::/96", lifetime: 1800, source: RouterNamespace.linkLocalAddress)
        let published = try Poll.until("the router's prefix recorded", observe: {
            try self.signals.propertiesChanges.compactMap { signal -> String? in
                guard case .string(let prefix)? = signal.changed["NAT64Prefix"]?.value else { return nil }
                return prefix
            }
        }) { $0.last == "2001:db8:64::/96" }

        // Then NAT64Prefix was never published empty on the way
        XCTAssertFalse(published.contains(""), "NAT64Prefix changes: \(published)")
    }

    func testGatewayFlipsOnAnIPv6OnlyHostCostABoundedNumberOfLookupsAndChecks() throws {
        // Given the IPv6-only host with a check URL by name (check.test, the router's address)
        // and RFC 7050 discovery, settled: prefix found, Connectivity full
        let (netns, router) = try ipv6OnlyHost()
        try router.startDNS64NameServer(at: Self.nameServer, synthesized: "64:ff9b::c000:aa", answering: ["check.test"])
        try writeConfiguration("[Connectivity]\nCheckURL=http://check.test:8080/check\nCheckIntervalSec=60\nCheckTimeoutSec=1\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        try waitForProperties("settled", timeout: .seconds(30)) { $0.string(.nat64Prefix) == "64:ff9b::/96" && $0.string(.connectivity) == "full" }
        func counts() -> (discovery: Int, check: Int, http: Int) {
            let log = router.nameServerLog(at: Self.nameServer)
            return (log.components(separatedBy: "query[AAAA] ipv4only.arpa").count - 1, log.components(separatedBy: "query[AAAA] check.test").count - 1,
                    router.requests.count)
        }
        let before = counts()

        // When IPv6's gateway flips 200 times between the router's two addresses on ra0, one
        // `ip` at a time (each flip a batch, and a walk, of its own), 10 ms apart
        let flips = 200
        let gateways = [RouterNamespace.linkLocalAddress, Self.nameServer]
        let script = "for i in $(seq \(flips / 2)); do for gateway in \(gateways.joined(separator: " ")); do "
            + "ip -6 route replace default via $gateway dev ra0; sleep 0.01; done; done"
        let started = ContinuousClock.now
        try Command.run("ip", ["netns", "exec", netns.name, "sh", "-c", script]).check()
        let seconds = Int((ContinuousClock.now - started).components.seconds) + 1

        // Then once the last path's check has its verdict (and the next is an interval away)
        let last = gateways[(flips - 1) % 2]
        try Poll.until("the last path's check", timeout: .seconds(60), observe: { try self.busctl.explain() }) { explain in
            explain.contains("via \(last)") && explain.contains("check verdict: full; next check in") && !explain.contains("next check in 0")
                && !explain.contains("next check in 1.") && !explain.contains("a check is in flight")
        }
        let after = counts()
        let added = (discovery: after.discovery - before.discovery, check: after.check - before.check, http: after.http - before.http)
        print("FIGURE: \(flips) IPv6 gateway flips in \(seconds) s: \(added.discovery) ipv4only.arpa lookups, \(added.check) check-host lookups, "
              + "\(added.http) HTTP checks")
        // the lookups and checks are bounded: none for discovery (same link), and one check per
        // second of flipping (ConnectivityCheckSchedule.pathChangeSpacingSeconds), and the last
        XCTAssertEqual(added.discovery, 0, "ipv4only.arpa asked again for gateway changes on one link")
        XCTAssertLessThanOrEqual(added.check, seconds + 2, "check-host lookups for \(flips) flips in \(seconds) s")
        XCTAssertLessThanOrEqual(added.http, seconds + 2, "HTTP checks for \(flips) flips in \(seconds) s")
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
