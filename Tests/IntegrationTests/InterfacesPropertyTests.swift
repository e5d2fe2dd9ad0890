import Foundation
import ReachabilityCore
import ReachabilityProperties
import TestSupport
import XCTest

/// The `Interfaces` property: every link but loopback as busctl reads it, announced when an
/// entry changes (a gateway added, a link down) and never for route churn that changes none.
final class InterfacesPropertyTests: DaemonTestCase {
    func testEveryLinkButLoopbackIsListedInIndexOrderWithItsFacts() throws {
        // Given
        try startDaemon()

        // When ra0 gets an address and the default route
        try configureIPv4Link()
        try addIPv4DefaultRoute()

        // Then ra0 and its veth peer ra1 are listed, in index order, lo is not
        let published = try waitForProperties("ra0 listed with its gateway") { properties in
            properties.interfaces.first { $0.name == "ra0" }?.gateways == [IPAddress("10.77.0.1")!]
        }
        let entries = published.interfaces
        XCTAssertEqual(Set(entries.map(\.name)), ["ra0", "ra1"], "\(entries)")
        XCTAssertEqual(entries.map(\.index), entries.map(\.index).sorted())
        let ra0 = try XCTUnwrap(entries.first { $0.name == "ra0" })
        XCTAssertEqual(ra0, NetworkInterface(
            name: "ra0", index: ra0.index, transport: .ethernet, operational: .up, hasIPv4: true, hasIPv6: false,
            gateways: [IPAddress("10.77.0.1")!], isMetered: false, ignoreReason: "", mtu: 1500, networkID: ra0.networkID
        ))
        let ra1 = try XCTUnwrap(entries.first { $0.name == "ra1" })
        XCTAssertEqual(ra1, NetworkInterface(name: "ra1", index: ra1.index, transport: .ethernet, operational: .up, mtu: 1500))

        // And each dictionary has exactly the keys of the contract, as busctl shows them
        let dictionaries = try XCTUnwrap(published[.interfaces]?.dictionaries)
        for dictionary in dictionaries {
            XCTAssertEqual(
                Set(dictionary.keys), ["name", "index", "transport", "operational", "ipv4", "ipv6", "gateways", "metered", "ignored", "dns", "mtu", "network-id"]
            )
        }
        let text = try busctl.run(["get-property", BusContract.busName, BusContract.objectPath, BusContract.interface, "Interfaces"])
            .check().standardOutput
        XCTAssertTrue(text.hasPrefix("aa{sv} 2 12 "), text)
        for expected in [
            #""gateways" as 1 "10.77.0.1""#, #""index" u \#(ra0.index)"#, #""name" s "ra0""#, #""operational" s "up""#, #""ignored" s """#, #""mtu" u 1500"#,
        ] {
            XCTAssertTrue(text.contains(expected), "\(expected) in \(text)")
        }
    }

    func testGatewaysComeFromTheStartAndFollowARouteReplacedAndALinkTakenDown() throws {
        // Given default routes through ra0 in the main table and table 100 before the daemon starts
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try netns.ip("route", "add", "default", "via", "10.77.0.254", "dev", "ra0", "table", "100")

        // When it starts, then its first Interfaces has both gateways
        try startDaemon()
        XCTAssertEqual(gateways(of: "ra0", in: try busctl.properties()), ["10.77.0.254", "10.77.0.1"])

        // When the main table's route is replaced (whose old route's deletion the kernel does not announce)
        try netns.ip("route", "replace", "default", "via", "10.77.0.3", "dev", "ra0")

        // Then the replaced gateway is gone
        try waitForProperties("10.77.0.3 in place of 10.77.0.1") { self.gateways(of: "ra0", in: $0) == ["10.77.0.254", "10.77.0.3"] }

        // When ra0 is taken down (the kernel flushes its IPv4 routes without a word)
        try netns.ip("link", "set", "ra0", "down")

        // Then it has no gateway left
        let down = try waitForProperties("ra0 down") { $0.interfaces.first { $0.name == "ra0" }?.operational == .down }
        XCTAssertEqual(gateways(of: "ra0", in: down), [])
        XCTAssertEqual(down.interfaces.first { $0.name == "ra0" }?.ignoreReason, "link is down")
    }

    func testAReloadedConfigurationIsSeenInTheEntries() throws {
        // Given a daemon started with an empty configuration, ra0 and ra1 up
        try writeConfiguration("[Reachability]\n")
        try startDaemon(arguments: ["--config", try configurationPath])
        try configureIPv4Link()
        try waitForProperties("ra0 and ra1 up") { $0.interfaces.filter { $0.operational == .up }.count == 2 }

        // When the configuration ignores ra1 and meters ra0, and the daemon reloads it
        try writeConfiguration("[Reachability]\nIgnoreInterfaces=ra1\nMetered=ra0:yes\n")
        try XCTUnwrap(daemon).send(SIGHUP)

        // Then the entries say so (the links are classified again under the new configuration)
        let reloaded = try waitForProperties("ra1 ignored, ra0 metered") { properties in
            properties.interfaces.first { $0.name == "ra1" }?.ignoreReason == "IgnoreInterfaces=ra1"
                && properties.interfaces.first { $0.name == "ra0" }?.isMetered == true
        }
        XCTAssertEqual(reloaded.interfaces.first { $0.name == "ra0" }?.ignoreReason, "")
    }

    func testAGatewayAddedAndALinkDownAreAnnouncedAndRouteChurnIsNot() throws {
        // Given a reachable daemon whose Interfaces show ra0's gateway
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForProperties("ra0's gateway listed") { properties in
            properties.status == ReachabilityStatus.reachableViaEthernet.rawValue
                && properties.interfaces.first { $0.name == "ra0" }?.gateways == [IPAddress("10.77.0.1")!]
        }
        let generation = try XCTUnwrap(try settledProperties().generation)

        // When 50,000 host routes that contain no probe come and go (100,000 changes), in the
        // main table and another (the kernel filter drops them), and 1,000 default routes
        // through ra0's gateway in tables of their own (the daemon reads and mirrors them: no
        // entry changes)
        let directory = try XCTUnwrap(directory)
        let routesReadBefore = routeMessagesRead()
        let prefixes = (0..<25_000).map { "100.64.\($0 >> 8).\($0 & 255)/32" }
        let tables = (1_000..<2_000).map(String.init)
        let churn = prefixes.map { "route add \($0) via 10.77.0.1 dev ra0" } + prefixes.map { "route add \($0) dev ra0 table 100" }
            + tables.map { "route add default via 10.77.0.1 dev ra0 table \($0)" }
            + prefixes.map { "route del \($0) via 10.77.0.1 dev ra0" } + prefixes.map { "route del \($0) dev ra0 table 100" }
            + tables.map { "route del default via 10.77.0.1 dev ra0 table \($0)" }
        try churn.joined(separator: "\n").write(toFile: directory.file("churn.batch"), atomically: true, encoding: .utf8)
        try netns.ip("-batch", directory.file("churn.batch"))

        // And then a default route through ra0 in table 100 adds a gateway (a fence: once it is
        // announced, the daemon has read everything before it)
        try netns.ip("route", "add", "default", "via", "10.77.0.254", "dev", "ra0", "table", "100")

        // Then the next announcement is the gateway's, with Interfaces alone and Generation + 1
        let gatewayAdded = try waitForAnnouncement(generation + 1)
        XCTAssertEqual(gatewayAdded.propertyNames, ["Interfaces", "Generation"], "\(gatewayAdded)")
        XCTAssertEqual(try interfaces(in: gatewayAdded).first { $0.name == "ra0" }?.gateways, [IPAddress("10.77.0.254")!, IPAddress("10.77.0.1")!])
        let routesRead = routeMessagesRead() - routesReadBefore
        XCTAssertGreaterThanOrEqual(routesRead, 2_000, "the 2,000 default route changes reach the daemon")
        XCTAssertLessThan(routesRead, 2_100, "the 100,000 host route changes do not")

        // When ra1 goes down: ra0, its veth peer, loses carrier
        try netns.ip("link", "set", "ra1", "down")

        // Then ra1 down is announced (the kernel may tell ra0's carrier loss in a message of
        // its own), and the status that follows comes with the entries that explain it
        func isStatusChange(_ signal: PropertiesChangedSignal) -> Bool { signal.changed["Status"] != nil && (signal.generation ?? 0) > generation }
        let lost = try signals.waitForPropertiesChanged("PropertiesChanged with the new Status") { $0.contains(where: isStatusChange) }
            .first(where: isStatusChange)
        let notReachable = try XCTUnwrap(lost)
        XCTAssertEqual(notReachable.changed["Status"]?.value, .string(ReachabilityStatus.notReachable.rawValue))
        let entries = try interfaces(in: notReachable)
        XCTAssertEqual(entries.first { $0.name == "ra1" }?.operational, .down)
        XCTAssertEqual(entries.first { $0.name == "ra1" }?.ignoreReason, "link is down")
        XCTAssertEqual(entries.first { $0.name == "ra0" }?.operational, .noCarrier)
        XCTAssertEqual(entries.first { $0.name == "ra0" }?.ignoreReason, "no carrier")
        // And every announcement since the churn changed the entries, each Generation once
        let announced = try signals.propertiesChanges.filter { ($0.generation ?? 0) > generation }
        XCTAssertEqual(announced.compactMap(\.generation), Array((generation + 1)...(generation + UInt64(announced.count))))
        XCTAssertEqual(Set(try announced.map { try interfaces(in: $0) }).count, announced.count, "\(announced)")
        XCTAssertLessThanOrEqual(announced.count, 3, "\(announced)")
    }

    func testABurstOfContainerLinksIsAnnouncedOncePerWindowAndEndsWithTheLastState() throws {
        // Given a reachable daemon
        try startDaemon()
        try configureIPv4Link()
        try addIPv4DefaultRoute()
        try waitForStatus(.reachableViaEthernet)
        let generation = try XCTUnwrap(try settledProperties().generation)

        // When 100 veth pairs are created in a bridge (one end a port, both up), as a container
        // runtime leaves them, then deleted: about a thousand link and address events
        let directory = try XCTUnwrap(directory)
        let pairs = 0..<100
        let add = ["link add tvbr0 type bridge", "link set tvbr0 up"] + pairs.flatMap { index in
            ["link add tva\(index) type veth peer name tvb\(index)", "link set tva\(index) master tvbr0", "link set tva\(index) up", "link set tvb\(index) up"]
        }
        let delete = pairs.map { "link del tva\($0)" } + ["link del tvbr0"]
        try add.joined(separator: "\n").write(toFile: directory.file("add.batch"), atomically: true, encoding: .utf8)
        try delete.joined(separator: "\n").write(toFile: directory.file("delete.batch"), atomically: true, encoding: .utf8)
        let started = ContinuousClock.now
        try netns.ip("-batch", directory.file("add.batch"))
        func listsBurst(_ signal: PropertiesChangedSignal) -> Bool? {
            signal.changed["Interfaces"]?.value?.dictionaries.map { $0.contains { $0["name"]?.string?.hasPrefix("tv") == true } }
        }
        try signals.waitForPropertiesChanged("the bridge and its 200 links listed") { changes in
            changes.contains { ($0.generation ?? 0) > generation && (try? self.interfaces(in: $0).filter { $0.name.hasPrefix("tv") }.count) == 201 }
        }
        try netns.ip("-batch", directory.file("delete.batch"))

        // Then the last announcement lists none of them (the last state is always announced)
        try signals.waitForPropertiesChanged("the burst's links gone") { changes in
            changes.last { ($0.generation ?? 0) > generation && listsBurst($0) != nil }.flatMap(listsBurst) == false
        }
        let elapsed = ContinuousClock.now - started
        let announced = try signals.propertiesChanges.filter { ($0.generation ?? 0) > generation }

        // And at most one announcement per window came meanwhile (one more at each phase's
        // start), each with Interfaces alone and Generation + 1; Status never changed
        let windows = Int(elapsed / .milliseconds(BusContract.interfacesIntervalMilliseconds)) + 3
        XCTAssertLessThanOrEqual(announced.count, windows, "\(announced.count) announcements in \(elapsed)")
        XCTAssertEqual(announced.compactMap(\.generation), Array((generation + 1)...(generation + UInt64(announced.count))))
        for signal in announced { XCTAssertEqual(signal.propertyNames, ["Interfaces", "Generation"], "\(signal)") }
        XCTAssertEqual(try busctl.properties().status, ReachabilityStatus.reachableViaEthernet.rawValue)
    }

    /// Waits for the `PropertiesChanged` carrying `Generation` `generation`.
    private func waitForAnnouncement(_ generation: UInt64) throws -> PropertiesChangedSignal {
        let signals = try signals.waitForPropertiesChanged("PropertiesChanged with Generation \(generation)") {
            $0.contains { $0.generation == generation }
        }
        return try XCTUnwrap(signals.first { $0.generation == generation })
    }

    /// The gateways `Interfaces` lists for `link` in `properties`, as text; nil when it lists no such link.
    private func gateways(of link: String, in properties: PublishedProperties) -> [String]? {
        properties.interfaces.first { $0.name == link }?.gateways.map(\.description)
    }

    /// The entries a `PropertiesChanged` carries.
    private func interfaces(in signal: PropertiesChangedSignal) throws -> [NetworkInterface] {
        try XCTUnwrap(signal.changed["Interfaces"]?.value?.dictionaries, "\(signal)").compactMap(NetworkInterface.init(busDictionary:))
    }
}

extension PropertiesChangedSignal {
    /// The `Generation` it announces, if any.
    var generation: UInt64? {
        if case .unsignedInteger(let number)? = changed["Generation"]?.value { number } else { nil }
    }
}
