#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import XCTest

/// The DNS readiness rule: configured servers and their verdicts in, `DNS` and its reason out.
final class DNSRuleTests: XCTestCase {
    /// One row: the servers' facts, whether the host is reachable, the check's lookups, and the
    /// value and reason the rule must reach.
    struct Row {
        var name: String
        var servers: [NameServerFacts]
        var hostIsReachable: Bool
        var lookups: NameLookupEvidence?
        var readiness: DNSReadiness
        var reason: String
        var line: UInt

        init(
            _ name: String, _ servers: [NameServerFacts], hostIsReachable: Bool = true, lookups: NameLookupEvidence? = nil,
            _ readiness: DNSReadiness, _ reason: String, line: UInt = #line
        ) {
            self.name = name
            self.servers = servers
            self.hostIsReachable = hostIsReachable
            self.lookups = lookups
            self.readiness = readiness
            self.reason = reason
            self.line = line
        }
    }

    static let resolvConf = NameServerOrigin.resolvConf("/etc/resolv.conf")

    /// A server at `address` whose facts are `facts` (a caller's address, as the daemon asks).
    static func server(_ address: String, _ facts: DestinationFacts, origin: NameServerOrigin = resolvConf, servesAnyDomain: Bool = true) -> NameServerFacts {
        var facts = facts
        facts.purpose = .callerAddress
        return NameServerFacts(server: NameServer(address: IPAddress(address)!, origin: origin, servesAnyDomain: servesAnyDomain), facts: facts)
    }

    static let routedOnEth0 = server("192.0.2.53", Fixture.routed(.ipv4, via: Fixture.eth0))
    static let unroutedIPv4 = server("198.51.100.53", Fixture.failed(.ipv4, errno: ENETUNREACH))
    static let unroutedIPv6 = server("2001:db8::53", Fixture.routed(.ipv6, via: Fixture.link(Fixture.wlan0, hasCarrier: false)))
    static let localResolver = server("127.0.0.1", Fixture.thisHost(.ipv4))
    /// A split-DNS VPN's server: routed, but resolved asks it only about its link's domains.
    static let splitDNS = server("10.8.0.53", Fixture.routed(.ipv4, via: Fixture.eth0), origin: .resolvedLink(InterfaceIndex(7)), servesAnyDomain: false)

    static let rows: [Row] = [
        // Given no server at all, nothing else matters.
        Row("no server configured", [], .none, "no nameserver is configured"),
        Row("no server configured, though a lookup answered (from /etc/hosts)", [], lookups: .answered, .none, "no nameserver is configured"),

        // Given only servers of a link's own domains (split DNS), however routed: none for a public name.
        Row(
            "only a split-DNS server, routed", [splitDNS], .none,
            "no nameserver takes names outside its link's own domains (10.8.0.53 from systemd-resolved (link 7))"
        ),
        Row(
            "a split-DNS server and a lookup that answered (a name of its domain)", [splitDNS], lookups: .answered, .none,
            "no nameserver takes names outside its link's own domains (10.8.0.53 from systemd-resolved (link 7))"
        ),

        // Given servers the kernel routes nowhere.
        Row("the only server has no route", [unroutedIPv4], .unreachable, "no nameserver is routed (198.51.100.53: no default route)"),
        Row(
            "two servers, neither routed: each says why", [unroutedIPv4, unroutedIPv6], .unreachable,
            "no nameserver is routed (198.51.100.53: no default route; 2001:db8::53: wlan0 has no carrier)"
        ),
        Row(
            "unrouted servers stay unreachable whatever a lookup got", [unroutedIPv4], lookups: .answered, .unreachable,
            "no nameserver is routed (198.51.100.53: no default route)"
        ),
        Row(
            "a resolver on this host while the host has no usable route", [localResolver], hostIsReachable: false, .unreachable,
            "no nameserver is routed (127.0.0.1: on this host, which has no usable route)"
        ),

        // Given a routed server.
        Row("one routed server", [routedOnEth0], .reachable, "nameserver 192.0.2.53 is routed via eth0"),
        Row("the first routed server is named", [unroutedIPv4, routedOnEth0], .reachable, "nameserver 192.0.2.53 is routed via eth0"),
        Row("a routed split-DNS server is passed over", [splitDNS, routedOnEth0], .reachable, "nameserver 192.0.2.53 is routed via eth0"),
        Row(
            "a routed split-DNS server does not make up for an unrouted one", [splitDNS, unroutedIPv4], .unreachable,
            "no nameserver is routed (198.51.100.53: no default route)"
        ),
        Row("a resolver on this host while the host is reachable", [localResolver], .reachable, "nameserver 127.0.0.1 is routed on this host"),
        Row("the check's lookup answered", [routedOnEth0], lookups: .answered, .answering, "the check's name lookup got an answer"),
        Row(
            "the check's lookups failed", [routedOnEth0], lookups: .failed("Temporary failure in name resolution"), .failing,
            "nameserver 192.0.2.53 is routed via eth0, but the check's name lookup failed: Temporary failure in name resolution"
        ),
    ]

    func testTheTable() {
        for row in Self.rows {
            // When
            let verdict = DNSRule.decide(servers: row.servers, hostIsReachable: row.hostIsReachable, lookups: row.lookups)
            // Then
            XCTAssertEqual(verdict.readiness, row.readiness, row.name, line: row.line)
            XCTAssertEqual(verdict.reason, row.reason, row.name, line: row.line)
        }
    }

    func testReasonNamesDNSOnlyWhenTheRouteIsFineAndNamesAreNot() {
        let route = "default route via 10.0.0.1 on wlan0 (wifi), table 254"
        let none = DNSRule.decide(servers: [], hostIsReachable: true, lookups: nil)
        let reachable = DNSRule.decide(servers: [Self.routedOnEth0], hostIsReachable: true, lookups: nil)
        XCTAssertEqual(
            DNSRule.reason(route, status: .reachableViaWiFi, dns: none), "\(route), but no nameserver is configured"
        )
        XCTAssertEqual(DNSRule.reason(route, status: .reachableViaWiFi, dns: reachable), route)
        XCTAssertEqual(DNSRule.reason("no default route", status: .notReachable, dns: none), "no default route")
    }

    func testWaitOrder() {
        XCTAssertLessThan(DNSReadiness.unreachable.rank, DNSReadiness.failing.rank)
        XCTAssertLessThan(DNSReadiness.failing.rank, DNSReadiness.reachable.rank)
        XCTAssertLessThan(DNSReadiness.reachable.rank, DNSReadiness.answering.rank)
        XCTAssertEqual(DNSReadiness.none.rank, DNSReadiness.unknown.rank)
    }
}

/// Which of systemd-resolved's servers a public name goes to.
final class ResolvedDefaultRouteTests: XCTestCase {
    func testOnlyALinkThatIsNoDefaultRouteKeepsItsServersToItsDomains() {
        let link = NameServerOrigin.resolvedLink(InterfaceIndex(7))
        let rows: [(origin: NameServerOrigin, linkIsDefaultRoute: Bool?, serves: Bool, line: UInt)] = [
            // Given resolved's global servers: always a default route (whatever a link says)
            (.resolvedGlobal, false, true, #line),
            (.resolvedFallback, nil, true, #line),
            // Given a server of resolv.conf, or glibc's default: glibc asks it about every name
            (.resolvConf("/etc/resolv.conf"), false, true, #line),
            (.resolverDefault("/etc/resolv.conf"), nil, true, #line),
            // Given a link's server: as its link's DefaultRoute says (configured, else resolved's
            // own rule: no routing-only domain, or `~.`)
            (link, true, true, #line),
            (link, false, false, #line),
            // Given a link whose DefaultRoute could not be read (a resolved without it): counted
            (link, nil, true, #line),
        ]
        for row in rows {
            // When
            let serves = ResolvedDefaultRoute.servesAnyDomain(row.origin, linkIsDefaultRoute: row.linkIsDefaultRoute)
            // Then
            XCTAssertEqual(serves, row.serves, "\(row.origin.description), DefaultRoute \(row.linkIsDefaultRoute.map(String.init) ?? "unknown")", line: row.line)
        }
    }
}

/// glibc's reading of resolv.conf.
final class ResolvConfTests: XCTestCase {
    func testNameserverLinesAsGlibcReadsThem() {
        let text = """
        # Generated by NetworkManager
        search example.org
        nameserver 192.0.2.53
        ; a comment
        nameserver\t2001:db8::53
        nameserver not-an-address
        nameserver 192.0.2.53
        nameserver 198.51.100.53
        options edns0
        """
        XCTAssertEqual(
            ResolvConf.nameServers(in: text), ["192.0.2.53", "2001:db8::53"].map { IPAddress($0)! },
            "the first three lines with an address count (the duplicate among them), the fourth is ignored"
        )
        XCTAssertEqual(ResolvConf.nameServers(in: "nameserver fe80::1%eth0\n"), [IPAddress("fe80::1%eth0")!])
        XCTAssertEqual(ResolvConf.nameServers(in: ""), [])
        XCTAssertEqual(
            ResolvConf.nameServers(in: "#nameserver 192.0.2.1\n nameserver 192.0.2.2\nnameserver 192.0.2.3\n"), [IPAddress("192.0.2.3")!],
            "a commented line and one with a leading blank are not nameserver lines to glibc"
        )
    }

    func testAddressFormsGlibcTakes() {
        // Given a nameserver line's address, Then glibc's resolver (inet_aton, then inet_pton
        // for IPv6) reads it as this server, or skips the line (nil)
        let rows: [(address: String, server: String?, line: UInt)] = [
            ("192.0.2.53", "192.0.2.53", #line),
            ("127.1", "127.0.0.1", #line),
            ("10.1.2", "10.1.0.2", #line),
            ("0x7f.1", "127.0.0.1", #line),
            ("0177.0.0.1", "127.0.0.1", #line),
            ("2130706433", "127.0.0.1", #line),
            ("2001:db8::53", "2001:db8::53", #line),
            ("fe80::1%eth0", "fe80::1%eth0", #line),
            ("::ffff:192.0.2.1", "::ffff:192.0.2.1", #line),
            ("192.0.2.53%eth0", nil, #line),
            ("256.1.1.1", nil, #line),
            ("1.2.3.4.5", nil, #line),
            ("0x", nil, #line),
            ("example.org", nil, #line),
        ]
        for row in rows {
            // When the line is read
            let servers = ResolvConf.nameServers(in: "nameserver \(row.address) # trailing words are ignored\n")
            // Then
            XCTAssertEqual(servers, row.server.map { [IPAddress($0)!] } ?? [], row.address, line: row.line)
        }
    }

    func testGlibcAsksTheLoopbackWhenTheFileNamesNoServer() {
        let path = "/etc/resolv.conf"
        let loopback = [NameServer(address: IPAddress("127.0.0.1")!, origin: .resolverDefault(path))]
        // Given the file's text (nil: it cannot be read), Then the servers an application asks
        let rows: [(text: String?, servers: [NameServer], line: UInt)] = [
            ("nameserver 192.0.2.53\n", [NameServer(address: IPAddress("192.0.2.53")!, origin: .resolvConf(path))], #line),
            ("nameserver 127.1\n", [NameServer(address: IPAddress("127.0.0.1")!, origin: .resolvConf(path))], #line),
            ("search example.org\noptions edns0\n", loopback, #line),
            ("", loopback, #line),
            ("nameserver example.org\n", loopback, #line),
            (nil, loopback, #line),
        ]
        for row in rows {
            XCTAssertEqual(ResolvConf.servers(in: row.text, path: path), row.servers, "\(row.text ?? "no file")", line: row.line)
        }
        XCTAssertEqual(loopback[0].origin.description, "glibc's default (no nameserver in /etc/resolv.conf)")
    }

    func testResolvedStub() {
        XCTAssertTrue(ResolvConf.pointsAtResolvedStub([IPAddress("127.0.0.53")!]))
        XCTAssertTrue(ResolvConf.pointsAtResolvedStub([IPAddress("127.0.0.53")!, IPAddress("127.0.0.54")!]))
        XCTAssertFalse(ResolvConf.pointsAtResolvedStub([IPAddress("127.0.0.53")!, IPAddress("192.0.2.53")!]))
        XCTAssertFalse(ResolvConf.pointsAtResolvedStub([]))
    }
}
