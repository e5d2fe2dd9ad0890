import Foundation
@testable import ReachabilityClient
import ReachabilityCore
import TestSupport
import XCTest

/// The client library and `reachabilityctl check` on an IPv6-only host behind a real NAT64
/// (``NAT64Testbed``): the prefix, the IPv4 access, and where to connect to an IPv4 literal.
final class NAT64ClientTests: DaemonTestCase {
    private static let synthesized = NAT64Prefix(NAT64Testbed.prefix)!.synthesizing(NAT64Testbed.server)!

    func testAnAddressesManagerSaysToConnectThroughNAT64AtTheSynthesizedAddress() throws {
        // Given an IPv6-only host behind tayga, which the router advertises
        let (router, nat64) = try startIPv6OnlyHostBehindNAT64()
        defer { nat64.forEach { _ = $0.terminate() } }
        try router.namespace.advertiseNAT64Prefix(NAT64Testbed.prefix, lifetime: 1800, routerLifetime: 1800, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("IPv4Access nat64") { $0.string(.ipv4Access) == "nat64" }

        // When a manager follows the IPv4-only server's literal
        let manager = try makeManager(.address("\(NAT64Testbed.server)"))
        manager.startMonitoring()
        defer { manager.stopMonitoring() }

        // Then it is reachable through NAT64 at the synthesized address, and says the machine's prefix and access
        try Poll.until("the manager through NAT64", observe: { manager.snapshot }) { $0.destinationPath == .nat64 }
        XCTAssertEqual(manager.status, .reachableViaEthernet)
        XCTAssertEqual(manager.destinationAddress, "\(Self.synthesized)")
        XCTAssertEqual(manager.nat64Prefix, NAT64Prefix(NAT64Testbed.prefix))
        XCTAssertEqual(manager.ipv4Access, .nat64)
    }

    func testCheckShowsWhereToConnectInTextAndJSON() throws {
        // Given an IPv6-only host behind tayga, which the router advertises
        let (router, nat64) = try startIPv6OnlyHostBehindNAT64()
        defer { nat64.forEach { _ = $0.terminate() } }
        try router.namespace.advertiseNAT64Prefix(NAT64Testbed.prefix, lifetime: 1800, routerLifetime: 1800, source: RouterNamespace.linkLocalAddress)
        try waitForProperties("IPv4Access nat64") { $0.string(.ipv4Access) == "nat64" }

        // When
        let text = try reachabilityctl(["check", "\(NAT64Testbed.server)"])
        let json = try reachabilityctl(["check", "\(NAT64Testbed.server)", "--json"])

        // Then
        XCTAssertEqual(text.termination, .exited(0), text.standardError)
        XCTAssertEqual(text.standardOutput, "10.99.0.1: reachable-via-ethernet (Reachable via Ethernet) via ra0, through NAT64 at \(Self.synthesized) (connect there)\n")
        XCTAssertEqual(json.termination, .exited(0), json.standardError)
        let record = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(record["via"] as? String, "nat64", json.standardOutput)
        XCTAssertEqual(record["address"] as? String, "\(Self.synthesized)")
        XCTAssertEqual(record["ipv4Access"] as? String, "nat64")
    }
}
