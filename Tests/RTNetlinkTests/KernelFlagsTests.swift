import RTNetlink
import XCTest

/// The flag and type numbers the module exports are the kernel's.
final class KernelFlagsTests: XCTestCase {
    func testThatExportedNumbersAreTheKernelABI() {
        // Given, When
        let rows: [(name: String, actual: UInt32, expected: UInt32, line: UInt)] = [
            ("IFF_UP", LinkFlag.up, ABI.LinkFlag.up, #line),
            ("IFF_LOWER_UP", LinkFlag.lowerUp, ABI.LinkFlag.lowerUp, #line),
            ("IFF_LOOPBACK", LinkFlag.loopback, ABI.LinkFlag.loopback, #line),
            ("IFA_F_TENTATIVE", AddressFlag.tentative, ABI.AddressFlag.tentative, #line),
            ("IFA_F_DADFAILED", AddressFlag.duplicateAddressDetectionFailed, ABI.AddressFlag.duplicateAddressDetectionFailed, #line),
            ("RTNH_F_LINKDOWN", RouteFlag.linkDown, ABI.RouteFlag.linkDown, #line),
            ("RTN_UNICAST", UInt32(RouteTypeNumber.unicast), UInt32(ABI.RouteType.unicast), #line),
            ("RTN_LOCAL", UInt32(RouteTypeNumber.local), UInt32(ABI.RouteType.local), #line),
            ("RTN_BLACKHOLE", UInt32(RouteTypeNumber.blackhole), UInt32(ABI.RouteType.blackhole), #line),
            ("RTN_UNREACHABLE", UInt32(RouteTypeNumber.unreachable), UInt32(ABI.RouteType.unreachable), #line),
            ("RTN_PROHIBIT", UInt32(RouteTypeNumber.prohibit), UInt32(ABI.RouteType.prohibit), #line),
            ("RTN_THROW", UInt32(RouteTypeNumber.throw), UInt32(ABI.RouteType.throw), #line),
            ("RT_SCOPE_UNIVERSE", UInt32(Scope.universe), UInt32(ABI.Scope.universe), #line),
            ("ARPHRD_LOOPBACK", UInt32(LinkFlag.loopbackHardwareType), UInt32(ABI.HardwareType.loopback), #line),
        ]

        // Then
        for row in rows {
            XCTAssertEqual(row.actual, row.expected, row.name, line: row.line)
        }
    }
}
