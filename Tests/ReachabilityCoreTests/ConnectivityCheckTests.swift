import ReachabilityCore
import XCTest

/// The active check's pure parts: verdicts, the network's API answer, the schedule, JSON and
/// the `[Connectivity]` section.
final class ConnectivityCheckVerdictTests: XCTestCase {
    func testThatEachOutcomeGivesItsVerdict() {
        let html = Array("<html>Log in</html>".utf8)
        let rows: [(outcome: HTTPCheckOutcome, expecting: String, connectivity: Connectivity, portal: String, line: UInt)] = [
            (.response(status: 204, redirect: nil, body: []), "", .full, "", #line),
            (.response(status: 200, redirect: nil, body: []), "", .portal, "", #line),  // 204 expected
            (.response(status: 200, redirect: nil, body: html), "", .portal, "", #line),
            (.response(status: 302, redirect: "http://portal/login", body: []), "", .portal, "http://portal/login", #line),
            (.response(status: 307, redirect: nil, body: []), "", .portal, "", #line),
            (.response(status: 511, redirect: nil, body: html), "", .portal, "", #line),
            (.response(status: 200, redirect: nil, body: Array("success\n".utf8)), "success", .full, "", #line),
            (.response(status: 200, redirect: nil, body: Array("succ".utf8)), "success", .portal, "", #line),
            (.response(status: 204, redirect: nil, body: []), "success", .portal, "", #line),
            (.response(status: 301, redirect: "https://login.hotel/", body: []), "success", .portal, "https://login.hotel/", #line),
            (.response(status: 302, redirect: "HTTP://Portal/", body: []), "", .portal, "HTTP://Portal/", #line),
            // A Location that is no web page is no portal's URL.
            (.response(status: 302, redirect: "javascript:alert(1)", body: []), "", .portal, "", #line),
            (.response(status: 302, redirect: "file:///etc/passwd", body: []), "", .portal, "", #line),
            (.failed("Timeout was reached"), "", .limited, "", #line),
            (.failed("Could not resolve host: check.example"), "success", .limited, "", #line),
        ]
        for row in rows {
            // When
            let verdict = ConnectivityCheckVerdict.of(row.outcome, expecting: row.expecting)

            // Then
            XCTAssertEqual(verdict.connectivity, row.connectivity, "\(row.outcome)", line: row.line)
            XCTAssertEqual(verdict.portalURL, row.portal, "\(row.outcome)", line: row.line)
        }
    }

    func testThatTheNetworksAPIOverridesTheCheckOnlyWhenCaptive() {
        let full = (connectivity: Connectivity.full, portalURL: "")
        let redirected = (connectivity: Connectivity.portal, portalURL: "http://portal/")
        let rows: [(check: (connectivity: Connectivity, portalURL: String), api: CaptivePortalAPIAnswer?, connectivity: Connectivity, portal: String, line: UInt)] = [
            (full, nil, .full, "", #line),
            (full, CaptivePortalAPIAnswer(isCaptive: false), .full, "", #line),
            (full, CaptivePortalAPIAnswer(isCaptive: true, userPortalURL: "https://p/"), .portal, "https://p/", #line),
            (redirected, CaptivePortalAPIAnswer(isCaptive: true), .portal, "http://portal/", #line),
            (redirected, CaptivePortalAPIAnswer(isCaptive: true, userPortalURL: "https://p/"), .portal, "https://p/", #line),
            ((.limited, ""), CaptivePortalAPIAnswer(isCaptive: false), .limited, "", #line),
        ]
        for row in rows {
            let verdict = ConnectivityCheckVerdict.combining(check: row.check, api: row.api)
            XCTAssertEqual(verdict.connectivity, row.connectivity, line: row.line)
            XCTAssertEqual(verdict.portalURL, row.portal, line: row.line)
        }
    }

    func testThatOnlyA200WithACaptiveBooleanIsAnAnswer() {
        let rows: [(status: Int, body: String, answer: CaptivePortalAPIAnswer?, line: UInt)] = [
            (200, #"{"captive": true, "user-portal-url": "https://p/login"}"#, CaptivePortalAPIAnswer(isCaptive: true, userPortalURL: "https://p/login"), #line),
            (
                200, #"{"captive":false,"venue-info-url":"https://v/","seconds-remaining":300}"#,
                CaptivePortalAPIAnswer(isCaptive: false, session: CaptivePortalSession(secondsRemaining: 300, venueInfoURL: "https://v/")), #line
            ),
            (200, #" {"user-portal-url": "", "captive": true} "#, CaptivePortalAPIAnswer(isCaptive: true), #line),
            // RFC 8908: the user portal is an https URI; anything else is dropped, the answer kept.
            (200, #"{"captive": true, "user-portal-url": "javascript:alert(1)"}"#, CaptivePortalAPIAnswer(isCaptive: true), #line),
            (200, #"{"captive": true, "user-portal-url": "http://p/login"}"#, CaptivePortalAPIAnswer(isCaptive: true), #line),
            (200, #"{"captive": true, "user-portal-url": "HTTPS://p/login"}"#, CaptivePortalAPIAnswer(isCaptive: true, userPortalURL: "HTTPS://p/login"), #line),
            (200, #"{"captive": true, "user-portal-url": "https//p"}"#, CaptivePortalAPIAnswer(isCaptive: true), #line),
            (200, #"{"captive": "yes"}"#, nil, #line),
            (200, #"{"user-portal-url": "https://p/"}"#, nil, #line),
            (200, #"["captive", true]"#, nil, #line),
            (200, #"{"captive": true"#, nil, #line),
            (200, "<html>", nil, #line),
            (404, #"{"captive": true}"#, nil, #line),
        ]
        for row in rows {
            XCTAssertEqual(CaptivePortalAPIAnswer(.response(status: row.status, redirect: nil, body: Array(row.body.utf8))), row.answer, row.body, line: row.line)
        }
        XCTAssertNil(CaptivePortalAPIAnswer(.failed("SSL certificate problem")))
    }

    func testThatChecksBackOffFromOneSecondToTheIntervalAndRunEveryIntervalWhileFull() {
        let rows: [(verdict: Connectivity, attempt: Int, interval: Double, delay: Double, line: UInt)] = [
            (.full, 0, 300, 300, #line),
            (.full, 7, 300, 300, #line),
            (.limited, 0, 300, 1, #line),
            (.portal, 1, 300, 2, #line),
            (.limited, 5, 300, 32, #line),
            (.limited, 8, 300, 256, #line),
            (.limited, 9, 300, 300, #line),
            (.limited, 63, 300, 300, #line),
            (.portal, 3, 5, 5, #line),
        ]
        for row in rows {
            XCTAssertEqual(ConnectivityCheckSchedule.delay(after: row.verdict, attempt: row.attempt, intervalSeconds: row.interval), row.delay, line: row.line)
        }
    }

    func testThatAPathChangeChecksAtOnceOrAtTheEndOfTheSecondAfterTheLastStart() {
        // Given the last start (nanoseconds; nil: none), When a path changes at `now`, Then the start
        let second: UInt64 = 1_000_000_000
        let rows: [(lastStart: UInt64?, now: UInt64, start: UInt64, line: UInt)] = [
            (nil, 5 * second, 5 * second, #line),  // the first check
            (2 * second, 5 * second, 5 * second, #line),  // long after the last
            (5 * second, 5 * second + 1, 6 * second, #line),  // right after: at the end of its second
            (5 * second, 6 * second - 1, 6 * second, #line),
            (5 * second, 6 * second, 6 * second, #line),  // a second on: at once
        ]
        for row in rows {
            XCTAssertEqual(ConnectivityCheckSchedule.startAfterPathChange(at: row.now, lastStart: row.lastStart), row.start, line: row.line)
        }
    }

    func testThatJSONParsesAsRFC8259Says() {
        let rows: [(text: String, value: JSONValue?, line: UInt)] = [
            ("true", .boolean(true), #line),
            (" null ", .null, #line),
            ("-1.5e2", .number(-150), #line),
            (#""a\"b\\c\/d\u00e9\ud83d\ude00\n""#, .string("a\"b\\c/dé😀\n"), #line),
            (#"{"a": [1, {"b": false}], "a": 2}"#, .object(["a": .number(2)]), #line),
            ("[]", .array([]), #line),
            ("{}", .object([:]), #line),
            ("", nil, #line),
            ("tru", nil, #line),
            ("[1,]", nil, #line),
            ("{\"a\" 1}", nil, #line),
            ("\"unterminated", nil, #line),
            ("\"control\u{01}char\"", nil, #line),
            (#""\ud83d""#, nil, #line),  // a lone surrogate
            ("1 2", nil, #line),
            ("+1", nil, #line),
            ("nan", nil, #line),
            (String(repeating: "[", count: 40) + String(repeating: "]", count: 40), nil, #line),  // too deep
        ]
        for row in rows {
            XCTAssertEqual(JSONValue.parse(Array(row.text.utf8)), row.value, row.text, line: row.line)
        }
    }

    func testThatTheConnectivitySectionParsesAndRejectsBadValues() throws {
        // Given
        let text = """
            [Reachability]
            DownDelaySec=1
            [Connectivity]
            CheckURL=http://check.example/generate_204
            CheckResponse=success
            CheckIntervalSec=60
            CheckTimeoutSec=500ms
            CaptivePortalAPI=no
            CaptivePortalAPICAFile=/etc/ssl/test-ca.pem
            """

        // When
        let settings = try ConfigurationParser.parse([("r.conf", text)]).connectivity

        // Then
        XCTAssertEqual(settings.checkURL, "http://check.example/generate_204")
        XCTAssertEqual(settings.checkResponse, "success")
        XCTAssertEqual(settings.intervalSeconds, 60)
        XCTAssertEqual(settings.timeoutSeconds, 0.5, accuracy: 1e-9)
        XCTAssertFalse(settings.queriesCaptivePortalAPI)
        XCTAssertEqual(settings.captivePortalAPICAFile, "/etc/ssl/test-ca.pem")
        XCTAssertTrue(settings.isEnabled)
        XCTAssertFalse(try ConfigurationParser.parse([("r.conf", "[Connectivity]\nCheckURL=\n")]).connectivity.isEnabled)

        let rejected: [(text: String, message: String, line: UInt)] = [
            ("CheckURL=ftp://x/", "CheckURL= expects an http:// or https:// URL", #line),
            ("CheckURL=http://", "CheckURL= expects an http:// or https:// URL", #line),
            ("CheckURL=http://a b/", "CheckURL= expects an http:// or https:// URL", #line),
            ("CheckIntervalSec=0.5", "CheckIntervalSec= expects seconds from 1 to 86400", #line),
            ("CheckIntervalSec=100000", "CheckIntervalSec= expects seconds from 1 to 86400", #line),
            ("CheckTimeoutSec=0", "CheckTimeoutSec= expects seconds from 0.1 to 300", #line),
            ("CaptivePortalAPI=maybe", "CaptivePortalAPI= expects yes or no", #line),
            ("CaptivePortalAPICAFile=ca.pem", "CaptivePortalAPICAFile= expects an absolute path", #line),
            ("DownDelaySec=1", "unknown setting \"DownDelaySec\" in [Connectivity]", #line),
        ]
        for row in rejected {
            XCTAssertThrowsError(try ConfigurationParser.parse([("r.conf", "[Connectivity]\n\(row.text)\n")]), line: row.line) { error in
                let diagnostics = (error as? InvalidConfiguration)?.diagnostics ?? []
                XCTAssertEqual(diagnostics.count, 1, line: row.line)
                XCTAssertTrue(diagnostics.first?.description.hasPrefix("r.conf:2: \(row.message)") ?? false, "\(diagnostics)", line: row.line)
            }
        }
    }
}

/// Which families a check URL can say something about.
final class ConnectivityCheckFamilyTests: XCTestCase {
    func testThatALiteralHostIsCheckedOverItsOwnFamilyOnly() {
        let rows: [(url: String, ipv4: Bool, ipv6: Bool, line: UInt)] = [
            ("http://check.example/generate_204", true, true, #line),
            ("http://10.77.0.1:8080/check", true, false, #line),
            ("https://user:pw@192.0.2.1/", true, false, #line),
            ("http://[2001:db8::1]:8080/check", false, true, #line),
            ("http://[fd00::1]/", false, true, #line),
            ("http://2001.example:80/x?y#z", true, true, #line),
        ]
        for row in rows {
            var settings = ConnectivityCheckSettings()
            settings.checkURL = row.url
            XCTAssertEqual(settings.checks(.ipv4), row.ipv4, row.url, line: row.line)
            XCTAssertEqual(settings.checks(.ipv6), row.ipv6, row.url, line: row.line)
        }
    }
}
