import ReachabilityCore
import XCTest
@testable import ReachabilityService

/// systemd-networkd's link object paths (sd-bus's label escaping of the index).
final class NetworkdLinkDescriptionsTests: XCTestCase {
    func testThatLinkPathsRoundTrip() {
        let rows: [(index: InterfaceIndex, path: String, line: UInt)] = [
            (1, "/org/freedesktop/network1/link/_31", #line),
            (2, "/org/freedesktop/network1/link/_32", #line),
            (12, "/org/freedesktop/network1/link/_312", #line),
            (2003, "/org/freedesktop/network1/link/_32003", #line),
        ]
        for row in rows {
            XCTAssertEqual(NetworkdLinkDescriptions.path(ofLink: row.index), row.path, line: row.line)
            XCTAssertEqual(NetworkdLinkDescriptions.linkIndex(ofPath: row.path), row.index, line: row.line)
        }
        for path in ["/org/freedesktop/network1/link/_3", "/org/freedesktop/network1/link/_30", "/org/freedesktop/network1/link/_3x",
                     "/org/freedesktop/network1/network/_32", "/org/freedesktop/network1/link/_32/extra"] {
            XCTAssertNil(NetworkdLinkDescriptions.linkIndex(ofPath: path), path)
        }
    }
}
