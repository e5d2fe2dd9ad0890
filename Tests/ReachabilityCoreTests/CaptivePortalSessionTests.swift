@testable import ReachabilityCore
import XCTest

/// The captive-portal session (RFC 8908 §5): what an API's JSON gives, how `seconds-remaining`
/// counts down between reads, and when the check runs because the session runs out.
final class CaptivePortalSessionTests: XCTestCase {
    func testThatOnlyTheKeysTheAPIGaveInTheirRFCFormsAreKept() {
        // Given an API's JSON object, Then the session
        let rows: [(body: String, session: CaptivePortalSession, line: UInt)] = [
            (#"{"captive": false}"#, CaptivePortalSession(), #line),
            (
                #"{"captive": false, "seconds-remaining": 326, "bytes-remaining": 65536, "venue-info-url": "https://flight.example/", "can-extend-session": true}"#,
                CaptivePortalSession(secondsRemaining: 326, bytesRemaining: 65536, venueInfoURL: "https://flight.example/", canExtendSession: true), #line
            ),
            (#"{"captive": true, "can-extend-session": false}"#, CaptivePortalSession(canExtendSession: false), #line),
            (#"{"captive": false, "seconds-remaining": 0}"#, CaptivePortalSession(secondsRemaining: 0), #line),
            (#"{"captive": false, "bytes-remaining": 18446744073709549568}"#, CaptivePortalSession(bytesRemaining: 18_446_744_073_709_549_568), #line),
            // Not a whole number from 0 to 2^64-1: left out.
            (#"{"captive": false, "seconds-remaining": -5}"#, CaptivePortalSession(), #line),
            (#"{"captive": false, "seconds-remaining": 1.5}"#, CaptivePortalSession(), #line),
            (#"{"captive": false, "seconds-remaining": "300"}"#, CaptivePortalSession(), #line),
            (#"{"captive": false, "bytes-remaining": 1e20}"#, CaptivePortalSession(), #line),
            // An exponent that makes a whole number is one.
            (#"{"captive": false, "seconds-remaining": 3e2}"#, CaptivePortalSession(secondsRemaining: 300), #line),
            // The venue's page is https only, as the user portal's.
            (#"{"captive": false, "venue-info-url": "http://flight.example/"}"#, CaptivePortalSession(), #line),
            (#"{"captive": false, "venue-info-url": "javascript:alert(1)"}"#, CaptivePortalSession(), #line),
            (#"{"captive": false, "venue-info-url": "HTTPS://v/"}"#, CaptivePortalSession(venueInfoURL: "HTTPS://v/"), #line),
            (#"{"captive": false, "venue-info-url": 7}"#, CaptivePortalSession(), #line),
            (#"{"captive": false, "can-extend-session": "yes"}"#, CaptivePortalSession(), #line),
        ]
        for row in rows {
            // When the API answers it
            let answer = CaptivePortalAPIAnswer(.response(status: 200, redirect: nil, body: Array(row.body.utf8)))
            XCTAssertEqual(answer?.session, row.session, row.body, line: row.line)
        }
    }

    func testThatTheMarksAreEachMinuteInTheLast16MinutesThenEighthsOfEachDoubling() {
        // Given seconds left, Then the mark at or above them and the mark below them
        let rows: [(seconds: UInt64, atOrAbove: UInt64, below: UInt64, line: UInt)] = [
            (1, 60, 0, #line),
            (59, 60, 0, #line),
            (60, 60, 0, #line),
            (61, 120, 60, #line),
            (900, 900, 840, #line),
            (960, 960, 900, #line),  // 16 minutes: the last one-minute step
            (961, 1080, 960, #line),  // then 2 minutes apart up to 32 minutes
            (1920, 1920, 1800, #line),
            (1921, 2160, 1920, #line),  // then 4 minutes apart
            (86_400, 92_160, 84_480, #line),  // a day: 128 minutes apart
            (UInt64.max, UInt64.max, UInt64.max / (60 << 53) * (60 << 53), #line),  // past the marks: as it is
        ]
        for row in rows {
            XCTAssertEqual(CaptivePortalSessionReading.mark(atOrAbove: row.seconds), row.atOrAbove, "at or above \(row.seconds)", line: row.line)
            XCTAssertEqual(CaptivePortalSessionReading.mark(below: row.seconds), row.below, "below \(row.seconds)", line: row.line)
        }
    }

    func testThatSecondsRemainingCountsDownFromMarkToMarkAndNeverAboveTheRead() {
        // Given a session read at 100 s of boot time with 1000 s left and 5 bytes
        let reading = CaptivePortalSessionReading(
            session: CaptivePortalSession(secondsRemaining: 1000, bytesRemaining: 5, venueInfoURL: "https://v/"), readAt: 100
        )
        // When it is published at `now`, Then its seconds-remaining and when that next changes
        let rows: [(now: Double, seconds: UInt64, next: Double?, line: UInt)] = [
            (100, 1000, 140, #line),  // as read, until the next mark (960) is reached
            (139.9, 1000, 140, #line),
            (140, 960, 200, #line),  // exact at the mark
            (140.5, 960, 200, #line),  // then held until the next: at most a minute high
            (1040, 60, 1100, #line),
            (1099.5, 60, 1100, #line),
            (1100, 0, nil, #line),  // ran out
            (5000, 0, nil, #line),
        ]
        for row in rows {
            let published = reading.published(at: row.now)
            XCTAssertEqual(published.secondsRemaining, row.seconds, "at \(row.now)", line: row.line)
            XCTAssertEqual(published.bytesRemaining, 5, "bytes are the read's", line: row.line)
            XCTAssertEqual(published.venueInfoURL, "https://v/", line: row.line)
            XCTAssertEqual(reading.nextChange(after: row.now), row.next, "at \(row.now)", line: row.line)
        }
        // And a session without seconds-remaining never changes
        let untimed = CaptivePortalSessionReading(session: CaptivePortalSession(canExtendSession: true), readAt: 0)
        XCTAssertEqual(untimed.published(at: 1e6), CaptivePortalSession(canExtendSession: true))
        XCTAssertNil(untimed.nextChange(after: 1e6))
    }

    func testThatADaylongSessionIsAnnouncedAboutSeventyTimes() {
        // Given a day's session, When it is followed from change to change
        let reading = CaptivePortalSessionReading(session: CaptivePortalSession(secondsRemaining: 86_400), readAt: 0)
        var announced: [UInt64] = []
        var now = 0.0
        while let next = reading.nextChange(after: now) {
            XCTAssertGreaterThan(next, now)
            now = next
            announced.append(reading.published(at: now).secondsRemaining ?? 0)
        }
        // Then each announcement is the time left exactly, never more than an eighth (or a
        // minute) below the one before, and the last is 0
        XCTAssertEqual(announced.last, 0)
        XCTAssertEqual(announced.count, 68)
        for (before, after) in zip([86_400] + announced, announced) {
            XCTAssertLessThanOrEqual(before - after, max(60, before / 8), "\(before) -> \(after)")
        }
    }

    func testThatTheCheckRunsWhenTheSessionRunsOutButNoMoreThanOncePerSecond() {
        // Given a verdict, the back-off's attempt, the interval and the session's seconds left,
        // Then the seconds to the next check
        let rows: [(verdict: Connectivity, attempt: Int, interval: Double, session: UInt64?, delay: Double, line: UInt)] = [
            (.full, 0, 300, nil, 300, #line),
            (.full, 0, 300, 120, 120, #line),  // the session runs out before the interval
            (.full, 0, 300, 900, 300, #line),
            (.portal, 2, 300, 60, 4, #line),  // the back-off comes first
            (.full, 0, 300, 0, 1, #line),  // an API saying none is left: once a second at most
        ]
        for row in rows {
            let delay = ConnectivityCheckSchedule.delay(after: row.verdict, attempt: row.attempt, intervalSeconds: row.interval, sessionSecondsRemaining: row.session)
            XCTAssertEqual(delay, row.delay, line: row.line)
        }
    }
}
