import ReachabilityCore
import ReachabilityService
import XCTest

/// Which journal entry a published change makes: its `MESSAGE_ID` and fields.
final class JournalFieldsTests: XCTestCase {
    private func snapshot(_ status: ReachabilityStatus, ipv4: Connectivity? = nil, reason: String = "default route") -> ReachabilitySnapshot {
        ReachabilitySnapshot(
            status: status, isIPv4Reachable: status != .notReachable, isIPv6Reachable: false, interface: status == .notReachable ? "" : "eth0",
            transport: status == .notReachable ? nil : .ethernet, isMetered: false, reason: reason, ipv4Evidence: ipv4,
            captivePortal: ipv4 == .portal ? "https://portal.example/" : ""
        )
    }

    func testTheEntryNamesWhatChanged() {
        let status = JournalLog.statusChangedMessageID, connectivity = JournalLog.connectivityChangedMessageID
        let rows: [(previous: ReachabilitySnapshot?, next: ReachabilitySnapshot, messageID: String?, line: UInt)] = [
            (nil, snapshot(.notReachable), status, #line),
            (snapshot(.notReachable), snapshot(.reachableViaEthernet), status, #line),
            (snapshot(.reachableViaEthernet), snapshot(.reachableViaEthernet, ipv4: .portal), connectivity, #line),
            (snapshot(.reachableViaEthernet, ipv4: .portal), snapshot(.notReachable), status, #line),
            (snapshot(.reachableViaEthernet), snapshot(.reachableViaEthernet, reason: "another gateway"), nil, #line),
        ]
        for row in rows {
            let entry = JournalLog.publishedFields(row.next, previous: row.previous)
            XCTAssertNotNil(entry, line: row.line)
            let fields = Dictionary(uniqueKeysWithValues: (entry ?? []).map { ($0.name, $0.value) })
            XCTAssertEqual(fields["MESSAGE_ID"], row.messageID, line: row.line)
            XCTAssertEqual(fields["REACHABILITY_STATUS"], row.next.status.rawValue, line: row.line)
            XCTAssertEqual(fields["REACHABILITY_CONNECTIVITY"], row.next.connectivity.rawValue, line: row.line)
            XCTAssertEqual(fields["REACHABILITY_DNS"], row.next.dns.rawValue, line: row.line)
            XCTAssertEqual(fields["REACHABILITY_CAPTIVE_PORTAL"], row.next.captivePortal, line: row.line)
        }
    }

    func testAChangeTheEntryDoesNotNameWritesNoEntry() {
        var next = snapshot(.reachableViaEthernet)
        next.interfaces = [NetworkInterface(name: "veth7", index: 7, transport: .ethernet, operational: .up)]
        XCTAssertNil(JournalLog.publishedFields(next, previous: snapshot(.reachableViaEthernet)))
    }
}
