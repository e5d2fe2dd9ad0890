import Foundation
import ReachabilityBus
import ReachabilityCore
import TestSupport
import XCTest

/// `DNS`: the configured nameservers judged by the kernel's routes toward them, with the file
/// followed as the tools change it (rewritten in place, replaced by rename, a symbolic link
/// re-pointed) and each transition published once.
final class DNSReadinessTests: DaemonTestCase {
    /// The resolver configuration the daemon follows (`--resolv-conf`).
    private var resolvConf: String {
        get throws { try XCTUnwrap(directory).file("resolv.conf") }
    }

    /// Replaces `path` as resolvconf and NetworkManager do: a new file beside it, renamed over it.
    private func replace(_ path: String, with text: String) throws {
        try text.write(toFile: path + ".new", atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(path + ".new", path), 0)
    }

    /// Waits until `DNS` is `value` and returns the properties then.
    @discardableResult
    private func waitForDNS(_ value: DNSReadiness, line: UInt = #line) throws -> PublishedProperties {
        try waitForProperties("DNS \(value.rawValue)") { $0.string(.dns) == value.rawValue }
    }

    func testEveryRouteValueReachedAsTheFileAndTheRoutesChangeEachPublishedOnce() throws {
        // Given a resolv.conf naming no server (glibc then asks 127.0.0.1) and a host that
        // becomes reachable
        let path = try resolvConf
        try "# no nameserver yet\nsearch example.org\n".write(toFile: path, atomically: true, encoding: .utf8)
        try startDaemon(arguments: ["--resolv-conf", path])
        try waitForDNS(.unreachable)
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let loopback = try waitForDNS(.reachable)
        XCTAssertEqual(loopback.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        XCTAssertFalse(try XCTUnwrap(loopback.string(.reason)).contains("nameserver"), "\(loopback)")
        XCTAssertTrue(try busctl.explain().contains("nameserver 127.0.0.1 from glibc's default (no nameserver in \(path)): local route dev lo"))

        // When a server is configured (the file replaced by rename): reachable through it
        try replace(path, with: "nameserver 198.51.100.53\n")
        try waitForExplain(containing: "nameserver 198.51.100.53 from \(path): unicast route via 10.77.0.1 dev ra0")

        // When the kernel stops routing it (the host's default route stays): unreachable, and Reason says so
        try netns.ip("route", "add", "unreachable", "198.51.100.53/32")
        let unreachable = try waitForDNS(.unreachable)
        XCTAssertEqual(unreachable.status, ReachabilityStatus.reachableViaEthernet.rawValue)
        XCTAssertTrue(try XCTUnwrap(unreachable.string(.reason)).contains("but no nameserver is routed (198.51.100.53: "), "\(unreachable)")

        // When the file is rewritten in place to name the loopback in inet_aton's short form: reachable
        try "nameserver 127.1\n".write(toFile: path, atomically: false, encoding: .utf8)
        try waitForDNS(.reachable)
        try waitForExplain(containing: "nameserver 127.0.0.1 from \(path): local route dev lo")

        // Then each transition was published once, in order
        let changes = try signals.waitForPropertiesChanged("three DNS changes") { $0.filter { $0.changed["DNS"] != nil }.count >= 3 }
        XCTAssertEqual(
            changes.compactMap { $0.changed["DNS"].flatMap(\.value) }, ["reachable", "unreachable", "reachable"].map(BusValue.string)
        )
    }

    /// Writes `text` to the resolver configuration, starts the daemon following it, and makes
    /// the host reachable (ra0 and a default route); returns the configuration's path.
    @discardableResult
    private func startReachable(resolvConf text: String) throws -> String {
        let path = try resolvConf
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try startDaemon(arguments: ["--resolv-conf", path])
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        return path
    }

    /// Waits until Explain's text contains `text`.
    private func waitForExplain(containing text: String) throws {
        let busctl = try busctl
        try Poll.until("Explain to say \(text)", observe: { (try? busctl.explain()) ?? "" }) { $0.contains(text) }
    }

    func testASymbolicLinkRepointedAndALinkLocalServerOnItsLink() throws {
        // Given resolv.conf a symbolic link to a file naming the on-link router
        let directory = try XCTUnwrap(directory)
        let path = try resolvConf
        try "nameserver 10.77.0.1\n".write(toFile: directory.file("router.conf"), atomically: true, encoding: .utf8)
        try "nameserver fe80::1%ra0\n".write(toFile: directory.file("link-local.conf"), atomically: true, encoding: .utf8)
        XCTAssertEqual(symlink(directory.file("router.conf"), path), 0)
        try startDaemon(arguments: ["--resolv-conf", path])
        // (Before the link is up: nothing routes the router.)
        try waitForDNS(.unreachable)
        try configureIPv4Link()
        try waitForDNS(.reachable)

        // When the link is re-pointed (a new link renamed over it) to a link-local server, with
        // ra0 up but without IPv6: the server is on ra0, which has no link-local address
        XCTAssertEqual(symlink(directory.file("link-local.conf"), path + ".new"), 0)
        XCTAssertEqual(rename(path + ".new", path), 0)
        let unreachable = try waitForDNS(.unreachable)
        XCTAssertTrue(try busctl.explain().contains("nameserver fe80::1%ra0 from \(path)"), "\(unreachable)")

        // When ra0 gets IPv6 and its link-local address: the server is reachable on its link
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.ip("addr", "add", "fe80::2/64", "dev", "ra0", "nodad")
        let reachable = try waitForDNS(.reachable)
        // and ra0's entry in Interfaces names the server configured for it (its zone)
        let ra0 = reachable.values["Interfaces"]?.value?.dictionaries?.first { $0["name"]?.string == "ra0" }
        XCTAssertEqual(ra0?["dns"]?.strings, ["fe80::1%ra0"], "\(reachable)")
    }

    func testANameserverIsJudgedByTheFlowOfAQueryUDPToPort53() throws {
        // Given a reachable host whose nameserver the main table does not route (an
        // `unreachable` route), and table 100 that routes it
        let path = try startReachable(resolvConf: "nameserver 198.51.100.53\n")
        try netns.ip("route", "add", "unreachable", "198.51.100.53/32")
        try netns.ip("route", "add", "198.51.100.53/32", "via", "10.77.0.1", "dev", "ra0", "table", "100")
        try waitForDNS(.unreachable)

        // When a rule sends queries (UDP to port 53) to table 100: they go out, so reachable
        try netns.ip("rule", "add", "ipproto", "udp", "dport", "53", "lookup", "100", "priority", "100")
        try waitForDNS(.reachable)
        try waitForExplain(containing: "nameserver 198.51.100.53 from \(path): unicast route via 10.77.0.1 dev ra0")

        // When the rule sends only TCP to port 443 there instead: queries have no route, so unreachable
        try netns.ip("rule", "del", "ipproto", "udp", "dport", "53", "lookup", "100", "priority", "100")
        try netns.ip("rule", "add", "ipproto", "tcp", "dport", "443", "lookup", "100", "priority", "100")
        let unreachable = try waitForDNS(.unreachable)
        XCTAssertTrue(try XCTUnwrap(unreachable.string(.reason)).contains("but no nameserver is routed (198.51.100.53: "), "\(unreachable)")
    }

    func testSystemdResolvedStoppingIsSeenAtOnceAndItsReturnFollowed() throws {
        // Given resolv.conf naming resolved's stub, and resolved (a stand-in on the test's bus)
        // with one global server, on a reachable host
        try startReachable(resolvConf: "nameserver 127.0.0.53\noptions edns0 trust-ad\n")
        let resolved = try StandInResolved(bus: try XCTUnwrap(bus), directory: try XCTUnwrap(directory), servers: [(0, "198.51.100.53")])
        try waitForDNS(.reachable)
        try waitForExplain(containing: "nameserver 198.51.100.53 from systemd-resolved (global): unicast route via 10.77.0.1 dev ra0")

        // When resolved stops: its stub answers nothing, so there is no server at once
        resolved.stop()
        let none = try waitForDNS(.none)
        XCTAssertTrue(try XCTUnwrap(none.string(.reason)).hasSuffix(", but no nameserver is configured"), "\(none)")

        // When it comes back: its servers again
        let restarted = try StandInResolved(bus: try XCTUnwrap(bus), directory: try XCTUnwrap(directory), servers: [(0, "198.51.100.53")])
        try waitForDNS(.reachable)
        restarted.stop()
    }

    func testASplitDNSServerOfALinkThatIsNoDefaultRouteIsNotCounted() throws {
        // Given a reachable host whose resolv.conf names resolved's stub, and a VPN link (vpn0)
        // whose server is resolved's only one, for `~corp.example` alone (DefaultRoute false)
        try startReachable(resolvConf: "nameserver 127.0.0.53\n")
        try netns.addQuietVethPair("vpn0", peer: "vpn1")
        try netns.ip("addr", "add", "10.8.0.2/24", "dev", "vpn0")
        for link in ["vpn1", "vpn0"] { try netns.ip("link", "set", link, "up") }
        let vpn = try XCTUnwrap(Int32(try netns.ip("-o", "link", "show", "vpn0").prefix { $0 != ":" }))
        let resolved = try StandInResolved(
            bus: try XCTUnwrap(bus), directory: try XCTUnwrap(directory), servers: [(vpn, "10.8.0.53")], defaultRoutes: [vpn: false]
        )

        // Then no server takes a public name: none, though the VPN's server is routed (waited
        // for by its reason: DNS is none before resolved's servers are read too)
        let splitOnly = "but no nameserver takes names outside its link's own domains (10.8.0.53"
        let none = try waitForProperties("DNS none for a split-DNS server") { $0.string(.reason)?.contains(splitOnly) == true }
        XCTAssertEqual(none.string(.dns), DNSReadiness.none.rawValue, "\(none)")
        try waitForExplain(containing: "nameserver 10.8.0.53 from systemd-resolved (link \(vpn)): unicast route dev vpn0")
        try waitForExplain(containing: "only for its link's own domains")

        // When the VPN becomes a default route (`~.`, or DefaultRoute=yes), seen at the next link change
        try resolved.configure(servers: [(vpn, "10.8.0.53")], defaultRoutes: [vpn: true])
        try netns.ip("addr", "add", "10.8.0.3/24", "dev", "vpn0")
        // Then its server counts
        try waitForDNS(.reachable)
    }

    func testAResolverOnThisHostCountsWhileTheHostIsReachable() throws {
        // Given a local resolver (dnsmasq, unbound) named in resolv.conf, and no route
        let path = try resolvConf
        try "nameserver 127.0.0.1\n".write(toFile: path, atomically: true, encoding: .utf8)
        try startDaemon(arguments: ["--resolv-conf", path])
        try waitForDNS(.unreachable)
        XCTAssertTrue(try busctl.explain().contains("nameserver 127.0.0.1 from \(path): local route dev lo"))

        // When the host becomes reachable: so does the resolver
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForDNS(.reachable)
        XCTAssertTrue(try busctl.explain().contains("on this host (a local resolver: where it forwards is not visible here)"))
    }

    func testWithTheCheckOnItsLookupsSayAnsweringOrFailingEachPublishedOnce() throws {
        // Given a real DNS server (dnsmasq) in the router namespace serving the check's name,
        // named in the namespace's resolv.conf, and a check by name every 2 s
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n")
        try netns.writeEtcFile("resolv.conf", "nameserver 10.77.0.5\noptions timeout:1 attempts:1\n")
        let router = try startDaemonBehindRouter(
            configuration: "[Connectivity]\nCheckURL=http://check.example.test:8080/check\nCheckTimeoutSec=2\nCheckIntervalSec=2\n"
        )
        try router.startNameServer(at: "10.77.0.5", answering: ["check.example.test"])
        let answering = try waitForProperties("DNS answering, connectivity full", timeout: .seconds(30)) {
            $0.string(.dns) == DNSReadiness.answering.rawValue && $0.string(.connectivity) == Connectivity.full.rawValue
        }
        XCTAssertFalse(try XCTUnwrap(answering.string(.reason)).contains("nameserver"), "\(answering)")

        // When the server stops answering: failing, and Reason says why
        router.stopNameServer(at: "10.77.0.5")
        let failing = try waitForProperties("DNS failing", timeout: .seconds(30)) { $0.string(.dns) == DNSReadiness.failing.rawValue }
        XCTAssertTrue(
            try XCTUnwrap(failing.string(.reason)).contains("but the check's name lookup failed: Temporary failure in name resolution"), "\(failing)"
        )

        // When it answers again: answering
        try router.startNameServer(at: "10.77.0.5", answering: ["check.example.test"])
        try waitForProperties("DNS answering again", timeout: .seconds(30)) { $0.string(.dns) == DNSReadiness.answering.rawValue }

        // Then from the first answer on, each transition was published once
        let values = try signals.waitForPropertiesChanged("DNS changes") { _ in true }.compactMap { $0.changed["DNS"].flatMap(\.value) }
        XCTAssertEqual(Array(values.suffix(3)), ["answering", "failing", "answering"].map(BusValue.string), "\(values)")
    }
}
