import NetworkTypes
@testable import RTNetlink
import XCTest

/// The flag and type numbers the parser reads and NetworkTypes names are the kernel's.
final class KernelFlagsTests: XCTestCase {
    func testThatExportedNumbersAreTheKernelABI() {
        // Given, When
        let rows: [(name: String, actual: UInt32, expected: UInt32, line: UInt)] = [
            ("IFF_UP", LinkFlags.up.rawValue, ABI.LinkFlag.up, #line),
            ("IFF_LOWER_UP", LinkFlags.lowerUp.rawValue, ABI.LinkFlag.lowerUp, #line),
            ("IFF_LOOPBACK", LinkFlags.loopback.rawValue, ABI.LinkFlag.loopback, #line),
            ("IFA_F_TENTATIVE", AddressFlag.tentative, ABI.AddressFlag.tentative, #line),
            ("IFA_F_DADFAILED", AddressFlag.duplicateAddressDetectionFailed, ABI.AddressFlag.duplicateAddressDetectionFailed, #line),
            ("RTNH_F_LINKDOWN", RouteFlag.linkDown, ABI.RouteFlag.linkDown, #line),
            ("RTN_UNICAST", UInt32(RouteType.unicast.rawValue), UInt32(ABI.RouteType.unicast), #line),
            ("RTN_LOCAL", UInt32(RouteType.local.rawValue), UInt32(ABI.RouteType.local), #line),
            ("RTN_BLACKHOLE", UInt32(RouteType.blackhole.rawValue), UInt32(ABI.RouteType.blackhole), #line),
            ("RTN_UNREACHABLE", UInt32(RouteType.unreachable.rawValue), UInt32(ABI.RouteType.unreachable), #line),
            ("RTN_PROHIBIT", UInt32(RouteType.prohibit.rawValue), UInt32(ABI.RouteType.prohibit), #line),
            ("RTN_THROW", UInt32(RouteType.throw.rawValue), UInt32(ABI.RouteType.throw), #line),
            ("RT_TABLE_MAIN", RouteTable.main.rawValue, ABI.RouteTable.main, #line),
            ("RT_SCOPE_UNIVERSE", UInt32(Scope.universe), UInt32(ABI.Scope.universe), #line),
            ("ARPHRD_ETHER", UInt32(HardwareType.ethernet.rawValue), UInt32(ABI.HardwareType.ether), #line),
            ("ARPHRD_LOOPBACK", UInt32(HardwareType.loopback.rawValue), UInt32(ABI.HardwareType.loopback), #line),
            ("ARPHRD_NONE", UInt32(HardwareType.none.rawValue), UInt32(ABI.HardwareType.none), #line),
        ]

        // Then
        for row in rows {
            XCTAssertEqual(row.actual, row.expected, row.name, line: row.line)
        }
    }
}
