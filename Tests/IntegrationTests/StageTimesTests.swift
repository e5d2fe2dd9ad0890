import Foundation
import ReachabilityCore
import TestSupport
import XCTest

/// `REACHABILITYD_STAGE_TIMES=PATH`, the benchmark's stage pass (docs/benchmarks.md): each change
/// of `Status` becomes one line of the `CLOCK_MONOTONIC` nanoseconds of its five stages.
final class StageTimesTests: DaemonTestCase {
    func testAStatusChangeFromARouteEventRecordsItsFiveStagesInOrder() throws {
        // Given a daemon asked for its stage times, not reachable yet
        let path = try XCTUnwrap(directory).path + "/stage-times"
        try startDaemon(environment: ["REACHABILITYD_STAGE_TIMES": path])
        try configureIPv4Link()

        // When the default route comes
        try addIPv4DefaultRoute()
        // (The status is read on the queue that published it: the line is written by then.)
        try waitForStatus(.reachableViaEthernet)

        // Then the change's line holds the five stages, each reached, in order
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let stages = try XCTUnwrap(lines.last, "no stage line in \(path)").split(separator: " ").compactMap { UInt64($0) }
        XCTAssertEqual(stages.count, 5, "\(lines)")
        XCTAssertFalse(stages.contains(0), "a stage not reached: \(lines)")
        XCTAssertEqual(stages, stages.sorted(), "stages out of order: \(lines)")
    }
}
