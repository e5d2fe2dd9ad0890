import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// Route churn that cannot change the answer costs nothing, while the routes that can are seen:
/// the kernel-side filter on the daemon's netlink socket (RTNetlink `NetlinkSocketFilter`).
final class RouteChurnTests: DaemonTestCase {
    func testTenThousandNonDefaultRoutesEmitNothingAndKeepTheStatus() throws {
        // Given a reachable daemon whose signals have settled
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        try assertStatusChanges([.reachableViaEthernet])
        let before = try settledProperties()
        let routesReadBefore = routeMessagesRead()
        let propertiesChangedBefore = try signals.propertiesChangedCount

        // When 10,000 host routes that do not contain 8.8.8.8 are added, then deleted
        let directory = try XCTUnwrap(directory)
        let prefixes = (0..<10_000).map { "100.64.\($0 >> 8).\($0 & 255)/32" }
        try prefixes.map { "route add \($0) dev ra0" }.joined(separator: "\n")
            .write(toFile: directory.file("add.batch"), atomically: true, encoding: .utf8)
        try prefixes.map { "route del \($0) dev ra0" }.joined(separator: "\n")
            .write(toFile: directory.file("del.batch"), atomically: true, encoding: .utf8)
        try netns.ip("-batch", directory.file("add.batch"))
        XCTAssertEqual(try busctl.properties().values, before.values, "the published properties changed with 10,000 added routes")
        try netns.ip("-batch", directory.file("del.batch"))

        // And a real change as a fence: once the daemon reports it, it has read everything before it
        try netns.ip("route", "del", "default")
        try waitForStatus(.notReachable)

        // Then the only signals after the first StatusChanged are the fence's
        try assertStatusChanges([.reachableViaEthernet, .notReachable])
        // (PropertiesChanged follows StatusChanged: awaited at the monitor too)
        let changes = try signals.waitForPropertiesChanged("the fence's PropertiesChanged") { $0.count > propertiesChangedBefore }
            .dropFirst(propertiesChangedBefore)
        XCTAssertEqual(changes.count, 1, "PropertiesChanged after the routes: \(Array(changes))")
        XCTAssertEqual(changes.first?.changed["Status"]?.value, .string(ReachabilityStatus.notReachable.rawValue))
        // and the kernel never delivered the 20,000 route messages: only the fence's default route
        let routesRead = routeMessagesRead() - routesReadBefore
        XCTAssertLessThanOrEqual(routesRead, 5, "the daemon read \(routesRead) route messages; the socket filter should drop them")
    }

    func testOneUserWithTwoConnectionsCannotTurnTheFilterOff() throws {
        // Given one unprivileged user holding two connections that watch 18 addresses in all
        // (9 each: more than its share, 8 per family)
        try assertUnrelatedChurnIsFiltered(watching: (1...2).map { connection in
            (user: "nobody", addresses: (1...9).map { "10.9.\(connection).\($0)" })
        }, "one user with 2 connections watching 18 addresses")
    }

    func testTwoUsersAndARootServiceCannotTurnTheFilterOff() throws {
        // Given two unprivileged users at their 8 watches each and a root service with one more:
        // 17 watched addresses, one more than the filter lists one by one
        try assertUnrelatedChurnIsFiltered(watching: [
            (user: "nobody", addresses: (1...8).map { "10.9.1.\($0)" }),
            (user: "daemon", addresses: (1...8).map { "10.9.2.\($0)" }),
            (user: nil, addresses: ["10.9.3.1"]),
        ], "two users at 8 watches each and root at 1")
    }

    /// Starts a reachable daemon, lets each caller (a user, nil for root) hold a connection that
    /// watches its addresses, then adds and deletes 10,000 host routes in another table that
    /// contain none of them: the kernel filter must drop them (at most 5 route messages read).
    private func assertUnrelatedChurnIsFiltered(watching callers: [(user: String?, addresses: [String])], _ figure: String) throws {
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let holders = try callers.map { try holdCheckAddress($0.addresses, as: $0.user).caller }
        defer { for holder in holders { _ = holder.terminate() } }
        try waitUntilRoutingIsSettled()
        let routesReadBefore = routeMessagesRead()
        let cpuBefore = try XCTUnwrap(FaultInjection.cpuTime(of: try XCTUnwrap(daemon).pid))

        // When 10,000 host routes in another table, containing none of them, come and go
        let directory = try XCTUnwrap(directory)
        let prefixes = (0..<10_000).map { "100.64.\($0 >> 8).\($0 & 255)/32" }
        try (prefixes.map { "route add \($0) dev ra0 table 100" } + prefixes.map { "route del \($0) dev ra0 table 100" })
            .joined(separator: "\n").write(toFile: directory.file("churn.batch"), atomically: true, encoding: .utf8)
        try netns.ip("-batch", directory.file("churn.batch"))
        try netns.ip("route", "del", "default")  // a fence: once reported, everything before it was read
        try waitForStatus(.notReachable)

        // Then the kernel filter still dropped them, and the daemon spent next to no CPU on the churn
        let routesRead = routeMessagesRead() - routesReadBefore
        let cpu = try XCTUnwrap(FaultInjection.cpuTime(of: try XCTUnwrap(daemon).pid)) - cpuBefore
        XCTAssertLessThanOrEqual(routesRead, 5, "the daemon read \(routesRead) route messages; the socket filter should drop them")
        print("FIGURE: \(figure): 20,000 unrelated route changes, \(routesRead) read, daemon CPU \(cpu)")
    }

    func testHalfDefaultRoutesOfAVPNAreSeen() throws {
        // Given a default route over ra0, and ra1 with an address of its own
        try startWithDefaultRouteOverRa0AndAnAddressOnRa1()

        // When a VPN client overrides the default route with the pair 0.0.0.0/1 + 128.0.0.0/1
        try netns.ip("route", "add", "0.0.0.0/1", "via", "10.78.0.1", "dev", "ra1")
        try netns.ip("route", "add", "128.0.0.0/1", "via", "10.78.0.1", "dev", "ra1")

        // Then the route to 8.8.8.8 leaves through ra1
        try waitForProperties("Interface ra1") { $0.string(.interface) == "ra1" }

        // When the half-default route is removed, ra0 carries it again
        try netns.ip("route", "del", "0.0.0.0/1")
        try waitForProperties("Interface ra0 again") { $0.string(.interface) == "ra0" }
    }

    func testAMoreSpecificRouteToTheProbeIsSeen() throws {
        // Given
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)

        // When a /24 containing 8.8.8.8 becomes unreachable
        try netns.ip("route", "add", "unreachable", "8.8.8.0/24")

        // Then
        try waitForStatus(.notReachable)

        // When it goes away
        try netns.ip("route", "del", "unreachable", "8.8.8.0/24")

        // Then
        try waitForStatus(.reachableViaEthernet)
    }

    func testIPv6RoutesAreFilteredByPrefixToo() throws {
        // Given IPv6 reachable through a default route
        try startDaemon()
        try configureIPv6Default()
        try waitForProperties("IPv6Reachable true") { $0.bool(.ipv6Reachable) == true }
        let routesReadBefore = routeMessagesRead()

        // When 1,000 /64 routes outside 2001:4860::/32 are added
        let batch = try XCTUnwrap(directory).file("ipv6.batch")
        try (0..<1_000).map { "route add 2001:db8:1:\(String($0, radix: 16))::/64 dev ra0" }.joined(separator: "\n")
            .write(toFile: batch, atomically: true, encoding: .utf8)
        try netns.ip("-batch", batch)
        // and then an unreachable /32 containing the IPv6 probe
        try netns.ip("-6", "route", "add", "unreachable", "2001:4860::/32")

        // Then the covering route is seen, and none of the others reached the daemon
        try waitForProperties("IPv6Reachable false") { $0.bool(.ipv6Reachable) == false }
        let routesRead = routeMessagesRead() - routesReadBefore
        XCTAssertLessThanOrEqual(routesRead, 3, "the daemon read \(routesRead) route messages; the socket filter should drop the /64s")
    }

    func testARouteToAnAddressAskedAboutIsAnnouncedWhileOtherRoutesStayFiltered() throws {
        // Given a reachable daemon, ra1 with an address of its own, and signals settled
        try startWithDefaultRouteOverRa0AndAnAddressOnRa1()
        let viaRa0 = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra0")
        try Poll.until("CheckAddress(10.9.1.1) through ra0", observe: { try busctl.checkAddress("10.9.1.1") }) { $0 == viaRa0 }
        // (a caller that stays connected: its watch lasts as long as its connection)
        let (watcher, _) = try holdCheckAddress(["10.9.1.1"])
        defer { _ = watcher.terminate() }
        try waitUntilRoutingIsSettled()
        let routesChangedBefore = try signals.routesChangedCount
        let propertiesChangedBefore = try signals.propertiesChangedCount
        let routesReadBefore = routeMessagesRead()

        // When 10,000 host routes containing neither 10.9.1.1 nor a probe are added
        let batch = try XCTUnwrap(directory).file("unrelated.batch")
        try (0..<10_000).map { "route add 100.64.\($0 >> 8).\($0 & 255)/32 dev ra0" }.joined(separator: "\n")
            .write(toFile: batch, atomically: true, encoding: .utf8)
        try netns.ip("-batch", batch)
        // and then only a route for the prefix containing 10.9.1.1 (no link or address change)
        try netns.ip("route", "add", "10.9.0.0/16", "via", "10.78.0.1", "dev", "ra1")

        // Then exactly one RoutesChanged comes, for that route, and the answer follows it
        try signals.waitForRoutesChanged(count: routesChangedBefore + 1)
        let viaRa1 = CheckAddressReply.reply(status: ReachabilityStatus.reachableViaEthernet.rawValue, interface: "ra1")
        XCTAssertEqual(try busctl.checkAddress("10.9.1.1"), viaRa1)
        // (an observation window, not a wait: a second signal, if one were due, would come by then)
        Thread.sleep(forTimeInterval: Double(BusContract.routesChangedIntervalMilliseconds) * 3 / 1000)
        XCTAssertEqual(try signals.routesChangedCount, routesChangedBefore + 1)
        // and the status did not move, and the daemon read the watched route, not the 10,000
        XCTAssertEqual(try signals.propertiesChangedCount, propertiesChangedBefore)
        let routesRead = routeMessagesRead() - routesReadBefore
        XCTAssertGreaterThanOrEqual(routesRead, 1)
        XCTAssertLessThanOrEqual(routesRead, 3, "the daemon read \(routesRead) route messages; the socket filter should drop the 10,000")

        // When the route goes, the answer goes back
        try netns.ip("route", "del", "10.9.0.0/16")
        try signals.waitForRoutesChanged(count: routesChangedBefore + 2)
        XCTAssertEqual(try busctl.checkAddress("10.9.1.1"), viaRa0)
    }

    /// Starts the daemon with a default route over ra0 and 10.78.0.2/24 on ra1, and waits until
    /// it publishes ra0.
    private func startWithDefaultRouteOverRa0AndAnAddressOnRa1() throws {
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("addr", "add", "10.78.0.2/24", "dev", "ra1")
        try waitForProperties("Interface ra0") { $0.string(.interface) == "ra0" }
    }
}
