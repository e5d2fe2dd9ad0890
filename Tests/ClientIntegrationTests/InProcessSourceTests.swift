import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The in-process source (`--source in-process|automatic`, through reachabilityctl run inside
/// the test namespace) gives the answers the daemon gives on the same namespace.
final class InProcessSourceTests: DaemonTestCase {
    /// Runs `reachabilityctl ARGUMENTS… --json` inside the test namespace and parses its output.
    private func inNamespace(_ arguments: [String]) throws -> (CommandResult, [String: Any]) {
        let result = try Command.run(
            "ip", ["netns", "exec", try netns.name, try ClientTestPaths.controlBinary()] + arguments + ["--json"],
            environment: try controlEnvironment()
        )
        return (result, try jsonObject(result.standardOutput))
    }

    /// Asserts that the in-process answer equals the daemon's published properties.
    private func assertInProcessMatchesDaemon(_ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let published = try busctl.properties()
        let (result, object) = try inNamespace(["status", "--source", "in-process"])
        XCTAssertEqual(result.termination, .exited(0), result.standardError, file: file, line: line)
        XCTAssertEqual(object["status"] as? String, published.status, what, file: file, line: line)
        XCTAssertEqual(object["interface"] as? String, published.string(.interface), what, file: file, line: line)
        XCTAssertEqual(object["transport"] as? String, published.string(.transport), what, file: file, line: line)
        XCTAssertEqual(object["ipv4Reachable"] as? Bool, published.bool(.ipv4Reachable), what, file: file, line: line)
        XCTAssertEqual(object["ipv6Reachable"] as? Bool, published.bool(.ipv6Reachable), what, file: file, line: line)
        XCTAssertEqual(object["reason"] as? String, published.string(.reason), what, file: file, line: line)
        XCTAssertEqual(object["dns"] as? String, published.string(.dns), what, file: file, line: line)
        XCTAssertEqual(object["daemonAvailable"] as? Bool, false, "in-process never asks the daemon", file: file, line: line)
    }

    func testInProcessAnswersLikeTheDaemon() throws {
        // Given / When / Then, step by step
        try startDaemon()
        try waitForStatus(.notReachable)
        try assertInProcessMatchesDaemon("no route")

        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        try assertInProcessMatchesDaemon("IPv4 default route")

        try netns.ip("route", "del", "default")
        try configureIPv6Default()
        try waitForProperties("IPv6 only") { $0.bool(.ipv6Reachable) == true && $0.bool(.ipv4Reachable) == false }
        try assertInProcessMatchesDaemon("IPv6 default route")
    }

    func testInProcessDampsFlapsLikeTheDaemonUnderTheSameConfiguration() throws {
        // Given the daemon and an in-process monitor (in the namespace), both with DownDelaySec=2
        let configuration = try startReachableDaemon(configuration: "[Reachability]\nDownDelaySec=2\n")
        var environment = try controlEnvironment()
        environment["REACHABILITYD_CONFIG"] = configuration
        let monitor = try MonitorSubprocess(
            environment: environment, directory: try XCTUnwrap(directory), options: ["--source", "in-process"], namespace: try netns.name
        )
        try monitor.waitForLastLine("reachable-via-ethernet") { $0.status == "reachable-via-ethernet" }

        // When the default route is gone for half a second (a flap: held, then dropped)
        try netns.ip("route", "del", "default")
        Thread.sleep(forTimeInterval: 0.5)
        try addIPv4DefaultRoute()
        // and then for good
        try netns.ip("route", "del", "default")
        let lost = ContinuousClock.now

        // Then both publish one loss, no sooner than DownDelaySec= after it
        try waitForStatus(.notReachable)
        try monitor.waitForLastLine("not-reachable") { $0.status == "not-reachable" }
        try assertStatusChanges([.reachableViaEthernet, .notReachable])
        XCTAssertEqual(monitor.reports.all.map(\.status), [ReachabilityStatus.reachableViaEthernet.rawValue, ReachabilityStatus.notReachable.rawValue],
                       "the in-process monitor's lines")
        let monitorLoss = try XCTUnwrap(monitor.reports.all.last).time
        XCTAssertGreaterThanOrEqual(monitorLoss - lost, .milliseconds(1900), "the in-process loss was held")
    }

    func testInProcessCheckAnswersLikeCheckAddress() throws {
        // Given an on-link network and no default route
        try startDaemon()
        try configureIPv4Link()
        try Poll.until("10.77.0.9 on-link", observe: { try busctl.checkAddress("10.77.0.9") }) {
            $0 == .reply(status: "reachable-via-ethernet", interface: "ra0")
        }

        // When / Then: on-link, unrouted, and this host's own addresses (over lo)
        XCTAssertEqual(try busctl.checkAddress("10.77.0.2"), .reply(status: "reachable-via-other", interface: "lo"))
        for address in ["10.77.0.9", "198.51.100.7", "127.0.0.1", "::1", "10.77.0.2"] {
            guard case .reply(let status, let interface) = try busctl.checkAddress(address) else {
                return XCTFail("CheckAddress(\(address)) failed")
            }
            let (_, object) = try inNamespace(["check", address, "--source", "in-process"])
            XCTAssertEqual(object["status"] as? String, status, address)
            XCTAssertEqual(object["interface"] as? String, interface, address)
        }
    }

    func testAutomaticUsesTheDaemonWhenItRunsElseTheEngine() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When / Then: the daemon answers
        let (withDaemon, fromDaemon) = try inNamespace(["status", "--source", "automatic"])
        XCTAssertEqual(withDaemon.termination, .exited(0), withDaemon.standardError)
        XCTAssertEqual(fromDaemon["daemonAvailable"] as? Bool, true)
        XCTAssertEqual(fromDaemon["status"] as? String, "reachable-via-ethernet")

        // When the daemon is gone / Then the engine answers the same
        XCTAssertEqual(try XCTUnwrap(daemon).stop(), .exited(0))
        let (withoutDaemon, inProcess) = try inNamespace(["status", "--source", "automatic"])
        XCTAssertEqual(withoutDaemon.termination, .exited(0), withoutDaemon.standardError)
        XCTAssertEqual(inProcess["daemonAvailable"] as? Bool, false)
        XCTAssertEqual(inProcess["status"] as? String, "reachable-via-ethernet")
        XCTAssertEqual(inProcess["interface"] as? String, "ra0")
        try startDaemon()  // tear-down expects a running daemon
    }
}
