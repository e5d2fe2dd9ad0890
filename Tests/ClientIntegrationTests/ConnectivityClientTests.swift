import Foundation
import ReachabilityCore
import ReachabilityNotifications
@testable import ReachabilityClient
import TestSupport
import XCTest

/// Connectivity through the client library and the CLI: a default gateway that fails address
/// resolution makes the machine `limited` (all traffic stays in the test's namespace).
final class ConnectivityClientTests: DaemonTestCase {
    func testConnectivityUpdatesAndHandlerGiveTheCurrentValueThenEachChangeOnce() throws {
        // Given a routed daemon and a manager following its connectivity
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let manager = try makeManager()
        let delivered = Collected<Connectivity>()
        let handled = Collected<Connectivity>()
        manager.setConnectivityChangeHandler(queue: DispatchQueue(label: "ConnectivityClientTests.handler")) { handled.append($0) }
        manager.startMonitoring()
        let task = Task { for await connectivity in manager.connectivityUpdates { delivered.append(connectivity) } }
        defer { task.cancel() }
        try waitForDeliveries(delivered, [.unknown])

        // When the gateway fails address resolution, then answers again
        try resolveNeighbour(toward: "203.0.113.7", neighbour: "10.77.0.1", until: "FAILED")
        try waitForDeliveries(delivered, [.unknown, .limited])
        XCTAssertEqual(manager.connectivity, .limited)
        XCTAssertEqual(manager.status, .reachableViaEthernet)
        XCTAssertNil(manager.captivePortalURL)
        try netns.ip("neigh", "replace", "10.77.0.1", "lladdr", "02:00:00:00:77:01", "dev", "ra0", "nud", "reachable")

        // Then
        try waitForDeliveries(delivered, [.unknown, .limited, .unknown])
        try waitForDeliveries(handled, [.unknown, .limited, .unknown])
        manager.stopMonitoring()
    }

    func testWaitForConnectivityWaitsForTheLevelAsked() throws {
        // Given a routed daemon whose gateway failed address resolution
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try resolveNeighbour(toward: "203.0.113.7", neighbour: "10.77.0.1", until: "FAILED")
        try waitForProperties("connectivity limited") { $0.string(.connectivity) == Connectivity.limited.rawValue }

        // When / Then: limited is there, full never comes (no check is configured)
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "5", "--connectivity", "limited"]).termination, .exited(0))
        XCTAssertEqual(try reachabilityctl(["wait", "--timeout", "1", "--connectivity", "full"]).termination, .exited(Exit.timeout))
        let usage = try reachabilityctl(["wait", "--connectivity", "online"])
        XCTAssertEqual(usage.termination, .exited(64), usage.standardError)
    }

    func testTheCheckReachesTheClientAndTheCLIWithThePortal() throws {
        // Given a daemon checking against the router's server, which answers 204
        let router = try startDaemonBehindRouter(configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=1\n")

        // When / Then: wait --connectivity full returns once the check says so
        let waited = try reachabilityctl(["wait", "--timeout", "20", "--connectivity", "full"])
        XCTAssertEqual(waited.termination, .exited(0), waited.standardError)
        let manager = try makeManager()
        let delivered = Collected<Connectivity>()
        let posted = Collected<String>()
        let observer = NotificationCenter.default.addObserver(
            forName: ReachabilityManager.connectivityDidChangeNotification, object: manager, queue: nil
        ) { notification in
            guard let connectivity = notification.userInfo?[ReachabilityManager.connectivityUserInfoKey] as? Connectivity else { return }
            let portal = notification.userInfo?[ReachabilityManager.captivePortalUserInfoKey] as? String
            posted.append(connectivity.rawValue + (portal.map { " \($0)" } ?? ""))
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        manager.startMonitoring()
        let task = Task { for await connectivity in manager.connectivityUpdates { delivered.append(connectivity) } }
        defer { task.cancel() }
        try waitForDeliveries(delivered, [.full])

        // When the network starts redirecting to its portal
        try router.setMode("redirect")

        // Then the client has the portal and its URL, and the CLI shows both
        try waitForDeliveries(delivered, [.full, .portal])
        XCTAssertEqual(manager.captivePortalURL?.description, "http://10.77.0.1:8080/portal")
        try waitForDeliveries(posted, ["full", "portal http://10.77.0.1:8080/portal"])
        let status = try reachabilityctl(["status"])
        XCTAssertTrue(status.standardOutput.contains("Online: portal"), status.standardOutput)
        XCTAssertTrue(status.standardOutput.contains("portal: http://10.77.0.1:8080/portal"), status.standardOutput)
        let json = try reachabilityctl(["status", "--json"])
        XCTAssertTrue(json.standardOutput.contains(#""captivePortal":"http:\/\/10.77.0.1:8080\/portal""#)
            || json.standardOutput.contains(#""captivePortal":"http://10.77.0.1:8080/portal""#), json.standardOutput)
        manager.stopMonitoring()
    }

    func testTheCaptivePortalSessionReachesTheClientAndTheCLI() throws {
        // Given a check and the network's API (trusted through the test CA) describing an hour's session
        let router = try startDaemonBehindSessionRouter(sessionSeconds: 3600)
        let manager = try makeManager()
        manager.startMonitoring()

        // When the router advertises the API
        try router.namespace.advertiseCaptivePortalAPI(RouterNamespace.sessionAPI)

        // Then the client has the session as published
        let published = try waitForProperties("a captive-portal session") { $0.captivePortalSession.secondsRemaining != nil }.captivePortalSession
        try Poll.until("the client's session") { manager.captivePortalSession == published }
        XCTAssertEqual(published.bytesRemaining, 1_000_000)
        XCTAssertEqual(published.venueInfoURL, "https://10.77.0.1:8443/venue")
        XCTAssertEqual(published.canExtendSession, true)
        // and the CLI shows it, in words and in JSON
        let text = try reachabilityctl(["status"]).check().standardOutput
        XCTAssertTrue(text.contains("Session: seconds-remaining "), text)
        XCTAssertTrue(text.contains(", bytes-remaining 1000000, venue-info-url https://10.77.0.1:8443/venue, can-extend-session yes"), text)
        let json = try jsonObject(try reachabilityctl(["status", "--json"]).check().standardOutput)
        let session = try XCTUnwrap(json["captivePortalSession"] as? [String: Any], "\(json)")
        XCTAssertEqual(session["bytes-remaining"] as? Int, 1_000_000)
        XCTAssertEqual(session["can-extend-session"] as? Bool, true)
        XCTAssertEqual(Set(session.keys), ["seconds-remaining", "bytes-remaining", "venue-info-url", "can-extend-session"])
        manager.stopMonitoring()
    }

    func testCheckConnectivityChecksNowOncePerUserWithinTenSeconds() throws {
        // Given full, the next scheduled check an hour away
        let router = try startDaemonBehindRouter(configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=3600\n")
        try waitForConnectivity(.full)
        let before = router.requests.count

        // When root asks for a check, then the network starts redirecting and root asks again
        let first = try reachabilityctl(["check-connectivity", "--json"])
        try router.setMode("redirect")
        let again = try reachabilityctl(["check-connectivity"])

        // Then the first ran a check; the second, inside root's 10 s, got its result and sent nothing
        XCTAssertEqual(first.termination, .exited(0), first.standardError)
        XCTAssertEqual(first.standardOutput, #"{"connectivity":"full"}"# + "\n")
        XCTAssertEqual(again.termination, .exited(0), again.standardError)
        XCTAssertEqual(again.standardOutput, "full\n")
        XCTAssertEqual(router.requests.count, before + 1, "\(router.requests)")

        // When another user asks
        let directory = try XCTUnwrap(directory)
        if chmod(directory.path, 0o755) != 0 { throw HarnessError("chmod \(directory.path) failed") }
        let nobody = try Command.run(
            "setpriv", try Self.setprivArguments(user: "nobody") + [try ClientTestPaths.controlBinary(), "check-connectivity"],
            environment: try controlEnvironment(), timeout: .seconds(15)
        )

        // Then its own check finds the portal: printed, exit status 1 (not full)
        XCTAssertEqual(nobody.termination, .exited(1), nobody.standardError)
        XCTAssertEqual(nobody.standardOutput, "portal\n")
        XCTAssertEqual(router.requests.count, before + 2, "\(router.requests)")
        XCTAssertEqual(try busctl.properties().string(.connectivity), Connectivity.portal.rawValue)
    }

    func testTheInProcessSourceChecksWithTheSameConfiguration() throws {
        // Given the router's server answering with a redirection, and a configuration checking it
        let router = try startDaemonBehindRouter(configuration: "[Connectivity]\nCheckURL=\(RouterNamespace.checkURL)\nCheckIntervalSec=1\n", mode: "redirect")
        try waitForProperties("the daemon's portal") { $0.string(.connectivity) == Connectivity.portal.rawValue }

        // When reachabilityctl runs the engine in-process in the same namespace, with that file
        var environment = try controlEnvironment()
        environment["REACHABILITYD_CONFIG"] = try configurationPath
        let result = try Command.run(
            "ip", ["netns", "exec", try netns.name, try ClientTestPaths.controlBinary(), "wait", "--source", "in-process",
                   "--connectivity", "portal", "--timeout", "20", "--json"],
            environment: environment, timeout: .seconds(30)
        )

        // Then it checked too, and got the same portal
        XCTAssertEqual(result.termination, .exited(0), result.standardError)
        XCTAssertTrue(result.standardOutput.contains("10.77.0.1:8080") && result.standardOutput.contains(#""connectivity":"portal""#), result.standardOutput)
        XCTAssertGreaterThanOrEqual(router.requests.count, 2, "the daemon's check and the in-process one")
    }
}
