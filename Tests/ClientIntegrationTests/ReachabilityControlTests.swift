import Foundation
@testable import ReachabilityClient
import ReachabilityCore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `reachabilityctl` against the real daemon on a private bus, in a test namespace.
final class ReachabilityControlTests: DaemonTestCase {
    func testWaitReturnsZeroWhenADefaultRouteAppears() throws {
        // Given a daemon with nothing reachable, and a waiting reachabilityctl
        try startDaemon()
        try configureIPv4Link()
        let directory = try XCTUnwrap(directory)
        let wait = try ChildProcess(
            try ClientTestPaths.controlBinary(), ["wait", "--timeout", "20"], environment: try controlEnvironment(),
            standardOutput: directory.file("wait.out"), standardError: directory.file("wait.err")
        )
        XCTAssertNil(wait.wait(timeout: .milliseconds(500)), "wait must block while nothing is reachable")

        // When
        try addIPv4DefaultRoute()

        // Then
        let ended = wait.wait(timeout: .seconds(5))
        XCTAssertEqual(ended, .exited(0), (try? String(contentsOfFile: directory.file("wait.err"), encoding: .utf8)) ?? "")
    }

    func testWaitForATransportOrFamilyThatNeverComesTimesOut() throws {
        // Given an Ethernet default route over IPv4 only
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When / Then
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "5"]).termination, .exited(0))
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "5", "--transport", "ethernet", "--ipv4"]).termination, .exited(0))
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "5", "--host", "10.77.0.9"]).termination, .exited(0))
        let start = ContinuousClock.now
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "1", "--transport", "wifi"]).termination, .exited(Exit.timeout))
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(3))
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "1", "--ipv6"]).termination, .exited(Exit.timeout))
        // and --json prints the last state with whether the condition held
        let met = try reachabilityctl(["wait", "--timeout", "5", "--json"])
        XCTAssertEqual(try jsonObject(met.standardOutput)["satisfied"] as? Bool, true, met.standardOutput)
        XCTAssertEqual(try jsonObject(met.standardOutput)["status"] as? String, "reachable-via-ethernet")
        let missed = try reachabilityctl(["wait", "--timeout", "1", "--ipv6", "--json"])
        XCTAssertEqual(missed.termination, .exited(Exit.timeout))
        XCTAssertEqual(try jsonObject(missed.standardOutput)["satisfied"] as? Bool, false, missed.standardOutput)
    }

    func testUnmeteredWaitsForTheMeteredLinkToBeUnmeteredAndCheckAnswersAtOnceForExecCondition() throws {
        // Given ra0 carrying the default route, metered by the configuration
        try startReachableDaemon(configuration: "[Reachability]\nMetered=ra0:yes\n")
        let directory = try XCTUnwrap(directory)

        // Then check --unmetered says no at once (1: ExecCondition= skips), with why
        let metered = try reachabilityctl(["check", "--unmetered"])
        XCTAssertEqual(metered.termination, .exited(Exit.timeout), metered.standardError)
        XCTAssertEqual(metered.standardOutput, "Metered: ra0 (configuration).\n")
        // and a wait for an unmetered network times out saying so
        let timedOut = try reachabilityctl(["wait", "--unmetered", "--timeout", "1"])
        XCTAssertEqual(timedOut.termination, .exited(Exit.timeout))
        XCTAssertTrue(timedOut.standardError.contains("waiting for an unmetered network: ra0 is metered (configuration)"), timedOut.standardError)
        // and a host with --unmetered is a usage error
        XCTAssertEqual(try reachabilityctl(["check", "--unmetered", "10.77.0.9"]).termination, .exited(64))

        // When a wait for an unmetered network runs, and the configuration stops metering ra0
        let wait = try ChildProcess(
            try ClientTestPaths.controlBinary(), ["wait", "--unmetered", "--timeout", "20"], environment: try controlEnvironment(),
            standardOutput: directory.file("wait.out"), standardError: directory.file("wait.err")
        )
        XCTAssertNil(wait.wait(timeout: .milliseconds(500)), "wait --unmetered must block while the network is metered")
        try writeConfiguration("[Reachability]\n")
        try XCTUnwrap(daemon).send(SIGHUP)

        // Then the wait ends with 0, and check --unmetered says yes
        XCTAssertEqual(wait.wait(timeout: .seconds(5)), .exited(0), (try? String(contentsOfFile: directory.file("wait.err"), encoding: .utf8)) ?? "")
        XCTAssertEqual(try reachabilityctl(["check", "--unmetered"]).termination, .exited(0))
    }

    func testCheckUnmeteredIsNoWithoutARoute() throws {
        // Given no default route
        try startDaemon()
        try configureIPv4Link()
        try waitForStatus(.notReachable)

        // When, Then: not reachable is no unmetered network
        let result = try reachabilityctl(["check", "--unmetered"])
        XCTAssertEqual(result.termination, .exited(Exit.timeout))
        XCTAssertTrue(result.standardOutput.hasPrefix("Not reachable: "), result.standardOutput)
    }

    func testWaitTimesOutWithoutADefaultRoute() throws {
        // Given
        try startDaemon()

        // When
        let result = try reachabilityctl(["wait", "--timeout", "1"])

        // Then
        XCTAssertEqual(result.termination, .exited(Exit.timeout), result.standardError)
        XCTAssertTrue(result.standardError.contains("Timed out"), result.standardError)
    }

    func testWaitWithoutTheDaemonFailsWithItsOwnCode() throws {
        // Given a bus without the daemon
        // When
        let result = try reachabilityctl(["wait", "--timeout", "5"])

        // Then, said once
        XCTAssertEqual(result.termination, .exited(Exit.daemonAbsent), result.standardError)
        XCTAssertEqual(result.standardError.components(separatedBy: "not running").count, 2, result.standardError)
        XCTAssertEqual(try reachabilityctl(["status"]).termination, .exited(Exit.daemonAbsent))
        XCTAssertEqual(try reachabilityctl(["check", "10.77.0.9"]).termination, .exited(Exit.daemonAbsent))
        XCTAssertEqual(try reachabilityctl(["check", "no-such-host.invalid"]).termination, .exited(Exit.daemonAbsent))
        XCTAssertEqual(try reachabilityctl(["wait", "--host", "no-such-host.invalid"]).termination, .exited(Exit.daemonAbsent))
        XCTAssertEqual(try reachabilityctl(["explain"]).termination, .exited(Exit.daemonAbsent))
        XCTAssertEqual(try reachabilityctl(["metrics"]).termination, .exited(Exit.daemonAbsent))
    }

    func testExplainAndMetricsPrintTheDaemonsTexts() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When
        let result = try reachabilityctl(["explain"])

        // Then
        XCTAssertEqual(result.termination, .exited(0), result.standardError)
        XCTAssertTrue(result.standardOutput.contains("ra0"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("10.77.0.1"), result.standardOutput)
        // and as JSON, the same report under "report"
        let json = try reachabilityctl(["explain", "--json"])
        XCTAssertEqual(json.termination, .exited(0), json.standardError)
        XCTAssertTrue((try jsonObject(json.standardOutput)["report"] as? String)?.contains("10.77.0.1") == true, json.standardOutput)
        // and the daemon's Metrics(), in Prometheus' text format
        let metrics = try reachabilityctl(["metrics"])
        XCTAssertEqual(metrics.termination, .exited(0), metrics.standardError)
        XCTAssertTrue(metrics.standardOutput.contains(#"reachabilityd_status{status="reachable-via-ethernet"} 1"#), metrics.standardOutput)
        XCTAssertTrue(metrics.standardOutput.contains("# TYPE reachabilityd_status_transitions_total counter"), metrics.standardOutput)
    }

    func testStatusJSONParsesAndMatchesTheDaemon() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        let published = try waitForStatus(.reachableViaEthernet)

        // When
        let result = try reachabilityctl(["status", "--json"]).check()

        // Then
        let object = try jsonObject(result.standardOutput)
        XCTAssertEqual(object["status"] as? String, "reachable-via-ethernet")
        XCTAssertEqual(object["interface"] as? String, "ra0")
        XCTAssertEqual(object["transport"] as? String, "ethernet")
        XCTAssertEqual(object["reachable"] as? Bool, true)
        XCTAssertEqual(object["ipv4Reachable"] as? Bool, true)
        XCTAssertEqual(object["ipv6Reachable"] as? Bool, false)
        XCTAssertEqual(object["metered"] as? Bool, false)
        XCTAssertEqual(object["meteredReason"] as? String, "transport")
        XCTAssertEqual(object["networkID"] as? String, published.string(.networkID))
        XCTAssertEqual(object["reason"] as? String, published.string(.reason))
        XCTAssertEqual(object["description"] as? String, "Reachable via Ethernet")

        // And the text form names the same facts
        let text = try reachabilityctl(["status"]).check().standardOutput
        XCTAssertTrue(text.contains("reachable-via-ethernet"), text)
        XCTAssertTrue(text.contains("ra0"), text)
    }

    func testStatusListsTheInterfacesInTextAndJSON() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForProperties("ra0's gateway in Interfaces") { $0.interfaces.first { $0.name == "ra0" }?.gateways.isEmpty == false }

        // When
        let json = try jsonObject(try reachabilityctl(["status", "--json"]).check().standardOutput)
        let text = try reachabilityctl(["status"]).check().standardOutput

        // Then --json has one object per link, with the property's keys
        let interfaces = try XCTUnwrap(json["interfaces"] as? [[String: Any]], "\(json)")
        XCTAssertEqual(interfaces.compactMap { $0["name"] as? String }.sorted(), ["ra0", "ra1"])
        let ra0 = try XCTUnwrap(interfaces.first { $0["name"] as? String == "ra0" })
        XCTAssertEqual(ra0["transport"] as? String, "ethernet")
        XCTAssertEqual(ra0["operational"] as? String, "up")
        XCTAssertEqual(ra0["ipv4"] as? Bool, true)
        XCTAssertEqual(ra0["gateways"] as? [String], ["10.77.0.1"])
        XCTAssertEqual(ra0["ignored"] as? String, "")
        XCTAssertNotNil(ra0["index"] as? Int)

        // And the text lists them as networkctl list does: a header, then a row per link
        let lines = text.split(separator: "\n").map(String.init)
        let header = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("IDX LINK") }, text)
        let row = try XCTUnwrap(lines[header...].first { $0.contains(" ra0 ") }, text)
        XCTAssertEqual(row.split(separator: " ").map(String.init).dropFirst(), ["ra0", "ethernet", "up", "yes", "no", "no", "1500", "10.77.0.1", "-"], text)
    }

    func testCheckJSONParsesAndExitCodeFollowsReachability() throws {
        // Given an on-link network and no default route
        try startDaemon()
        try configureIPv4Link()
        try Poll.until("10.77.0.9 on-link", observe: { try busctl.checkAddress("10.77.0.9") }) {
            $0 == .reply(status: "reachable-via-ethernet", interface: "ra0")
        }

        // When
        let onLink = try reachabilityctl(["check", "10.77.0.9", "--json"])
        let elsewhere = try reachabilityctl(["check", "198.51.100.7", "--json"])

        // Then
        XCTAssertEqual(onLink.termination, .exited(0), onLink.standardError)
        let object = try jsonObject(onLink.standardOutput)
        XCTAssertEqual(object["host"] as? String, "10.77.0.9")
        XCTAssertEqual(object["status"] as? String, "reachable-via-ethernet")
        XCTAssertEqual(object["interface"] as? String, "ra0")
        XCTAssertEqual(elsewhere.termination, .exited(Exit.timeout), "not reachable exits 1")
        XCTAssertEqual(try jsonObject(elsewhere.standardOutput)["status"] as? String, "not-reachable")
    }

    func testCheckKeepsTheZoneOfALinkLocalAddress() throws {
        // Given link-local networks on both ra0 and ra1
        try startDaemon()
        try bringUpLinkLocalOnBothLinks()
        try Poll.until("fe80::99%ra1 through ra1", observe: { try busctl.checkAddress("fe80::99%ra1") }) {
            $0 == .reply(status: "reachable-via-ethernet", interface: "ra1")
        }

        // When
        let result = try reachabilityctl(["check", "fe80::99%ra1", "--json"])

        // Then the answer is for ra1, the link the zone names (not the first fe80::/64 route's)
        XCTAssertEqual(result.termination, .exited(0), result.standardError)
        let object = try jsonObject(result.standardOutput)
        XCTAssertEqual(object["host"] as? String, "fe80::99%ra1")
        XCTAssertEqual(object["interface"] as? String, "ra1")
    }

    func testCheckResolvesANameFromTheTestsHostsFileAndTheBestAddressWins() throws {
        // Given a hosts file naming one unreachable and one on-link address, seen only by
        // reachabilityctl (bind-mounted over /etc/hosts in a private mount namespace)
        try startDaemon()
        try configureIPv4Link()
        let directory = try XCTUnwrap(directory)
        let hosts = directory.file("hosts")
        try "198.51.100.7 reach-test.invalid\n10.77.0.9 reach-test.invalid\n".write(toFile: hosts, atomically: true, encoding: .utf8)
        let control = try ClientTestPaths.controlBinary()
        func check(_ host: String) throws -> CommandResult {
            try Command.run("unshare", [
                "--mount", "--propagation", "private", "sh", "-c",
                "mount --bind \"$0\" /etc/hosts && exec \"$1\" check \"$2\" --json", hosts, control, host,
            ], environment: try controlEnvironment())
        }

        // When
        let result = try Poll.until("reach-test.invalid reachable", observe: { try check("reach-test.invalid") }) {
            $0.termination == .exited(0)
        }

        // Then
        let object = try jsonObject(result.standardOutput)
        XCTAssertEqual(object["status"] as? String, "reachable-via-ethernet")
        XCTAssertEqual(object["interface"] as? String, "ra0")
        XCTAssertEqual(try check("no-such-name.invalid").termination, .exited(Exit.timeout))
    }

    /// A reachable namespace whose resolver is `stub` at 10.77.0.2 (`/etc/netns/NAME/resolv.conf`,
    /// glibc's default timeouts: 5 s per try, 2 tries), and a runner of `reachabilityctl` inside
    /// it (`ip netns exec` mounts the namespace's resolv.conf) that measures how long it took.
    private func startDaemonWithResolver(
        _ behaviour: StubResolver.Behaviour
    ) throws -> (resolver: StubResolver, run: ([String]) throws -> (result: CommandResult, took: Duration)) {
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let netns = try netns
        try netns.writeEtcFile("hosts", "127.0.0.1 localhost\n")
        try netns.writeEtcFile("resolv.conf", "nameserver 10.77.0.2\n")
        let resolver = try StubResolver(behaviour, address: "10.77.0.2", in: netns)
        let command = ["netns", "exec", netns.name, try ClientTestPaths.controlBinary()]
        let environment = try controlEnvironment()
        return (resolver, { arguments in
            let start = ContinuousClock.now
            let result = try Command.run("ip", command + arguments, environment: environment, timeout: .seconds(30))
            return (result, ContinuousClock.now - start)
        })
    }

    func testCheckAndWaitBlameAResolverThatDoesNotAnswerNotTheBus() throws {
        // Given a running daemon, a default route, and a resolver that never answers
        let (resolver, run) = try startDaemonWithResolver(.silent)
        defer { withExtendedLifetime(resolver) {} }

        // When
        let check = try run(["check", "no-such-host.invalid", "--answer-timeout", "2"])
        let json = try run(["check", "no-such-host.invalid", "--answer-timeout", "2", "--json"])
        let wait = try run(["wait", "--host", "no-such-host.invalid", "--timeout", "2"])
        let waitJSON = try run(["wait", "--host", "no-such-host.invalid", "--timeout", "2", "--json"])

        // Then each says the resolver did not answer, exits 1 (not reachable, not 69), in time
        for (name, outcome) in [("check", check), ("check --json", json), ("wait", wait), ("wait --json", waitJSON)] {
            XCTAssertEqual(outcome.result.termination, .exited(Exit.timeout), "\(name): \(outcome.result.standardError)")
            XCTAssertTrue(outcome.result.standardError.contains("could not resolve no-such-host.invalid: the resolver did not answer within "),
                          "\(name): \(outcome.result.standardError)")
            XCTAssertFalse(outcome.result.standardError.contains("system bus"), "\(name): \(outcome.result.standardError)")
            XCTAssertLessThan(outcome.took, .seconds(4), "\(name) must end soon after its 2 s")
        }
        for (name, outcome) in [("check --json", json), ("wait --json", waitJSON)] {
            let object = try jsonObject(outcome.result.standardOutput)
            XCTAssertEqual(object["host"] as? String, "no-such-host.invalid", name)
            XCTAssertEqual(object["status"] as? String, "not-reachable", name)
            XCTAssertEqual(object["resolution"] as? String, "no-answer", name)
            XCTAssertEqual(object["daemonAvailable"] as? Bool, true, name)
            XCTAssertTrue((object["reason"] as? String)?.contains("the resolver did not answer within") == true, "\(name): \(outcome.result.standardOutput)")
        }
    }

    func testCheckAndWaitSayTheResolversErrorForANameThatDoesNotExist() throws {
        // Given a resolver that answers NXDOMAIN
        let (resolver, run) = try startDaemonWithResolver(.nameError)
        defer { withExtendedLifetime(resolver) {} }

        // When
        let check = try run(["check", "no-such-host.invalid", "--json"])
        let wait = try run(["wait", "--host", "no-such-host.invalid", "--timeout", "2"])

        // Then gai_strerror's reason, exit 1
        XCTAssertEqual(check.result.termination, .exited(Exit.timeout), check.result.standardError)
        let object = try jsonObject(check.result.standardOutput)
        XCTAssertEqual(object["resolution"] as? String, "failed")
        XCTAssertEqual(object["reason"] as? String, "could not resolve no-such-host.invalid: Name or service not known")
        XCTAssertLessThan(check.took, .seconds(2), "an answer from the resolver is not waited out")
        XCTAssertEqual(wait.result.termination, .exited(Exit.timeout), wait.result.standardError)
        XCTAssertTrue(wait.result.standardError.contains("could not resolve no-such-host.invalid: Name or service not known"), wait.result.standardError)
    }

    func testWaitForANameNoticesTheNameResolvingWithoutARoutingChange() throws {
        // Given a wait for a name the resolver does not know yet (NXDOMAIN), no routing change to come
        let (resolver, _) = try startDaemonWithResolver(.nameError)
        defer { withExtendedLifetime(resolver) {} }
        let directory = try XCTUnwrap(directory)
        let wait = try ChildProcess("ip", ["netns", "exec", try netns.name, try ClientTestPaths.controlBinary(),
                                           "wait", "--host", "late-host.invalid", "--timeout", "20", "--verbose"],
                                    environment: try controlEnvironment(), standardError: directory.file("wait.err"))
        defer { _ = wait.terminate() }
        // (one lookup, A and AAAA, as it starts: the checks prompted by the daemon's first answers
        // reuse its failure; a third query without the retry would never come)
        try Poll.until("the wait's first lookup of late-host.invalid failed", observe: { resolver.queries }) { $0 >= 2 }

        // When the name comes to resolve (as when DNS comes up at boot)
        try netns.appendToEtcFile("hosts", "10.77.0.9 late-host.invalid")

        // Then the wait notices by itself, on its first retry (1 s), and succeeds
        XCTAssertEqual(wait.wait(timeout: .seconds(10)), .exited(0),
                       (try? String(contentsOfFile: directory.file("wait.err"), encoding: .utf8)) ?? "")
    }

    func testRoutingChurnDoesNotTurnAFailingNameIntoDNSTraffic() throws {
        // Given a wait for a name the resolver does not know (NXDOMAIN), its first lookup failed
        let (resolver, _) = try startDaemonWithResolver(.nameError)
        defer { withExtendedLifetime(resolver) {} }
        let directory = try XCTUnwrap(directory)
        let wait = try ChildProcess("ip", ["netns", "exec", try netns.name, try ClientTestPaths.controlBinary(),
                                           "wait", "--host", "churn-host.invalid", "--timeout", "60"],
                                    environment: try controlEnvironment(), standardError: directory.file("wait.err"))
        defer { _ = wait.terminate() }
        let queriesPerLookup = 2  // getaddrinfo asks for A and AAAA
        try Poll.until("the wait's first lookup failed", observe: { resolver.queries }) { $0 >= queriesPerLookup }
        let firstLookup = ContinuousClock.now
        let announcedBefore = try signals.routesChangedCount

        // When policy rules come and go for 5 s, each change announced with RoutesChanged (at
        // most one per 100 ms), each announcement a new check of the name
        var changes = 0
        while ContinuousClock.now - firstLookup < .seconds(5) {
            try netns.ip("rule", changes.isMultiple(of: 2) ? "add" : "del", "priority", "1000", "table", "1000")
            changes += 1
        }
        try waitUntilRoutingIsSettled()
        let window = ContinuousClock.now - firstLookup
        let queries = resolver.queries

        // Then the name was looked up no more often than its back-off allows (1 s after the
        // first failure, doubling), however many checks the churn prompted
        let announced = try signals.routesChangedCount - announcedBefore
        var lookupsAllowed = 1
        var nextLookup = RememberedResolution.failureReuse.delay(afterFailures: 1)
        while nextLookup <= window {
            lookupsAllowed += 1
            nextLookup += RememberedResolution.failureReuse.delay(afterFailures: lookupsAllowed)
        }
        print("FIGURE: \(changes) rule changes in \(window): \(announced) RoutesChanged, \(queries) DNS queries for a name that does not resolve (allowed: \(lookupsAllowed) lookups)")
        XCTAssertGreaterThanOrEqual(announced, 10, "the churn must prompt checks")
        XCTAssertNil(wait.poll(), "the wait must still be waiting")
        XCTAssertLessThanOrEqual(queries, (lookupsAllowed + 1) * queriesPerLookup, "one lookup may be in flight as the count is taken")
    }

    func testCheckOfANameExitsWithTheDaemonsCodeWhenTheDaemonDoesNotAnswer() throws {
        // Given a daemon that owns its name but does not answer (stopped), and a silent resolver
        let (resolver, run) = try startDaemonWithResolver(.silent)
        defer { withExtendedLifetime(resolver) {} }
        let daemon = try XCTUnwrap(daemon)
        kill(daemon.pid, SIGSTOP)
        defer { kill(daemon.pid, SIGCONT) }

        // When
        let check = try run(["check", "no-such-host.invalid", "--answer-timeout", "2"])

        // Then the bus is blamed, not the resolver (which was never asked)
        XCTAssertEqual(check.result.termination, .exited(Exit.daemonAbsent), check.result.standardError)
        XCTAssertTrue(check.result.standardError.contains("No answer from the system bus within 2.0 s"), check.result.standardError)
    }

    func testMonitorJSONPrintsOneParsableLinePerChange() throws {
        // Given
        try startDaemon()
        let directory = try XCTUnwrap(directory)
        let outputPath = directory.file("monitor.out")
        let monitor = try ChildProcess(
            try ClientTestPaths.controlBinary(), ["monitor", "--json"], environment: try controlEnvironment(),
            standardOutput: outputPath, standardError: directory.file("monitor.err")
        )
        func lines() -> [String] {
            ((try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        try Poll.until("the first line", observe: lines) { $0.count >= 1 }

        // When
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then
        let printed = try Poll.until("a reachable line", observe: lines) { $0.last?.contains("reachable-via-ethernet") == true }
        monitor.terminate()
        let objects = try printed.map(jsonObject)
        XCTAssertEqual(objects.first?["status"] as? String, "not-reachable")
        XCTAssertEqual(objects.last?["status"] as? String, "reachable-via-ethernet")
        XCTAssertTrue(objects.allSatisfy { $0["time"] is String })
    }

    func testMonitorPrintsAChangeOfTheInterfacesAloneInJSONButNoRepeatedTextLine() throws {
        // Given a reachable daemon, followed by a text monitor and a JSON one
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForProperties("ra0's gateway listed") { $0.interfaces.first { $0.name == "ra0" }?.gateways.isEmpty == false }
        let directory = try XCTUnwrap(directory)
        var monitors: [ChildProcess] = []
        defer { for monitor in monitors { _ = monitor.terminate() } }
        func lines(_ name: String) -> [String] {
            ((try? String(contentsOfFile: directory.file(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        for (name, arguments) in [("text.out", ["monitor"]), ("json.out", ["monitor", "--json"])] {
            monitors.append(try ChildProcess(
                try ClientTestPaths.controlBinary(), arguments, environment: try controlEnvironment(),
                standardOutput: directory.file(name), standardError: directory.file("\(name).err")
            ))
            try Poll.until("\(name): the first line", observe: { lines(name) }) { $0.count == 1 }
        }

        // When only a gateway is added (in another table), then the status changes
        try netns.ip("route", "add", "default", "via", "10.77.0.254", "dev", "ra0", "table", "100")
        try Poll.until("json.out: the gateway's line", observe: { lines("json.out") }) { $0.count == 2 }
        try netns.ip("route", "del", "default", "table", "main")
        try Poll.until("json.out: the status's line", observe: { lines("json.out") }) { $0.count == 3 }

        // Then the text monitor printed the status's change alone (the second line would repeat the first)
        let text = try Poll.until("text.out: the status's line", observe: { lines("text.out") }) { $0.count >= 2 }
        XCTAssertEqual(text.count, 2, "\(text)")
        XCTAssertTrue(text.last?.contains("not-reachable") == true, "\(text)")
        XCTAssertEqual(try (jsonObject(lines("json.out")[1])["interfaces"] as? [[String: Any]])?.first { $0["name"] as? String == "ra0" }?["gateways"] as? [String],
                       ["10.77.0.254", "10.77.0.1"])
    }

    func testTheCLIAndTheClientLibraryLinkNoFoundation() throws {
        // reachabilityctl links ReachabilityClient: had the library (or the CLI) imported
        // Foundation, or even FoundationEssentials, the binary would need it (and ICU with
        // Foundation). Its own parser, JSON writer and time format keep it out.
        let dynamic = try Command.run("readelf", ["-d", try ClientTestPaths.controlBinary()]).check().standardOutput
        let needed = dynamic.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        XCTAssertFalse(needed.isEmpty, dynamic)
        for library in ["Foundation", "ICU"] {
            XCTAssertFalse(needed.contains { $0.contains(library) }, "reachabilityctl needs \(library):\n\(needed.joined(separator: "\n"))")
        }
    }

    func testEverySubcommandHasHelp() throws {
        for arguments in [["--help"], ["status", "--help"], ["monitor", "--help"], ["wait", "--help"], ["check", "--help"], ["explain", "--help"], ["metrics", "--help"], ["check-connectivity", "--help"]] {
            let result = try Command.run(try ClientTestPaths.controlBinary(), arguments)
            XCTAssertEqual(result.termination, .exited(0), arguments.joined(separator: " "))
            XCTAssertTrue(result.standardOutput.contains("69"), "\(arguments): exit codes missing from --help")
        }
        // (node-problem answers by node-problem-detector's contract instead: 0, 1, 2)
        let nodeProblem = try Command.run(try ClientTestPaths.controlBinary(), ["node-problem", "--help"])
        XCTAssertEqual(nodeProblem.termination, .exited(0))
        XCTAssertTrue(nodeProblem.standardOutput.contains("exit 0 when the node is fine, 1 when it has the problem, 2 when"), nodeProblem.standardOutput)
        let rows: [(arguments: [String], says: String, line: UInt)] = [
            (["wait", "--carrier-timeout", "-1"], "The value '-1' is invalid for '--carrier-timeout <seconds>': give a number of seconds from 0 to 4294967295.", #line),
            (["wait", "--interface", ","], "Give at least one interface name or glob to '--interface'", #line),
            (["wait", "--timeout", "-1"], "The value '-1' is invalid for '--timeout <seconds>'", #line),
            (["wait", "--timeout", "1e19"], "The value '1e19' is invalid for '--timeout <seconds>'", #line),
            (["wait", "--carrier-timeout", "1e19"], "The value '1e19' is invalid for '--carrier-timeout <seconds>'", #line),
            (["status", "--answer-timeout", "1e19"], "The value '1e19' is invalid for '--answer-timeout <seconds>'", #line),
            (["explain", "--answer-timeout", "-1"], "The value '-1' is invalid for '--answer-timeout <seconds>'", #line),
            (["metrics", "--answer-timeout", "9e15"], "The value '9e15' is invalid for '--answer-timeout <seconds>'", #line),
            (["check-connectivity", "--answer-timeout", "-1"], "The value '-1' is invalid for '--answer-timeout <seconds>'", #line),
            (["check", "10.77.0.9", "--answer-timeout", "nan"], "The value 'nan' is invalid for '--answer-timeout <seconds>'", #line),
            (["check", ""], "Give a host name or an address", #line),
            (["node-problem"], "Missing expected argument '<condition>'.", #line),
            (["node-problem", "disk"], "Give the condition: network, dns, portal.", #line),
            (["bogus"], "Unknown subcommand 'bogus'; the subcommands are status, monitor, wait, check, explain, metrics, check-connectivity, node-problem.", #line),
        ]
        for row in rows {
            let usage = try Command.run(try ClientTestPaths.controlBinary(), row.arguments)
            XCTAssertEqual(usage.termination, .exited(64), "\(row.arguments): a usage error exits 64", line: row.line)
            XCTAssertTrue(usage.standardError.contains(row.says), usage.standardError, line: row.line)
        }
    }
}
