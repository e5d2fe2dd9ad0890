import Foundation
import ReachabilityCore
import ReachabilityProperties
import TestSupport
import XCTest

/// The live D-Bus API against its source of truth, `dbus/org.reachabilityd.Reachability1.xml`:
/// the daemon as wired, on a bus with the shipped policy (ReachabilityServiceTests'
/// `InterfaceContractTests` compares the exported object without root, on every unit run).
final class IntrospectionTests: DaemonTestCase {
    func testLiveIntrospectionMatchesTheInterfaceFile() throws {
        // Given
        let file = try InterfaceDescription(
            xml: String(contentsOfFile: TestPaths.interfaceDescription, encoding: .utf8),
            interface: BusContract.interface
        )
        XCTAssertEqual(file.properties.count, ReachabilityProperty.allCases.count, "the file's properties")
        try startDaemon()

        // When
        let live = try InterfaceDescription(xml: try busctl.introspectionXML(), interface: BusContract.interface)

        // Then
        XCTAssertEqual(
            file.differences(from: live), [],
            "\n- only in \(TestPaths.interfaceDescription)\n+ only on the bus"
        )
        XCTAssertEqual(live.propertyOrder, file.propertyOrder, "the properties' order")
        XCTAssertEqual(live.memberOrder, file.memberOrder, "the methods' and signals' order")
    }
}
