import ReachabilityBus
import ReachabilityCore
import XCTest
@testable import ReachabilityService

/// Where NetworkManager's DHCP4Config `Options` hold DHCPv4 option 114: the name depends on the
/// DHCP client that took the lease.
final class NetworkManagerDevicesTests: XCTestCase {
    func testTheOptionIsFoundUnderEitherClientsName() {
        let uri = "https://10.99.0.1:8443/captive"
        let rows: [(options: [String: BusValue], expected: String?, line: UInt)] = [
            (["default_url": .string(uri), "routers": .string("10.99.0.1")], uri, #line),  // dhclient
            (["captive_portal_uri": .string(uri)], uri, #line),  // dhcpcd
            (["routers": .string("10.99.0.1")], nil, #line),  // NetworkManager's internal client
            (["default_url": .boolean(true)], nil, #line),  // not a string: ignored
            ([:], nil, #line),
        ]
        for row in rows {
            XCTAssertEqual(NetworkManagerDevices.captivePortalURI(in: row.options), row.expected, line: row.line)
        }
    }
}
