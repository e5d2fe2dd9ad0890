import ReachabilityCore
import XCTest

/// Whose share a bus caller draws on, and whose routes its questions are asked with.
final class CallerShareTests: XCTestCase {
    func testThatTheBusUserDecidesTheShareAndTheUidAskedWith() {
        let rows: [(name: String, busUser: UInt32?, share: String, isUser: Bool, uid: UInt32?, line: UInt)] = [
            ("root: its connection's own share, asked as root", 0, ":1.7", false, 0, #line),
            ("an unprivileged user: the user's share, asked as that user", 1000, "uid 1000", true, 1000, #line),
            ("nobody: the same rule", 65534, "uid 65534", true, 65534, #line),
            ("the bus could not tell: its own share, asked as the daemon", nil, ":1.7", false, nil, #line),
        ]
        for row in rows {
            // Given a connection the bus reports as row.busUser

            // When
            let share = CallerShare(connection: ":1.7", busUser: row.busUser)

            // Then
            XCTAssertEqual(share.name, row.share, row.name, line: row.line)
            XCTAssertEqual(share.isUser, row.isUser, row.name, line: row.line)
            XCTAssertEqual(share.uid, row.uid, row.name, line: row.line)
        }
    }
}
