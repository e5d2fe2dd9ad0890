import ReachabilityCore
import XCTest

/// `DownDelaySec=`: only a loss of reachability, or of connectivity alone, is held.
final class FlapDampingRuleTests: XCTestCase {
    func testThatAConnectivityDropAloneIsHeldLikeALoss() {
        // Given
        let unknown = ReachabilitySnapshot(status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: false,
                                           interface: "eth0", transport: .ethernet, isMetered: false, reason: "r")
        var limited = unknown
        limited.ipv4Evidence = .limited
        var limitedElsewhere = limited
        limitedElsewhere.interface = "eth1"

        // When, Then
        XCTAssertTrue(FlapDamping.holdsTransition(from: unknown, to: limited, delaySeconds: 2))
        XCTAssertFalse(FlapDamping.holdsTransition(from: unknown, to: limited, delaySeconds: 0))
        XCTAssertFalse(FlapDamping.holdsTransition(from: limited, to: unknown, delaySeconds: 2), "a rise is published at once")
        XCTAssertFalse(FlapDamping.holdsTransition(from: unknown, to: limitedElsewhere, delaySeconds: 2), "with another change, at once")
    }

    func testThatOnlyLossesAreHeldAndOnlyWithADelay() {
        // Given
        let reachable = ReachabilitySnapshot(status: .reachableViaWiFi, isIPv4Reachable: true, isIPv6Reachable: false,
                                             interface: "wlan0", transport: .wifi, isMetered: false, reason: "r")
        var lost = ReachabilitySnapshot.unknown
        lost.status = .notReachable

        // When, Then
        XCTAssertTrue(FlapDamping.holdsTransition(from: reachable, to: lost, delaySeconds: 2))
        XCTAssertFalse(FlapDamping.holdsTransition(from: reachable, to: lost, delaySeconds: 0))
        XCTAssertFalse(FlapDamping.holdsTransition(from: lost, to: reachable, delaySeconds: 2))
        XCTAssertFalse(FlapDamping.holdsTransition(from: .unknown, to: lost, delaySeconds: 2))
    }
}

/// The rule's handling of ignored links, tunnels and metering.
final class ReachabilityRuleLinkFactsTests: XCTestCase {
    private func facts(_ link: LinkFacts) -> DestinationFacts {
        DestinationFacts(
            family: .ipv4,
            lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: link.index, gateway: IPAddress("10.0.0.1"))),
            outputLink: link,
            source: .selected(SourceAddress(address: IPAddress("192.0.2.10")!, scope: .global, linkName: link.name))
        )
    }

    func testThatAnIgnoredLinkNeverMakesTheHostReachable() {
        // Given
        let docker = LinkFacts(index: 3, name: "docker0", isUp: true, hasCarrier: true, transport: .other, ignoreReason: "container interface (docker0)")

        // When
        let verdict = ReachabilityRule.evaluate(facts(docker))

        // Then
        XCTAssertFalse(verdict.isReachable)
        XCTAssertEqual(verdict.reason, "default route on docker0, which is ignored (container interface (docker0))")
    }

    func testThatATunnelReportsTheMediumBeneath() {
        // Given
        let tunnel = LinkFacts(index: 4, name: "wg0", isUp: true, hasCarrier: true, transport: .vpn,
                               underlying: UnderlyingLink(name: "wwan0", transport: .wwan))

        // When
        let snapshot = ReachabilityRule.decide(ipv4: facts(tunnel), ipv6: DestinationFacts(family: .ipv6, lookup: .failed(errno: Errno(ENETUNREACH)), source: .failed(errno: Errno(ENETUNREACH))))

        // Then
        XCTAssertEqual(snapshot.status, .reachableViaWWAN)
        XCTAssertEqual(snapshot.transport, .vpn)
        XCTAssertTrue(snapshot.isMetered, "metered follows the medium beneath the tunnel")
        XCTAssertEqual(snapshot.reason, "default route via 10.0.0.1 on wg0 (vpn over wwan0, wwan), table main")
    }

    func testThatTheMatchedPrefixAndMetricAreInTheReason() {
        // Given: an OpenVPN-style 0.0.0.0/1 route with a metric.
        let tunnel = LinkFacts(index: 4, name: "tun0", isUp: true, hasCarrier: true, transport: .vpn)
        let facts = DestinationFacts(
            family: .ipv4,
            lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: 4, gateway: IPAddress("10.8.0.1"), table: 51820, matchedPrefix: "0.0.0.0/1", metric: 600)),
            outputLink: tunnel,
            source: .selected(SourceAddress(address: IPAddress("10.8.0.2")!, scope: .global, linkName: "tun0"))
        )

        // When
        let verdict = ReachabilityRule.evaluate(facts)

        // Then
        XCTAssertEqual(verdict.reason, "route 0.0.0.0/1 via 10.8.0.1 on tun0 (vpn), table 51820, metric 600")
        XCTAssertEqual(verdict.status, .reachableViaOther, "a tunnel with no known medium beneath")
    }

    func testThatATunnelWithNothingKnownBeneathIsStillReachable() {
        // Given: a PPP link (PPPoE, dial-up) holding the source address the kernel selects; the
        // Ethernet beneath a PPPoE session has no address, so no medium beneath is known
        let ppp = LinkFacts(index: 4, name: "ppp0", isUp: true, hasCarrier: true, transport: .vpn)

        // When
        let verdict = ReachabilityRule.evaluate(facts(ppp))

        // Then: the link that holds the source carries traffic
        XCTAssertTrue(verdict.isReachable)
        XCTAssertEqual(verdict.status, .reachableViaOther)
        XCTAssertEqual(verdict.reason, "default route via 10.0.0.1 on ppp0 (vpn), table main")
    }

    func testThatAnOptimisticAddressIsUsableWhileTentative() {
        // Given, When, Then
        XCTAssertTrue(AddressFacts(family: .ipv6, isGlobalScope: true, isTentative: true, isOptimistic: true).isUsableGlobal)
        XCTAssertFalse(AddressFacts(family: .ipv6, isGlobalScope: true, isTentative: true).isUsableGlobal)
        XCTAssertFalse(AddressFacts(family: .ipv6, isGlobalScope: true, isDuplicateAddressDetectionFailed: true, isOptimistic: true).isUsableGlobal)
    }

    func testThatConfiguredMeteringIsPublished() {
        // Given
        let hotspot = LinkFacts(index: 5, name: "wlan0", isUp: true, hasCarrier: true, transport: .wifi, metered: MeteredVerdict(isMetered: true, reason: .configuration))

        // When
        let snapshot = ReachabilityRule.decide(ipv4: facts(hotspot), ipv6: DestinationFacts(family: .ipv6, lookup: .failed(errno: Errno(ENETUNREACH)), source: .failed(errno: Errno(ENETUNREACH))))

        // Then
        XCTAssertTrue(snapshot.isMetered)
    }

    func testTheMetricsSectionNamesTheTextfileDirectory() throws {
        XCTAssertEqual(try ConfigurationParser.parse([("f.conf", "")]).metricsTextfileDirectory, "")
        let configured = try ConfigurationParser.parse([("f.conf", "[Metrics]\nTextfileDirectory=/var/lib/prometheus/node-exporter\n")])
        XCTAssertEqual(configured.metricsTextfileDirectory, "/var/lib/prometheus/node-exporter")
        XCTAssertTrue(configured.summary.contains("[Metrics] TextfileDirectory=/var/lib/prometheus/node-exporter"))
    }
}
