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
            ("IFA_F_TENTATIVE", AddressFlags.tentative.rawValue, ABI.AddressFlag.tentative, #line),
            ("IFA_F_OPTIMISTIC", AddressFlags.optimistic.rawValue, ABI.AddressFlag.optimistic, #line),
            ("NLM_F_MULTI", UInt32(NetlinkHeaderFlags.multipart.rawValue), UInt32(ABI.HeaderFlag.multipart), #line),
            ("NLM_F_DUMP_INTR", UInt32(NetlinkHeaderFlags.dumpInterrupted.rawValue), UInt32(ABI.HeaderFlag.dumpInterrupted), #line),
            ("NLM_F_REPLACE", UInt32(NetlinkHeaderFlags.replace.rawValue), UInt32(ABI.HeaderFlag.replace), #line),
            ("IFA_F_DADFAILED", AddressFlags.duplicateAddressDetectionFailed.rawValue, ABI.AddressFlag.duplicateAddressDetectionFailed, #line),
            ("RTNH_F_LINKDOWN", RouteFlags.linkDown.rawValue, ABI.RouteFlag.linkDown, #line),
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

    func testThatAMessageTypeIsLoggedByTheKernelsName() {
        // Given, When, Then
        XCTAssertEqual(NetlinkMessageType(rawValue: ABI.MessageType.newRoute).description, "RTM_NEWROUTE")
        XCTAssertEqual(NetlinkMessageType(rawValue: ABI.MessageType.error).description, "NLMSG_ERROR")
        XCTAssertEqual(NetlinkMessageType(rawValue: 9999).description, "type 9999")
    }
}
