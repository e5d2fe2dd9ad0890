import ReachabilityCore
import XCTest
@testable import ReachabilityEngine

/// One family's active-check state: a new path starts over, a failure after full is checked
/// again before it is published, the back-off grows while not full.
final class ActiveCheckStateTests: XCTestCase {
    private let ra0 = CheckPath(link: 2, linkName: "ra0", gateway: IPAddress("10.77.0.1"))

    func testThatVerdictsInARowGiveTheEvidenceAndTheNextDelay() {
        // Given a followed path, then verdicts in a row (interval 300 s)
        let rows: [(verdict: Connectivity, portal: String, evidence: Connectivity?, published: String, delay: Double, line: UInt)] = [
            (.full, "", .full, "", 300, #line),
            (.limited, "", .full, "", 0, #line),  // checked again at once, full still published
            (.full, "", .full, "", 300, #line),
            (.limited, "", .full, "", 0, #line),
            (.limited, "", .limited, "", 1, #line),  // the re-check failed too
            (.limited, "", .limited, "", 2, #line),
            (.portal, "http://p/", .portal, "http://p/", 4, #line),
            (.limited, "", .limited, "", 8, #line),  // not after full: published at once
            (.full, "", .full, "", 300, #line),
            (.portal, "", .portal, "", 1, #line),  // a portal after full is no failure: published
        ]
        var state = ActiveCheckState()
        XCTAssertTrue(state.follow(ra0))
        for row in rows {
            // When
            let delay = state.record((row.verdict, row.portal), intervalSeconds: 300)

            // Then
            XCTAssertEqual(delay, row.delay, "\(row.verdict)", line: row.line)
            XCTAssertEqual(state.evidence, row.evidence, "\(row.verdict)", line: row.line)
            XCTAssertEqual(state.portalURL, row.published, "\(row.verdict)", line: row.line)
        }
    }

    func testThatANewPathForgetsTheEvidenceAndTheSamePathKeepsIt() {
        var state = ActiveCheckState()
        XCTAssertTrue(state.follow(ra0))
        _ = state.record((.full, ""), intervalSeconds: 300)
        XCTAssertFalse(state.follow(ra0), "the same path: no new check")
        XCTAssertEqual(state.evidence, .full)
        XCTAssertEqual(state.verdict, CheckEvidence(path: ra0, connectivity: .full, portalURL: ""), "the verdict names its path")

        var other = ra0
        other.gateway = IPAddress("10.77.0.254")
        XCTAssertTrue(state.follow(other), "another gateway: check at once")
        XCTAssertNil(state.evidence)
        XCTAssertNil(state.verdict)

        XCTAssertFalse(state.follow(nil), "no route: no check")
        XCTAssertNil(state.evidence)
        XCTAssertNil(state.path)
    }

    func testThatTheSessionComesWithItsVerdictAndTheNextCheckIsWhenItRunsOut() {
        // Given a followed path, full
        var state = ActiveCheckState()
        XCTAssertTrue(state.follow(ra0))
        _ = state.record((.full, ""), intervalSeconds: 300)

        // When a check comes with a session of 120 s
        let session = CaptivePortalSessionReading(session: CaptivePortalSession(secondsRemaining: 120), readAt: 7)
        let delay = state.record((.full, ""), session: session, intervalSeconds: 300)

        // Then the next check is when it runs out, and the verdict carries it
        XCTAssertEqual(delay, 120)
        XCTAssertEqual(state.verdict?.session, session)
        // and a check without one forgets it
        XCTAssertEqual(state.record((.portal, ""), intervalSeconds: 300), 1)
        XCTAssertNil(state.verdict?.session)
    }
}
