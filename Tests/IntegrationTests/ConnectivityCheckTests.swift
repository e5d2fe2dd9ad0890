import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The opt-in active check against real servers in a router namespace (testbed/servers/
/// connectivity-server.py behind ra1 at 10.77.0.1): each of its verdicts, the back-off and the
/// re-check before `limited`, the network's captive-portal API advertised in a router
/// advertisement, and no packet at all with checks off. Nothing leaves the two namespaces.
final class ConnectivityCheckTests: DaemonTestCase {
    func testWithChecksOffTheDaemonSendsNothingAndLoadsNoHTTPClient() throws {
        // Given the router's servers and a reachable host, with the default configuration
        let router = try startDaemonBehindRouter(configuration: "")
        try waitForProperties("reachable, connectivity unknown") {
            $0.status == ReachabilityStatus.reachableViaEthernet.rawValue && $0.string(.connectivity) == Connectivity.unknown.rawValue
        }

        // When time passes and Explain is read
        Thread.sleep(forTimeInterval: 1.5)  // an observation window: no check may come in it
        XCTAssertTrue(try busctl.explain().contains("[Connectivity] CheckURL= (no active check: the daemon sends nothing, but for RFC 7050's lookup of ipv4only.arpa through the system resolver on an IPv6-only host)"))

        // Then no packet left ra0, the servers saw nothing, the daemon has no TCP socket and
        // libcurl is not even loaded
        XCTAssertEqual(try transmittedPackets(), 0, "packets sent on ra0 with checks off")
        XCTAssertEqual(router.requests, [])
        let pid = try XCTUnwrap(daemon).pid
        // (cat: Foundation reads a /proc file of size 0 only partly.)
        let maps = try Command.run("cat", ["/proc/\(pid)/maps"]).check().standardOutput
        XCTAssertFalse(maps.contains("libcurl"), "libcurl is loaded with checks off")
        XCTAssertEqual(try tcpSockets(of: pid), 0)
    }

    func testEachAnswerOfTheCheckServerGivesItsVerdict() throws {
        // Given a check answering 204
        let router = try startDaemonBehindRouter(configuration: checkConfiguration())
        try waitForConnectivity(.full)
        let full = try busctl.properties()
        XCTAssertEqual(full.string(.ipv4Connectivity), Connectivity.full.rawValue)
        XCTAssertEqual(full.string(.ipv6Connectivity), Connectivity.none.rawValue)
        XCTAssertEqual(full.string(.captivePortal), "")

        // When it redirects, then the portal with its Location
        try router.setMode("redirect")
        try waitForConnectivity(.portal, portal: "http://10.77.0.1:8080/portal")
        // When it answers other content: a portal whose page is not known
        try router.setMode("html")
        try waitForConnectivity(.portal, portal: "")
        // When the connection is reset (twice: a failure after full would be checked again)
        try router.setMode("reset")
        try waitForConnectivity(.limited)
        // When it hangs past CheckTimeoutSec=: a check that timed out, still limited, with the hint
        try router.setMode("hang")
        let timedOut = try Poll.until("a check that timed out", observe: { try busctl.explain() }) { $0.contains("timed out") }
        XCTAssertTrue(timedOut.contains("IPAddressAllow="), timedOut)
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.limited.rawValue)
        // When it answers 204 again
        try router.setMode("204")
        try waitForConnectivity(.full)

        // Then one ConnectivityChanged per change, and Explain shows the last check
        XCTAssertEqual(try signals.waitForConnectivityChanged(count: 5), ["unknown", "full", "portal", "limited", "full"])
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("check GET \(RouterNamespace.checkURL) over ra0"), explain)
        XCTAssertTrue(explain.contains("check verdict: full; next check in"), explain)
        XCTAssertTrue(try transmittedPackets() > 0)
        // Each check went over IPv4 from ra0's address (the servers saw 10.77.0.2)
        XCTAssertTrue(router.requests.allSatisfy { $0.hasPrefix("GET /check ") && $0.hasSuffix(" ::ffff:10.77.0.2") }, "\(router.requests)")
    }

    func testAnExpectedBodyIsFullAndASingleFailureAfterFullIsCheckedAgain() throws {
        // Given a check expecting a body
        let router = try startDaemonBehindRouter(configuration: checkConfiguration("CheckResponse=success\nCheckIntervalSec=2\n"), mode: "body")
        try waitForConnectivity(.full)

        // When one check fails and the next would succeed
        let before = router.requests.count
        try router.setMode("reset-once", next: "body")
        try Poll.until("the failed check and its re-check", timeout: .seconds(10)) { router.requests.count >= before + 3 }

        // Then full was never left: the failure was checked again at once
        XCTAssertEqual(try signals.connectivityChanges, ["unknown", "full"])
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.full.rawValue)
    }

    func testTheNetworksCaptivePortalAPIDecidesPortalOrNot() throws {
        // Given IPv6 on both ends (for the router advertisement) and a check answering 204,
        // with the network's API trusted through the test CA
        let router = try startDaemonBehindRouter(configuration: "")
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.ip("addr", "add", "fe80::2/64", "dev", "ra0", "nodad")
        try writeConfiguration(checkConfiguration("CaptivePortalAPICAFile=\(router.caFile)\n"))
        try XCTUnwrap(daemon).send(SIGHUP)
        try waitForConnectivity(.full)

        // When the router advertises an API that says the network is captive
        try router.namespace.advertiseCaptivePortalAPI(RouterNamespace.captiveAPI)

        // Then portal, with the API's user-portal-url
        try waitForConnectivity(.portal, portal: "https://10.77.0.1:8443/portal")
        XCTAssertTrue(router.requests.contains { $0.hasPrefix("GET /captive application/captive+json ") }, "\(router.requests)")

        // When it advertises an API that says it is not
        try router.namespace.advertiseCaptivePortalAPI(RouterNamespace.openAPI)
        try waitForConnectivity(.full, portal: "")
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("captive-portal API \(RouterNamespace.openAPI): HTTP 200 -> captive false"), explain)
    }

    func testACaptivePortalSessionIsPublishedAndACheckRunsTheMomentItRunsOut() throws {
        // Given a check every hour answering 204 while the network's session lasts, and the
        // network's API trusted through the test CA
        let router = try startDaemonBehindSessionRouter(sessionSeconds: 10)
        XCTAssertEqual(try busctl.properties().captivePortalSession, CaptivePortalSession(), "no API: no session")

        // When the router advertises the API of a session of 10 s
        try router.namespace.advertiseCaptivePortalAPI(RouterNamespace.sessionAPI)

        // Then the session is published with the keys the API gave
        let during = try waitForProperties("a captive-portal session") { $0.captivePortalSession.secondsRemaining != nil }.captivePortalSession
        XCTAssertLessThanOrEqual(try XCTUnwrap(during.secondsRemaining), 10)
        XCTAssertEqual(during.bytesRemaining, 1_000_000)
        XCTAssertEqual(during.venueInfoURL, "https://10.77.0.1:8443/venue")
        XCTAssertEqual(during.canExtendSession, true)
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.full.rawValue)
        let checksBefore = router.requests.filter { $0.hasPrefix("GET /check ") }.count

        // When it runs out: a check at once (the next scheduled one is an hour away), and
        // Connectivity and the portal follow, the session now without a time
        let after = try waitForProperties("connectivity portal once the session ran out", timeout: .seconds(30)) {
            $0.string(.connectivity) == Connectivity.portal.rawValue && $0.string(.captivePortal) == "https://10.77.0.1:8443/portal"
        }
        XCTAssertEqual(after.captivePortalSession, CaptivePortalSession(venueInfoURL: "https://10.77.0.1:8443/venue"))
        XCTAssertGreaterThan(router.requests.filter { $0.hasPrefix("GET /check ") }.count, checksBefore)
        XCTAssertTrue(try busctl.explain().contains("captive-portal API \(RouterNamespace.sessionAPI): HTTP 200 -> captive true"))
    }

    func testAHostNameIsResolvedAndCheckedOverEachFamily() throws {
        // Given check.test in the namespace's hosts file for both families, a resolver that
        // answers nothing (the router: names not in hosts fail at once), and both families routed
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n10.77.0.1 check.test\nfd00::1 check.test\n")
        try netns.writeEtcFile("resolv.conf", "nameserver 10.77.0.1\noptions timeout:1 attempts:1\n")
        let router = try startDaemonBehindRouter(configuration: "[Connectivity]\nCheckURL=http://check.test:8080/check\nCheckTimeoutSec=2\n")
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.ip("addr", "add", "fd00::2/64", "dev", "ra0", "nodad")
        try netns.ip("-6", "route", "add", "default", "via", "fd00::1", "dev", "ra0")

        // Then each family is full by its own check, over its own family
        try waitForProperties("IPv4 and IPv6 full") {
            $0.string(.ipv4Connectivity) == Connectivity.full.rawValue && $0.string(.ipv6Connectivity) == Connectivity.full.rawValue
        }
        let clients = Set(router.requests.compactMap { $0.split(separator: " ").last.map(String.init) })
        XCTAssertEqual(clients, ["::ffff:10.77.0.2", "fd00::2"])

        // When the check's host cannot be resolved
        try writeConfiguration("[Connectivity]\nCheckURL=http://missing.test:8080/check\nCheckTimeoutSec=2\n")
        try XCTUnwrap(daemon).send(SIGHUP)

        // Then both families are limited, and Explain says why
        try waitForProperties("IPv4 and IPv6 limited") {
            $0.string(.ipv4Connectivity) == Connectivity.limited.rawValue && $0.string(.ipv6Connectivity) == Connectivity.limited.rawValue
        }
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("failed: Could not resolve host: missing.test"), explain)
    }

    /// Packets the namespace sent on ra0 (its sysfs counter, read inside the namespace).
    private func transmittedPackets() throws -> Int {
        let output = try Command.run("ip", ["netns", "exec", try netns.name, "cat", "/sys/class/net/ra0/statistics/tx_packets"]).check()
        return try XCTUnwrap(Int(output.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// The TCP sockets among `pid`'s descriptors (socket inodes found in the namespace's
    /// /proc/net/tcp and tcp6).
    private func tcpSockets(of pid: Int32) throws -> Int {
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        let inodes = Set(descriptors.compactMap { name -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)"), target.hasPrefix("socket:[") else { return nil }
            return String(target.dropFirst(8).dropLast())
        })
        var count = 0
        for table in ["tcp", "tcp6"] {
            let text = try String(contentsOfFile: "/proc/\(pid)/net/\(table)", encoding: .utf8)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                if fields.count > 9, inodes.contains(String(fields[9])) { count += 1 }
            }
        }
        return count
    }
}
