import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// The sources' release and the package's are one: `ReleaseVersion.current` against the newest
/// entry of debian/changelog.
final class ReleaseVersionTests: XCTestCase {
    func testTheReleaseIsDebianChangelogsNewestEntry() throws {
        // Given debian/changelog, whose first line is "reachabilityd (VERSION) DIST; urgency=…"
        let changelog = try String(contentsOfFile: TestPaths.repositoryRoot + "/debian/changelog", encoding: .utf8)
        let firstLine = try XCTUnwrap(changelog.split(separator: "\n").first)

        // When its version is read (the upstream part: no epoch, no Debian revision)
        let version = try XCTUnwrap(firstLine.split(separator: "(").dropFirst().first?.split(separator: ")").first)
        let upstream = version.split(separator: ":").last.map { $0.split(separator: "-").first ?? $0 } ?? version

        // Then it is the sources' release
        XCTAssertEqual(String(upstream), ReleaseVersion.current, "debian/changelog: \(firstLine)")
    }
}
