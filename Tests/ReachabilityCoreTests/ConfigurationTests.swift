import ReachabilityCore
import XCTest

/// Parsing `reachabilityd.conf` and its drop-ins.
final class ConfigurationParserTests: XCTestCase {
    func testThatAFullConfigurationParses() throws {
        // Given
        let text = """
            # comment
            ; another comment
            [Reachability]
            IgnoreInterfaces=docker* tailscale0
            IgnoreInterfaces=zt*
            Transport=usb*:wwan enx*:ethernet
            Metered=wifi:yes hotspot*:no
            DownDelaySec=500ms
            """

        // When
        let configuration = try ConfigurationParser.parse([("/etc/reachabilityd/reachabilityd.conf", text)])

        // Then
        XCTAssertEqual(configuration.ignoreInterfaces, ["docker*", "tailscale0", "zt*"])
        XCTAssertEqual(configuration.transportOverrides, [InterfaceRule(pattern: "usb*", value: .wwan), InterfaceRule(pattern: "enx*", value: .ethernet)])
        XCTAssertEqual(configuration.meteredTransports, [.wifi: true])
        XCTAssertEqual(configuration.meteredInterfaces, [InterfaceRule(pattern: "hotspot*", value: false)])
        XCTAssertEqual(configuration.downDelaySeconds, 0.5, accuracy: 1e-9)
    }

    func testThatLaterFilesWinAndEmptyAssignmentsReset() throws {
        // Given
        let main = "[Reachability]\nIgnoreInterfaces=a*\nDownDelaySec=1\n"
        let dropIn = "[Reachability]\nIgnoreInterfaces=\nIgnoreInterfaces=b*\nDownDelaySec=2s\n"

        // When
        let configuration = try ConfigurationParser.parse([("main.conf", main), ("main.conf.d/10-local.conf", dropIn)])

        // Then
        XCTAssertEqual(configuration.ignoreInterfaces, ["b*"])
        XCTAssertEqual(configuration.downDelaySeconds, 2)
    }

    func testThatCRLFLineEndingsAreAccepted() throws {
        // Given a file written with CRLF line endings
        let text = "# comment\r\n[Reachability]\r\nIgnoreInterfaces=zt*\r\nDownDelaySec=2\r\n"

        // When
        let configuration = try ConfigurationParser.parse([("crlf.conf", text)])

        // Then
        XCTAssertEqual(configuration.ignoreInterfaces, ["zt*"])
        XCTAssertEqual(configuration.downDelaySeconds, 2)
    }

    func testThatContainerInterfacesExtendTheBuiltInListUntilAnEmptyAssignmentClearsIt() throws {
        let rows: [(name: String, text: String, expected: [String], line: UInt)] = [
            ("not set: the built-in list", "[Reachability]\n", ContainerInterfaces.defaultPatterns, #line),
            ("added to", "[Reachability]\nContainerInterfaces=lxcbr* podman*\n", ContainerInterfaces.defaultPatterns + ["lxcbr*", "podman*"], #line),
            ("cleared", "[Reachability]\nContainerInterfaces=\n", [], #line),
            ("cleared, then set", "[Reachability]\nContainerInterfaces=\nContainerInterfaces=docker0 veth*\n", ["docker0", "veth*"], #line),
        ]
        for row in rows {
            // When
            let configuration = try ConfigurationParser.parse([("reachabilityd.conf", row.text)])

            // Then
            XCTAssertEqual(configuration.containerInterfaces, row.expected, row.name, line: row.line)
            XCTAssertTrue(configuration.summary.contains("ContainerInterfaces=\(row.expected.joined(separator: " "))"), row.name, line: row.line)
        }
    }

    func testThatEveryBadLineIsReportedWithFileAndLine() {
        // Given
        let rows: [(String, String)] = [
            ("[Reachability]\nTransport=usb0\n", "f.conf:2: Transport= expects GLOB:TRANSPORT"),
            ("[Reachability]\nTransport=usb0:satellite\n", "f.conf:2: Transport= expects GLOB:TRANSPORT"),
            ("[Reachability]\nMetered=wifi:maybe\n", "f.conf:2: Metered= expects"),
            ("[Reachability]\nDownDelaySec=-1\n", "f.conf:2: DownDelaySec= expects"),
            ("[Reachability]\nDownDelaySec=soon\n", "f.conf:2: DownDelaySec= expects"),
            ("[Reachability]\nIgnoreInterface=eth0\n", "f.conf:2: unknown setting \"IgnoreInterface\""),
            ("IgnoreInterfaces=eth0\n", "f.conf:1: assignment outside section"),
            ("[Network]\n", "f.conf:1: unknown section [Network]"),
            ("[Metrics]\nTextfileDirectory=relative/dir\n", "f.conf:2: TextfileDirectory= expects an absolute path"),
            ("[Metrics]\nDirectory=/x\n", "f.conf:2: unknown setting \"Directory\" in [Metrics]"),
            ("[Reachability\n", "f.conf:1: malformed section header"),
            ("[Reachability]\njust words\n", "f.conf:2: expected Key=value"),
        ]
        for (text, expected) in rows {
            // When
            XCTAssertThrowsError(try ConfigurationParser.parse([("f.conf", text)]), text) { error in
                // Then
                let diagnostics = (error as? InvalidConfiguration)?.diagnostics ?? []
                XCTAssertEqual(diagnostics.count, 1, text)
                XCTAssertTrue(diagnostics.first?.description.hasPrefix(expected) ?? false, "\(diagnostics) for \(text)")
            }
        }
    }

    func testThatMeteredFollowsInterfaceRulesThenTransportRulesThenWWAN() {
        // Given
        let configuration = DaemonConfiguration(
            meteredInterfaces: [InterfaceRule(pattern: "wlan-hotspot*", value: true), InterfaceRule(pattern: "wwan-home", value: false)],
            meteredTransports: [.ethernet: false, .wifi: false]
        )

        // When, Then
        XCTAssertTrue(configuration.isMetered(interface: "wlan-hotspot0", transport: .wifi))
        XCTAssertFalse(configuration.isMetered(interface: "wwan-home", transport: .wwan))
        XCTAssertTrue(configuration.isMetered(interface: "wwan0", transport: .wwan))
        XCTAssertFalse(configuration.isMetered(interface: "wlan0", transport: .wifi))
        XCTAssertFalse(DaemonConfiguration.default.isMetered(interface: "eth0", transport: .ethernet))
    }
}

/// `DownDelaySec=`: only a loss of reachability, or of connectivity alone, is held.
final class FlapDampingTests: XCTestCase {
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
            lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: link.index, gateway: "10.0.0.1")),
            outputLink: link,
            source: .selected(SourceAddress(address: "192.0.2.10", scope: .global, linkName: link.name))
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
            lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: 4, gateway: "10.8.0.1", table: 51820, matchedPrefix: "0.0.0.0/1", metric: 600)),
            outputLink: tunnel,
            source: .selected(SourceAddress(address: "10.8.0.2", scope: .global, linkName: "tun0"))
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
        let hotspot = LinkFacts(index: 5, name: "wlan0", isUp: true, hasCarrier: true, transport: .wifi, isMetered: true)

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
