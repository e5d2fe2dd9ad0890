import Dispatch
import ReachabilityBus
import ReachabilityCore
@testable import ReachabilityClient
import ReachabilityProperties
import Synchronization
import XCTest

final class LocalizedDescriptionTests: XCTestCase {
    func testEnglishDescriptionsMatchAFNetworking() {
        // Given / When / Then
        let expected: [ReachabilityStatus: String] = [
            .unknown: "Unknown",
            .notReachable: "Not Reachable",
            .reachableViaWWAN: "Reachable via WWAN",
            .reachableViaWiFi: "Reachable via WiFi",
            .reachableViaEthernet: "Reachable via Ethernet",
            .reachableViaOther: "Reachable via Other Network",
        ]
        for status in ReachabilityStatus.allCases {
            XCTAssertEqual(status.localizedDescription(language: "en"), expected[status], "\(status)")
        }
    }

    func testSimplifiedChineseHasAllStatusesTranslated() {
        for status in ReachabilityStatus.allCases {
            let chinese = status.localizedDescription(language: "zh-Hans")
            XCTAssertNotEqual(chinese, status.localizedDescription(language: "en"), "\(status)")
            XCTAssertFalse(chinese.isEmpty)
        }
        XCTAssertEqual(ReachabilityStatus.notReachable.localizedDescription(language: "zh_CN.UTF-8"), "网络不可达")
    }

    func testLanguageTags() {
        let table: [(String, StatusLanguage)] = [
            ("en", .english), ("en_US.UTF-8", .english), ("C", .english), ("", .english), ("fr_FR", .english),
            ("zh", .simplifiedChinese), ("zh-Hans", .simplifiedChinese), ("zh_CN.UTF-8", .simplifiedChinese),
            ("zh_SG", .simplifiedChinese), ("zh-Hans-CN", .simplifiedChinese),
            ("zh_TW.UTF-8", .english), ("zh-Hant", .english), ("zh_HK", .english),
        ]
        for (tag, expected) in table {
            XCTAssertEqual(StatusLanguage(tag: tag), expected, tag)
        }
    }
}

final class PublishedPropertiesTests: XCTestCase {
    func testSnapshotFromBusProperties() {
        // Given
        let properties: [String: BusValue] = [
            "Status": .string("reachable-via-wwan"), "Reachable": .boolean(true), "IPv4Reachable": .boolean(false),
            "IPv6Reachable": .boolean(true), "Interface": .string("wwan0"), "Transport": .string("wwan"),
            "Metered": .boolean(true), "Reason": .string("IPv6 default route on wwan0"), "Generation": .unsignedInteger(7),
        ]

        // When
        let snapshot = ReachabilitySnapshot(busProperties: properties)

        // Then
        XCTAssertEqual(snapshot, ReachabilitySnapshot(
            status: .reachableViaWWAN, isIPv4Reachable: false, isIPv6Reachable: true, interface: "wwan0",
            transport: .wwan, isMetered: true, reason: "IPv6 default route on wwan0"
        ))
        // and, from an older daemon without the per-family properties, a reachable family's link is Interface
        XCTAssertEqual(snapshot.ipv6Interface, "wwan0")
        XCTAssertEqual(snapshot.ipv6Transport, .wwan)
        XCTAssertEqual(snapshot.ipv4Interface, "")
    }

    func testEachFamilysLinkFromBusProperties() {
        // Given IPv4 via eth0 and IPv6 via wlan0
        let properties: [String: BusValue] = [
            "Status": .string("reachable-via-ethernet"), "Reachable": .boolean(true), "IPv4Reachable": .boolean(true),
            "IPv6Reachable": .boolean(true), "Interface": .string("eth0"), "Transport": .string("ethernet"),
            "IPv4Interface": .string("eth0"), "IPv6Interface": .string("wlan0"), "IPv4Transport": .string("ethernet"), "IPv6Transport": .string("wifi"),
        ]

        // When
        let snapshot = ReachabilitySnapshot(busProperties: properties)

        // Then
        XCTAssertEqual(snapshot.ipv4Interface, "eth0")
        XCTAssertEqual(snapshot.ipv4Transport, .ethernet)
        XCTAssertEqual(snapshot.ipv6Interface, "wlan0")
        XCTAssertEqual(snapshot.ipv6Transport, .wifi)
    }

    /// What the daemon publishes (each property read from its snapshot by the table) is what
    /// the client writes back (each property written by the table): the same snapshot.
    func testThatPublishedPropertiesRoundTripThroughThePropertyTable() {
        // Given snapshots the daemon publishes
        let snapshots = [
            ReachabilitySnapshot.unknown,
            ReachabilitySnapshot(
                status: .reachableViaEthernet, isIPv4Reachable: true, isIPv6Reachable: true, interface: "eth0", transport: .ethernet,
                isMetered: false, reason: "default route on eth0", ipv4Evidence: .portal, ipv6Evidence: nil,
                captivePortal: "https://portal.example/", ipv4Link: ("eth0", .ethernet), ipv6Link: ("wlan0", .wifi)
            ),
            ReachabilitySnapshot(
                status: .reachableViaWWAN, isIPv4Reachable: false, isIPv6Reachable: true, interface: "wwan0", transport: .wwan,
                isMetered: true, reason: "IPv6 default route on wwan0", ipv6Evidence: .limited
            ),
        ]

        for snapshot in snapshots {
            // When
            let properties = Dictionary(uniqueKeysWithValues: ReachabilityProperty.allCases.map { ($0.rawValue, snapshot.value(of: $0, generation: 3)) })

            // Then
            XCTAssertEqual(ReachabilitySnapshot(busProperties: properties), snapshot)
        }
    }

    func testUnknownStatusFromANewerDaemon() {
        XCTAssertEqual(ReachabilitySnapshot(busProperties: ["Status": .string("reachable-via-satellite"), "Reachable": .boolean(true)]).status, .reachableViaOther)
        XCTAssertEqual(ReachabilitySnapshot(busProperties: ["Status": .string("something-else")]).status, .unknown)
        XCTAssertEqual(ReachabilitySnapshot(busProperties: [:]).transport, nil)
    }
}

final class AddressAnswerTests: XCTestCase {
    func testBestAnswerPrefersReachableThenResolverOrder() {
        // Given
        let v6Down = AddressAnswer(address: "2001:db8::1", status: .notReachable, interface: "")
        let v4Up = AddressAnswer(address: "192.0.2.1", status: .reachableViaWiFi, interface: "wlan0")
        let v4UpToo = AddressAnswer(address: "192.0.2.2", status: .reachableViaEthernet, interface: "eth0")
        let unknown = AddressAnswer(address: "192.0.2.3", status: .unknown, interface: "")

        // When / Then
        XCTAssertEqual(AddressAnswer.best(of: [v6Down, v4Up, v4UpToo]), v4Up)
        XCTAssertEqual(AddressAnswer.best(of: [unknown, v6Down]), v6Down)
        XCTAssertNil(AddressAnswer.best(of: []))
    }

    func testSnapshotOfADestination() {
        // Given
        let answers = [
            AddressAnswer(address: "2001:db8::1", status: .reachableViaWWAN, interface: "wwan0"),
            AddressAnswer(address: "192.0.2.1", status: .notReachable, interface: ""),
        ]

        // When
        let snapshot = AddressAnswer.snapshot(destination: "example.org", answers: answers)

        // Then
        XCTAssertEqual(snapshot.status, .reachableViaWWAN)
        XCTAssertEqual(snapshot.interface, "wwan0")
        XCTAssertEqual(snapshot.transport, .wwan)
        XCTAssertTrue(snapshot.isMetered)
        XCTAssertTrue(snapshot.isIPv6Reachable)
        XCTAssertFalse(snapshot.isIPv4Reachable)
        XCTAssertEqual(snapshot.ipv6Interface, "wwan0")
        XCTAssertEqual(snapshot.ipv4Interface, "")
        XCTAssertEqual(AddressAnswer.snapshot(destination: "example.org", answers: []).status, .notReachable)
    }

    func testEachFamilysLinkIsItsFirstReachableAddresss() {
        // Given a host whose IPv6 address is reached over wlan0, its IPv4 addresses over eth0 and wwan0
        let answers = [
            AddressAnswer(address: "2001:db8::1", status: .reachableViaWiFi, interface: "wlan0"),
            AddressAnswer(address: "192.0.2.1", status: .notReachable, interface: ""),
            AddressAnswer(address: "192.0.2.2", status: .reachableViaEthernet, interface: "eth0"),
            AddressAnswer(address: "::ffff:192.0.2.3", status: .reachableViaWWAN, interface: "wwan0"),
        ]

        // When
        let snapshot = AddressAnswer.snapshot(destination: "example.org", answers: answers)

        // Then: the best answer names the host's link; each family has its own
        XCTAssertEqual(snapshot.interface, "wlan0")
        XCTAssertEqual(snapshot.ipv6Interface, "wlan0")
        XCTAssertEqual(snapshot.ipv6Transport, .wifi)
        XCTAssertEqual(snapshot.ipv4Interface, "eth0")
        XCTAssertEqual(snapshot.ipv4Transport, .ethernet)
    }
}

final class HostResolverTests: XCTestCase {
    func testLiteralsResolveToThemselves() {
        XCTAssertEqual(HostResolver.resolve("192.0.2.7"), .addresses(["192.0.2.7"]))
        XCTAssertEqual(HostResolver.resolve("2001:db8::7"), .addresses(["2001:db8::7"]))
    }

    func testUnresolvableNameFails() {
        guard case .failed = HostResolver.resolve("no-such-host.invalid") else {
            return XCTFail("no-such-host.invalid resolved")
        }
    }
}

final class ManagerWithoutMonitoringTests: XCTestCase {
    func testNothingIsKnownBeforeMonitoring() {
        // Given a manager on a bus address that does not exist
        let manager = ReachabilityManager(target: .machine, endpoint: .address("unix:path=/nonexistent/bus"))

        // Then
        XCTAssertEqual(manager.status, .unknown)
        XCTAssertFalse(manager.isReachable)
        XCTAssertNil(manager.interfaceName)
        XCTAssertFalse(manager.isDaemonAvailable)
    }

    func testUnreachableBusGivesUnknownWithoutBlocking() async {
        // Given
        let manager = ReachabilityManager(target: .machine, endpoint: .address("unix:path=/nonexistent/bus"))

        // When
        let start = ContinuousClock.now
        manager.startMonitoring()
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(50), "startMonitoring must not block")
        var first: ReachabilityStatus?
        for await status in manager.statusUpdates {
            first = status
            break
        }

        // Then
        XCTAssertEqual(first, .unknown)
        XCTAssertFalse(manager.isDaemonAvailable)
        manager.stopMonitoring()
    }
}

final class RememberedResolutionTests: XCTestCase {
    func testASuccessIsReusedForItsLifetimeAndFailuresInARowUntilTheirRetry() {
        // Given a name resolved, failing three times in a row, resolved, failing again: each
        // answer a minute after the last
        let failure = HostResolver.Outcome.failed("Name or service not known")
        let addresses = HostResolver.Outcome.addresses(["192.0.2.1"])
        let rows: [(outcome: HostResolver.Outcome, reusedFor: Duration, isRetried: Bool, line: UInt)] = [
            (addresses, .seconds(30), false, #line),
            (failure, .seconds(1), true, #line),
            (failure, .seconds(2), true, #line),
            (failure, .seconds(4), true, #line),
            (addresses, .seconds(30), false, #line),
            (failure, .seconds(1), true, #line),  // a success starts the back-off over
        ]
        let start = ContinuousClock.now
        var remembered = RememberedResolution()
        XCTAssertNil(remembered.fresh(now: start))

        for (index, row) in rows.enumerated() {
            // When
            let now = start + .seconds(60 * index)
            let answer = remembered.remember(row.outcome, now: now)

            // Then it is reused until just before its time is up, and a failure is retried then
            XCTAssertEqual(answer, HostLookup.Answer(outcome: row.outcome, retryAt: row.isRetried ? now + row.reusedFor : nil), line: row.line)
            XCTAssertEqual(remembered.fresh(now: now + row.reusedFor - .milliseconds(1)), answer, line: row.line)
            XCTAssertNil(remembered.fresh(now: now + row.reusedFor), line: row.line)
        }
    }
}

final class HostLookupTests: XCTestCase {
    /// A resolver that blocks until released and counts how often it was asked.
    private final class GatedResolver: @unchecked Sendable {
        let calls = Mutex(0)
        let gate = DispatchSemaphore(value: 0)
        var outcome = HostResolver.Outcome.addresses(["192.0.2.1"])

        func resolve(_ host: String) -> HostResolver.Outcome {
            calls.withLock { $0 += 1 }
            gate.wait()
            return outcome
        }
    }

    /// Asks `lookup` for the addresses `count` times and waits for every answer.
    private func resolve(_ lookup: HostLookup, times count: Int, release resolver: GatedResolver? = nil) -> [HostLookup.Answer] {
        let answers = Mutex<[HostLookup.Answer]>([])
        let answered = DispatchGroup()
        let queue = DispatchQueue(label: "test")
        for _ in 0..<count {
            answered.enter()
            lookup.resolve(on: queue) { answer in
                answers.withLock { $0.append(answer) }
                answered.leave()
            }
        }
        resolver?.gate.signal()
        XCTAssertEqual(answered.wait(timeout: .now() + 5), .success)
        return answers.withLock { $0 }
    }

    func testChecksDuringAResolutionWaitForItInsteadOfAskingAgain() {
        // Given a resolver that has not answered yet
        let resolver = GatedResolver()
        let lookup = HostLookup("example.test", resolver: resolver.resolve)
        XCTAssertEqual(lookup.resolution, .notAsked)

        // When three checks want the addresses before it answers
        let queue = DispatchQueue(label: "test")
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<3 { lookup.resolve(on: queue) { _ in done.signal() } }

        // Then it is asked once, and the lookup says it waits
        guard case .waiting = lookup.resolution else { return XCTFail("\(lookup.resolution)") }
        resolver.gate.signal()
        for _ in 0..<3 { XCTAssertEqual(done.wait(timeout: .now() + 5), .success) }
        XCTAssertEqual(resolver.calls.withLock { $0 }, 1)
        XCTAssertEqual(lookup.resolution, .resolved(["192.0.2.1"]))
    }

    func testASuccessIsReusedAndSoIsAFailureUntilItsRetry() {
        // Given a resolved name
        let resolver = GatedResolver()
        let lookup = HostLookup("example.test", resolver: resolver.resolve)
        _ = resolve(lookup, times: 1, release: resolver)

        // When it is wanted again, then it is not asked again
        let resolved = HostLookup.Answer(outcome: .addresses(["192.0.2.1"]), retryAt: nil)
        XCTAssertEqual(resolve(lookup, times: 2), [resolved, resolved])
        XCTAssertEqual(resolver.calls.withLock { $0 }, 1)

        // Given a resolver that fails
        let failing = GatedResolver()
        failing.outcome = .failed("Name or service not known")
        let unknown = HostLookup("no-such-host.invalid", resolver: failing.resolve)
        let asked = ContinuousClock.now

        // When the name is wanted twice in turn
        let first = resolve(unknown, times: 1, release: failing)
        let second = resolve(unknown, times: 1)

        // Then the resolver is asked once, the failure is the state, and both answers say when
        // the name is looked up again (1 s after the first failure)
        XCTAssertEqual(failing.calls.withLock { $0 }, 1)
        XCTAssertEqual(unknown.resolution, .failed("Name or service not known"))
        XCTAssertEqual(first, second)
        XCTAssertEqual(first.first?.outcome, .failed("Name or service not known"))
        XCTAssertGreaterThanOrEqual(first.first?.retryAt ?? asked, asked + RememberedResolution.failureReuse.first)
    }
}

final class LocalizationResourceTests: XCTestCase {
    func testConnectivityIsDescribedInEnglishAndChinese() {
        XCTAssertEqual(Connectivity.limited.localizedDescription(language: "en_US.UTF-8"), "Limited Connectivity")
        XCTAssertEqual(Connectivity.limited.localizedDescription(language: "zh_CN.UTF-8"), "连接受限")
        XCTAssertEqual(Connectivity.portal.localizedDescription(language: "fr"), "Captive Portal")
    }

    func testUntranslatedLanguagesFallBackToEnglish() {
        XCTAssertEqual(ReachabilityStatus.reachableViaWiFi.localizedDescription(language: "fr_FR.UTF-8"), "Reachable via WiFi")
        XCTAssertEqual(ReachabilityStatus.reachableViaWiFi.localizedDescription(language: "zh_TW"), "Reachable via WiFi")
        XCTAssertEqual(ReachabilityStatus.reachableViaWiFi.localizedDescription(language: "zh_CN.UTF-8"), "通过 Wi-Fi 连接")
    }

    func testLocalizationDirectories() {
        XCTAssertEqual(StatusLanguage.localizationDirectories(for: "fr_CA.UTF-8"), ["fr-ca", "fr"])
        XCTAssertEqual(StatusLanguage.localizationDirectories(for: "de_DE@euro"), ["de-de", "de"])
        XCTAssertEqual(StatusLanguage.localizationDirectories(for: "en"), ["en"])
        XCTAssertEqual(StatusLanguage.localizationDirectories(for: "zh_CN.UTF-8"), ["zh-hans"])
        XCTAssertEqual(StatusLanguage.localizationDirectories(for: "zh-Hant-TW"), ["zh-hant"])
        XCTAssertEqual(StatusLanguage.localizationDirectories(for: ""), [])
    }

    func testStringsFileParsing() {
        let text = """
            /* A comment "with quotes" = "no"; */
            "Unknown" = "未知";
            // a line comment
            "A \\"quoted\\" key" = "line\\nbreak";
            "Broken" = 
            """
        XCTAssertEqual(StringsFile.parse(text), ["Unknown": "未知", "A \"quoted\" key": "line\nbreak"])
        XCTAssertEqual(StringsFile.parse(""), [:])
    }
}

final class RetryDelaysTests: XCTestCase {
    func testWaitsDoubleFromTheFirstUpToTheLongest() {
        // Given each back-off of the library, failures in a row and the wait after them
        let reconnect = BusHub.reconnectDelays, unanswered = RetryDelays.unansweredDaemon, lookup = RememberedResolution.failureReuse
        let rows: [(delays: RetryDelays, failures: Int, wait: Duration, line: UInt)] = [
            (reconnect, 1, .milliseconds(100), #line), (reconnect, 2, .milliseconds(200), #line),
            (reconnect, 3, .milliseconds(400), #line), (reconnect, 4, .milliseconds(800), #line),
            (reconnect, 5, .milliseconds(1600), #line), (reconnect, 6, .milliseconds(3200), #line),
            (reconnect, 7, .seconds(5), #line), (reconnect, 8, .seconds(5), #line), (reconnect, 1_000, .seconds(5), #line),
            (unanswered, 0, .milliseconds(250), #line), (unanswered, 1, .milliseconds(250), #line),
            (unanswered, 2, .milliseconds(500), #line), (unanswered, 6, .seconds(8), #line),
            (lookup, 1, .seconds(1), #line), (lookup, 2, .seconds(2), #line), (lookup, 3, .seconds(4), #line),
            (lookup, 5, .seconds(16), #line), (lookup, 6, .seconds(30), #line), (lookup, .max, .seconds(30), #line),
        ]

        // When / Then
        for row in rows {
            XCTAssertEqual(row.delays.delay(afterFailures: row.failures), row.wait, "after \(row.failures) failures", line: row.line)
        }
    }
}

final class CallsInFlightTests: XCTestCase {
    func testCallsBeyondTheLimitWaitTheirTurnInOrder() {
        // Given as many calls in flight as allowed
        var calls = CallsInFlight<Int>()
        for number in 0..<CallsInFlight<Int>.limit {
            XCTAssertEqual(calls.start(number), number, "call \(number) goes at once")
        }

        // When two more come
        XCTAssertNil(calls.start(100))
        XCTAssertNil(calls.start(101))

        // Then each finished call lets the oldest waiting one go, and then a place is free
        XCTAssertEqual(calls.finish(), 100)
        XCTAssertEqual(calls.finish(), 101)
        XCTAssertNil(calls.finish())
        XCTAssertEqual(calls.start(102), 102)
    }

    func testALostConnectionHandsBackTheWaitingCalls() {
        // Given a full flight and two waiting calls
        var calls = CallsInFlight<Int>()
        for number in 0..<CallsInFlight<Int>.limit { _ = calls.start(number) }
        _ = calls.start(100)
        _ = calls.start(101)

        // When the connection goes
        let abandoned = calls.abandon()

        // Then the waiting calls come back in order, and every place is free again
        XCTAssertEqual(abandoned, [100, 101])
        for number in 0..<CallsInFlight<Int>.limit { XCTAssertEqual(calls.start(number), number) }
    }
}

final class VarlinkInsteadOfBusTests: XCTestCase {
    func testTheSocketIsAskedOnlyWhereTheBusSocketIsMissingAndTheSocketThere() {
        // Given the paths that exist, a bus address, and the daemon's socket
        let socket = "/run/reachabilityd/org.reachabilityd.Reachability"
        let rows: [(address: String?, existing: Set<String>, expected: String?, line: UInt)] = [
            (nil, [socket], socket, #line),  // a container: no bus, the socket bind-mounted
            (nil, ["/run/dbus/system_bus_socket", socket], nil, #line),  // a host: the bus
            (nil, [], nil, #line),  // neither: the bus's absence is the answer
            ("unix:path=/tmp/bus", [socket], socket, #line),  // the address's path is missing
            ("unix:path=/tmp/bus,guid=1", ["/tmp/bus", socket], nil, #line),  // the address's path is there
            ("unix:abstract=bus", [socket], nil, #line),  // no path to look at: the bus may be there
            ("tcp:host=localhost,port=1", [socket], nil, #line),
        ]
        for row in rows {
            // When
            let chosen = VarlinkSource.insteadOfSystemBus(busAddress: row.address, socket: socket) { row.existing.contains($0) }

            // Then
            XCTAssertEqual(chosen, row.expected, line: row.line)
        }
    }
}
