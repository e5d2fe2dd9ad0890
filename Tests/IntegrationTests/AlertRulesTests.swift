import Foundation
import TestSupport
import XCTest

/// The alert rules the package ships (`prometheus/reachabilityd-alerts.yml`), through Debian's
/// real promtool: they load, and their unit tests (`reachabilityd-alerts.test.yml`: outages
/// seen live and afterwards, a reboot's counter reset, flapping, DNS, portal, missing and stale
/// metrics) pass.
final class AlertRulesTests: XCTestCase {
    func testPromtoolAcceptsTheRules() throws {
        try TestPaths.requireTestTool(TestPaths.promtool)
        let result = try Command.run(TestPaths.promtool, ["check", "rules", TestPaths.alertRules])
        XCTAssertTrue(result.succeeded, result.standardOutput + result.standardError)
    }

    func testTheRulesPassTheirUnitTests() throws {
        try TestPaths.requireTestTool(TestPaths.promtool)
        let tests = TestPaths.alertRules.replacingOccurrences(of: ".yml", with: ".test.yml")
        let result = try Command.run(TestPaths.promtool, ["test", "rules", tests], timeout: .seconds(60))
        XCTAssertTrue(result.succeeded, result.standardOutput + result.standardError)
    }
}
