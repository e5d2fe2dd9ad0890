import ReachabilityCore
import XCTest

/// ``MeteredRule``: the configuration, then NetworkManager, then DHCP's ANDROID_METERED, then the
/// link type; and networkd's lease file read for ANDROID_METERED.
final class MeteredRuleTests: XCTestCase {
    func testTheFirstStepThatSaysDecides() {
        let rows: [(configured: Bool?, networkManager: NetworkManagerMetered?, dhcp: Bool, transport: Transport, expected: MeteredVerdict, line: UInt)] = [
            // Given nothing but the link type
            (nil, nil, false, .ethernet, MeteredVerdict(isMetered: false, reason: .transport), #line),
            (nil, nil, false, .wwan, MeteredVerdict(isMetered: true, reason: .transport), #line),
            // Given DHCP's ANDROID_METERED (its absence says nothing)
            (nil, nil, true, .wifi, MeteredVerdict(isMetered: true, reason: .dhcp), #line),
            // Given NetworkManager: set or guessed, over DHCP; unknown says nothing
            (nil, .no, true, .wifi, MeteredVerdict(isMetered: false, reason: .networkManager), #line),
            (nil, .guessYes, false, .wifi, MeteredVerdict(isMetered: true, reason: .networkManager), #line),
            (nil, .guessNo, false, .wwan, MeteredVerdict(isMetered: false, reason: .networkManager), #line),
            (nil, .yes, false, .ethernet, MeteredVerdict(isMetered: true, reason: .networkManager), #line),
            (nil, .unknown, true, .wifi, MeteredVerdict(isMetered: true, reason: .dhcp), #line),
            (nil, .unknown, false, .wwan, MeteredVerdict(isMetered: true, reason: .transport), #line),
            // Given a Metered= line: it wins
            (false, .yes, true, .wwan, MeteredVerdict(isMetered: false, reason: .configuration), #line),
            (true, .no, false, .ethernet, MeteredVerdict(isMetered: true, reason: .configuration), #line),
        ]
        for row in rows {
            // When
            let verdict = MeteredRule.decide(
                configured: row.configured, hints: MeteredHints(networkManager: row.networkManager, isDHCPAndroidMetered: row.dhcp), transport: row.transport
            )
            // Then
            XCTAssertEqual(verdict, row.expected, line: row.line)
        }
    }

    func testNetworkdLeaseFileCarriesAndroidMetered() {
        let hex = { (text: String) in text.utf8.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined() }
        let rows: [(lease: String, expected: Bool, line: UInt)] = [
            // Given the option holding only the marker, as dnsmasq sends it
            ("ADDRESS=192.0.2.10\nVENDOR_SPECIFIC=\(hex("ANDROID_METERED"))\n", true, #line),
            // Given the marker among other bytes, in capitals
            ("VENDOR_SPECIFIC=0102\(hex("ANDROID_METERED").uppercased())ff\nROUTER=192.0.2.1\n", true, #line),
            // Given another vendor option, none, or one that is no hexadecimal
            ("VENDOR_SPECIFIC=\(hex("ANDROID_METERE"))\n", false, #line),
            ("ADDRESS=192.0.2.10\nROUTER=192.0.2.1\n", false, #line),
            ("VENDOR_SPECIFIC=\(hex("ANDROID_METERED"))0\n", false, #line),
            ("VENDOR_SPECIFIC=zz\n", false, #line),
            // Given the marker elsewhere than in the option
            ("HOSTNAME=ANDROID_METERED\n", false, #line),
        ]
        for row in rows {
            // When, Then
            XCTAssertEqual(NetworkdLease.isAndroidMetered(leaseFile: row.lease), row.expected, line: row.line)
        }
    }
}
