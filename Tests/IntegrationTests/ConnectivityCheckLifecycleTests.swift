import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// When the active check runs again, what it forgets and what it refuses to do, against the
/// router namespace's servers (testbed/servers/connectivity-server.py): an endless body, a
/// captive-portal API that is no longer advertised (carrier lost, router gone) or arrives mid-check, a host without libcurl,
/// a gateway that answers again. Nothing leaves the two namespaces.
final class ConnectivityCheckLifecycleTests: DaemonTestCase {
    func testAnEndlessBodyIsReadOnlyUpToTheLimitAndJudgedAsOtherContent() throws {
        // Given a check server whose 200 body never ends, and 3 s per check
        let router = try startDaemonBehindRouter(
            configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=60\nCheckTimeoutSec=3\n", mode: "endless"
        )

        // Then the first bytes decide (other content: a portal) without waiting for the timeout,
        // and the server could send no more than the sockets' buffers hold
        try waitForConnectivity(.portal, portal: "")
        let sent = try Poll.until("the server's count of bytes sent", observe: {
            ((try? String(contentsOfFile: router.state.file("endless-bytes"), encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int($0) }
        }) { !$0.isEmpty }
        XCTAssertLessThan(sent[0], 16 << 20, "bytes the server sent before the check stopped reading")
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains(": HTTP 200 in "), explain)
        print("FIGURE: an endless 200 body: the check stopped after the server sent \(sent[0] >> 10) KiB (16 KiB kept)")
    }

    func testAnAPILearntFromARouterAdvertisementIsForgottenWhenTheLinkLosesCarrier() throws {
        // Given a network whose router advertised an API saying it is captive
        let router = try startBehindACaptiveRouter(routerLifetime: 0)

        // When ra0 loses carrier and gets it back on a network that advertises no API
        try router.namespace.ip("link", "set", "ra1", "down")
        try waitForStatus(.notReachable)
        try router.namespace.ip("link", "set", "ra1", "up")

        // Then the old API is gone: the check alone decides, Explain lists no API
        try waitForConnectivity(.full, portal: "")
        try assertExplainListsNoAPI()
    }

    func testAnAPIIsForgottenWhenTheRouterThatAdvertisedItStopsBeingARouter() throws {
        // Given a network whose default router advertised an API saying it is captive
        let router = try startBehindACaptiveRouter(routerLifetime: 1800)
        XCTAssertTrue(try netns.ip("-6", "route", "show", "default").contains("proto ra"), "the router is ra0's default router")

        // When it leaves while ra0 keeps its carrier: its last advertisement has lifetime 0 and no API
        try router.namespace.advertiseCaptivePortalAPI(nil, routerLifetime: 0, source: RouterNamespace.linkLocalAddress)

        // Then the kernel drops its default route and the daemon its API: the check alone decides
        try waitForConnectivity(.full, portal: "")
        XCTAssertEqual(try netns.ip("-6", "route", "show", "default"), "")
        try assertExplainListsNoAPI()
    }

    func testAnAPIAdvertisedWhileACheckIsInFlightIsAskedWhenTheCheckEnds() throws {
        // Given a check answering 204 after 1.5 s, every 60 s while full
        let router = try startDaemonBehindRouter(configuration: "", mode: "slow")
        try enableIPv6ForRouterAdvertisements()
        try writeConfiguration("[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=60\nCheckTimeoutSec=5\nCaptivePortalAPICAFile=\(router.caFile)\n")
        try XCTUnwrap(daemon).send(SIGHUP)

        // When the router advertises a captive API while that check is in flight
        try Poll.until("a check in flight", observe: { router.requests }) { $0.contains { $0.hasPrefix("GET /check ") } }
        try router.namespace.advertiseCaptivePortalAPI(RouterNamespace.captiveAPI)

        // Then the API is asked as soon as the check ends, not a CheckIntervalSec= later
        try waitForConnectivity(.portal, portal: "https://10.77.0.1:8443/portal")
    }

    func testWithoutLibcurlConnectivityIsUnknownAndTheCauseIsLoggedOnceUntilLibcurlIsInstalledAndReloaded() throws {
        // Given checks configured on a host where libcurl cannot be loaded
        let libraries = try Command.run("ldconfig", ["-p"]).check().standardOutput.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard let soname = fields.first, ["libcurl.so.4", "libcurl-gnutls.so.4"].contains(String(soname)), let path = fields.last else { return nil }
            return String(path)
        }
        XCTAssertFalse(libraries.isEmpty, "ldconfig lists no libcurl")
        let router = try startDaemonBehindRouter(configuration: checkConfiguration(), hiding: libraries)

        // When several check intervals pass
        try waitForStatus(.reachableViaEthernet)
        Thread.sleep(forTimeInterval: 3)  // an observation window: three intervals of 1 s

        // Then Connectivity is unknown (a fault of this host is no evidence about the network),
        // said once in the log and in Explain
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.unknown.rawValue)
        let log = try XCTUnwrap(daemon).log
        XCTAssertEqual(log.components(separatedBy: "Connectivity checks cannot run: libcurl could not be loaded").count - 1, 1, log)
        XCTAssertTrue(log.contains("Install libcurl4 and reload."), log)
        let explain = try busctl.explain()
        XCTAssertTrue(explain.contains("checks cannot run: libcurl could not be loaded"), explain)
        XCTAssertEqual(router.requests, [])

        // When libcurl is installed and the daemon reloaded, the configuration unchanged (as
        // the log line says to do)
        try XCTUnwrap(daemon).reveal(libraries)
        try XCTUnwrap(daemon).send(SIGHUP)

        // Then the check runs and says full, and Explain no longer blames libcurl
        try waitForConnectivity(.full)
        XCTAssertFalse(router.requests.isEmpty)
        let reloaded = try busctl.explain()
        XCTAssertFalse(reloaded.contains("checks cannot run"), reloaded)
    }

    func testAGatewayThatAnswersAgainIsCheckedAgainAtOnce() throws {
        // Given checks every 60 s while full
        let router = try startDaemonBehindRouter(configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=60\nCheckTimeoutSec=1\n")
        try waitForConnectivity(.full)
        let gatewayAddress = try linkAddress(of: "ra1", in: router.namespace)

        // When the gateway stops answering address resolution, checks start over (a reload)
        // and fail until they back off to 8 s
        try router.namespace.ip("link", "set", "ra1", "arp", "off")
        try netns.ip("neigh", "flush", "dev", "ra0")
        try netns.sysctl("net.ipv4.neigh.ra0.retrans_time_ms", "100")
        try writeConfiguration("[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=60\nCheckTimeoutSec=2\n")
        try XCTUnwrap(daemon).send(SIGHUP)
        try Poll.until("checks limited, the next one 8 s or more away", timeout: .seconds(60), observe: { try self.busctl.explain() }) { explain in
            explain.split(separator: "\n").contains { line in
                guard line.contains("check verdict: limited"), let range = line.range(of: "next check in ") else { return false }
                return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." }).map { $0 >= 8 } ?? false
            }
        }

        // and then answers again (an application's traffic resolved it)
        try router.namespace.ip("link", "set", "ra1", "arp", "on")
        let recovered = Monotonic.seconds()
        try netns.ip("neigh", "replace", "10.77.0.1", "lladdr", gatewayAddress, "dev", "ra0", "nud", "reachable")

        // Then a check runs at once and says full
        try waitForConnectivity(.full)
        XCTAssertLessThan(Monotonic.seconds() - recovered, 3, "full came only with the scheduled check")
    }

    /// Starts the daemon behind the router namespace, with the check on, and has ra1 advertise
    /// RFC 8910's API (saying captive) with `routerLifetime`; returns once that reads `portal`.
    private func startBehindACaptiveRouter(routerLifetime: UInt16) throws -> RouterNamespace {
        let router = try startDaemonBehindRouter(configuration: "")
        try enableIPv6ForRouterAdvertisements()
        try writeConfiguration(checkConfiguration("CaptivePortalAPICAFile=\(router.caFile)\n"))
        try XCTUnwrap(daemon).send(SIGHUP)
        try waitForConnectivity(.full)
        try router.namespace.advertiseCaptivePortalAPI(RouterNamespace.captiveAPI, routerLifetime: routerLifetime, source: RouterNamespace.linkLocalAddress)
        try waitForConnectivity(.portal, portal: "https://10.77.0.1:8443/portal")
        return router
    }

    /// Asserts that `Explain()` no longer lists the API the router advertised.
    private func assertExplainListsNoAPI(file: StaticString = #filePath, line: UInt = #line) throws {
        let explain = try busctl.explain()
        XCTAssertFalse(explain.contains("captive-portal API: \(RouterNamespace.captiveAPI)"), explain, file: file, line: line)
    }

    /// Gives ra0 and the router's ra1 IPv6 link-local addresses, for router advertisements.
    private func enableIPv6ForRouterAdvertisements() throws {
        try netns.setIPv6(enabled: true, on: "ra0")
        try netns.ip("addr", "add", "fe80::2/64", "dev", "ra0", "nodad")
    }

    /// The MAC address of `link` in `namespace`.
    private func linkAddress(of link: String, in namespace: TestNamespace) throws -> String {
        let output = try namespace.ip("link", "show", link)
        let fields = output.split(whereSeparator: \.isWhitespace)
        guard let index = fields.firstIndex(of: "link/ether"), index + 1 < fields.count else { throw HarnessError("no MAC address in: \(output)") }
        return String(fields[index + 1])
    }
}
