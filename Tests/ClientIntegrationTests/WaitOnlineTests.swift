import Foundation
import ReachabilityCore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What reachabilityd-wait-online.service asks of `reachabilityctl wait`, against the real daemon
/// on a private bus in a test namespace: the journal lines, the interface set, both families,
/// the early give-up without carrier, SIGTERM, and connectivity mode with the check's portal.
final class WaitOnlineTests: DaemonTestCase {
    /// `reachabilityctl ARGUMENTS` run in the test's namespace (where `--carrier-timeout` reads
    /// links), with the test's configuration file as the daemon's (none: the defaults).
    func waitInNamespace(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> CommandResult {
        var environment = try controlEnvironment()
        environment["REACHABILITYD_CONFIG"] = try configurationPath
        return try Command.run("ip", ["netns", "exec", try netns.name, try ClientTestPaths.controlBinary(), "wait"] + arguments,
                               environment: environment, timeout: timeout)
    }

    /// A `reachabilityctl wait ARGUMENTS` left running; its output in `wait.out` and `wait.err`.
    func startWait(_ arguments: [String]) throws -> ChildProcess {
        let directory = try XCTUnwrap(directory)
        return try ChildProcess(try ClientTestPaths.controlBinary(), ["wait"] + arguments, environment: try controlEnvironment(),
                                standardOutput: directory.file("wait.out"), standardError: directory.file("wait.err"))
    }

    /// What the running wait wrote to `name` (wait.out, wait.err).
    func output(_ name: String) -> String {
        directory.flatMap { try? String(contentsOfFile: $0.file(name), encoding: .utf8) } ?? ""
    }

    func testVerboseSaysHowLongAndThroughWhichInterfaceAndJSONHasTheTime() throws {
        // Given a daemon with nothing reachable, and a wait for ra* with --verbose --json
        try startDaemon()
        try configureIPv4Link()
        let wait = try startWait(["--timeout", "20", "--interface", "eth9,ra*", "--verbose", "--json"])
        XCTAssertNil(wait.wait(timeout: .seconds(1)), "wait must block while nothing is reachable")

        // When
        try addIPv4DefaultRoute()

        // Then: one line on stderr, and the JSON's "waited" is the time it took
        XCTAssertEqual(wait.wait(timeout: .seconds(5)), .exited(0), output("wait.err"))
        let said = output("wait.err")
        XCTAssertTrue(said.hasPrefix("Online after ") && said.hasSuffix(" s via ra0 (reachable-via-ethernet).\n"), said)
        let object = try jsonObject(output("wait.out"))
        XCTAssertEqual(object["satisfied"] as? Bool, true)
        // (reachabilityctl's clock starts after its process does, a little after the test's 1 s)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(object["waited"] as? Double), 0.8, output("wait.out"))
        // and an interface set without ra0, or both families (IPv4 only here), are never online
        let elsewhere = try reachabilityctl(["wait", "--timeout", "1", "--interface", "eth*"])
        XCTAssertEqual(elsewhere.termination, .exited(Exit.timeout), elsewhere.standardError)
        XCTAssertTrue(elsewhere.standardError.contains("reachable-via-ethernet"), elsewhere.standardError)
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "1", "--ipv4", "--ipv6"]).termination, .exited(Exit.timeout))
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "5", "--ipv4", "--interface", "ra0"]).termination, .exited(0))
    }

    func testDNSWaitsForARoutedNameserverAndATimeoutNamesDNS() throws {
        // Given a reachable host whose resolv.conf names only a server the kernel does not route
        let resolvConf = try XCTUnwrap(directory).file("resolv.conf")
        try "search example.org\nnameserver 198.51.100.53\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
        try startDaemon(arguments: ["--resolv-conf", resolvConf])
        try configureIPv4Link()
        try netns.ip("route", "add", "unreachable", "198.51.100.53/32")
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When waiting with --dns: it times out, and says names were what was missing
        let timedOut = try reachabilityctl(["wait", "--dns", "--timeout", "1"])
        XCTAssertEqual(timedOut.termination, .exited(Exit.timeout), timedOut.standardError)
        XCTAssertTrue(
            timedOut.standardError.contains("waiting for names to resolve: DNS is unreachable, not reachable")
                && timedOut.standardError.contains("but no nameserver is routed"), timedOut.standardError
        )
        // and a wait under way ends once a routed server is configured
        let wait = try startWait(["--dns", "--timeout", "20"])
        XCTAssertNil(wait.wait(timeout: .seconds(1)), "wait --dns must block while no nameserver is routed")
        try "nameserver 10.77.0.1\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
        XCTAssertEqual(wait.wait(timeout: .seconds(10)), .exited(0), output("wait.err"))
        // and answering needs the check's lookups, which are off here
        let answering = try reachabilityctl(["wait", "--dns", "answering", "--timeout", "1"])
        XCTAssertEqual(answering.termination, .exited(Exit.timeout), answering.standardError)
        XCTAssertTrue(answering.standardError.contains("DNS is reachable, not answering"), answering.standardError)
        XCTAssertEqual(try reachabilityctl(["wait", "--dns=bogus"]).termination, .exited(64))
    }

    func testInterfaceAndTransportAreMatchedAgainstTheRequiredFamilysOwnLink() throws {
        // Given IPv4 by default via ra0 (ethernet) and IPv6 by default via rb0 (wifi, by the
        // configuration's Transport=), both reachable: the status names IPv4's link
        try writeConfiguration("[Reachability]\nTransport=rb0:wifi\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        let netns = try netns
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.addQuietVethPair("rb0", peer: "rb1")
        for link in ["rb0", "rb1"] { try netns.setIPv6(enabled: true, on: link) }
        for link in ["rb1", "rb0"] { try netns.ip("link", "set", link, "up") }
        try netns.ip("addr", "add", "2001:db8:78::2/64", "dev", "rb0", "nodad")
        try netns.ip("-6", "route", "add", "default", "via", "2001:db8:78::1", "dev", "rb0")
        try waitForProperties("IPv4 via ra0 and IPv6 via rb0") {
            $0.bool(.ipv4Reachable) == true && $0.bool(.ipv6Reachable) == true && $0.string(.interface) == "ra0"
        }

        // When / Then: each family is matched against its own link, the machine against the status's
        let rows: [(options: [String], exit: Int32, line: UInt)] = [
            (["--ipv6", "--interface", "rb0"], 0, #line),
            (["--ipv6", "--interface", "ra0"], Exit.timeout, #line),
            (["--ipv4", "--interface", "ra0"], 0, #line),
            (["--ipv4", "--interface", "rb0"], Exit.timeout, #line),
            (["--ipv4", "--ipv6", "--interface", "ra0,rb0"], 0, #line),
            (["--ipv4", "--ipv6", "--interface", "ra0"], Exit.timeout, #line),
            (["--interface", "ra0"], 0, #line),
            (["--interface", "rb0"], Exit.timeout, #line),
            (["--ipv6", "--transport", "wifi"], 0, #line),
            (["--ipv6", "--transport", "ethernet"], Exit.timeout, #line),
            (["--ipv4", "--transport", "ethernet"], 0, #line),
            (["--ipv4", "--ipv6", "--transport", "ethernet"], Exit.timeout, #line),
            (["--transport", "ethernet"], 0, #line),
        ]
        for row in rows {
            let result = try reachabilityctl(["wait", "--timeout", row.exit == 0 ? "10" : "1"] + row.options)
            XCTAssertEqual(result.termination, .exited(row.exit), "\(row.options): \(result.standardError)", line: row.line)
        }
        // and status --json says each family's link
        let status = try jsonObject(try reachabilityctl(["status", "--json"]).standardOutput)
        XCTAssertEqual(status["ipv4Interface"] as? String, "ra0", "\(status)")
        XCTAssertEqual(status["ipv6Interface"] as? String, "rb0", "\(status)")
        XCTAssertEqual(status["ipv4Transport"] as? String, "ethernet", "\(status)")
        XCTAssertEqual(status["ipv6Transport"] as? String, "wifi", "\(status)")
    }

    func testCarrierTimeoutGivesUpEarlyOnlyWhenNoLinkHasCarrier() throws {
        // Given a daemon in a namespace whose only links (ra0, ra1) are down
        try startDaemon()

        // When waiting up to 20 s with a 1 s give-up without carrier
        let start = ContinuousClock.now
        let gaveUp = try waitInNamespace(["--timeout", "20", "--carrier-timeout", "1"])

        // Then it gives up after about 1 s, saying why and where the daemon stood
        XCTAssertEqual(gaveUp.termination, .exited(Exit.timeout), gaveUp.standardError)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5))
        XCTAssertTrue(gaveUp.standardError.contains("no link that could lead out has had carrier for 1.0 s; not-reachable ("), gaveUp.standardError)

        // Given carrier on ra0 (no route), a cable to another namespace: the full timeout applies
        let peer = try TestNamespace(withVethPair: false)
        try netns.ip("link", "set", "ra1", "netns", peer.name)
        try peer.ip("link", "set", "ra1", "up")
        try netns.ip("addr", "add", "10.77.0.2/24", "dev", "ra0")
        try netns.ip("link", "set", "ra0", "up")
        try netns.waitForCarrier("ra0")
        let timedOut = try waitInNamespace(["--timeout", "2", "--carrier-timeout", "1"])
        XCTAssertEqual(timedOut.termination, .exited(Exit.timeout), timedOut.standardError)
        XCTAssertTrue(timedOut.standardError.contains("Timed out after 2.0 s: not-reachable ("), timedOut.standardError)
    }

    func testCarrierTimeoutCountsOnlyLinksThatCouldLeadOut() throws {
        // Given a daemon, and carrier only on links that lead nowhere but this namespace: a veth
        // pair with both ends here (ra0, ra1; no address, no route), and a container's veth end
        // (vethc1, ContainerInterfaces=veth*) whose peer is in the container's namespace
        try startDaemon()
        let netns = try netns
        for link in ["ra1", "ra0"] { try netns.ip("link", "set", link, "up") }
        let container = try TestNamespace(withVethPair: false)
        try netns.addQuietVethPair("vethc1", peer: "ceth1")
        try netns.ip("link", "set", "ceth1", "netns", container.name)
        try container.ip("link", "set", "ceth1", "up")
        try netns.ip("link", "set", "vethc1", "up")
        for link in ["ra0", "ra1", "vethc1"] { try netns.waitForCarrier(link) }

        // When waiting up to 20 s with a 1 s give-up without carrier
        let start = ContinuousClock.now
        let gaveUp = try waitInNamespace(["--timeout", "20", "--carrier-timeout", "1"])

        // Then it gives up after about 1 s
        XCTAssertEqual(gaveUp.termination, .exited(Exit.timeout), gaveUp.standardError)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(5), gaveUp.standardError)
        XCTAssertTrue(gaveUp.standardError.contains("Gave up after "), gaveUp.standardError)
    }

    func testSIGTERMSaysWhereTheWaitStoodThenEndsByTheSignal() throws {
        // Given a wait that cannot succeed
        try startDaemon()
        let wait = try startWait(["--timeout", "30"])
        XCTAssertNil(wait.wait(timeout: .seconds(1)))

        // When systemd stops it
        wait.send(SIGTERM)

        // Then
        XCTAssertEqual(wait.wait(timeout: .seconds(5)), .signalled(SIGTERM), output("wait.err"))
        let said = output("wait.err")
        XCTAssertTrue(said.hasPrefix("reachabilityctl: Stopped (SIGTERM) after ") && said.contains(" s: not-reachable ("), said)
        XCTAssertEqual(said.split(separator: "\n").count, 1, said)
    }

    func testConnectivityModeWaitsWhilePortalAndIsDoneWhenFull() throws {
        // Given a daemon whose check server redirects to its portal
        let router = try startDaemonBehindRouter(configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=1\n",
                                                 mode: "redirect")
        try waitForProperties("the daemon's portal") { $0.string(.connectivity) == Connectivity.portal.rawValue }
        let wait = try startWait(["--timeout", "30", "--connectivity", "full", "--verbose"])
        XCTAssertNil(wait.wait(timeout: .seconds(3)), "wait --connectivity full must block behind a portal")

        // When the portal lets the machine through
        try router.setMode("204")

        // Then
        XCTAssertEqual(wait.wait(timeout: .seconds(15)), .exited(0), output("wait.err"))
        XCTAssertTrue(output("wait.err").contains("via ra0"), output("wait.err"))
    }

    func testAHostTakesTheDaemonsConnectivityForTheFamilyThatReachesIt() throws {
        // Given a daemon whose check says full over ra0, which also reaches the host 10.77.0.1
        let router = try startDaemonBehindRouter(configuration: checkConfiguration())
        try waitForConnectivity(.full)

        // When / Then: a wait for the host with at least full connectivity is done at once
        let full = try reachabilityctl(["wait", "--host", "10.77.0.1", "--connectivity", "full", "--timeout", "10", "--json"])
        XCTAssertEqual(full.termination, .exited(0), full.standardError)
        XCTAssertEqual(try jsonObject(full.standardOutput)["connectivity"] as? String, "full", full.standardOutput)

        // Given a portal instead, then the host's connectivity is the portal too
        try router.setMode("redirect")
        try waitForConnectivity(.portal)
        let portal = try reachabilityctl(["wait", "--host", "10.77.0.1", "--connectivity", "full", "--timeout", "1", "--json"])
        XCTAssertEqual(portal.termination, .exited(Exit.timeout), portal.standardError)
        XCTAssertEqual(try jsonObject(portal.standardOutput)["connectivity"] as? String, "portal", portal.standardOutput)
    }
}
