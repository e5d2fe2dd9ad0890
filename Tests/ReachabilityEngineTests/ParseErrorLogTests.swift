import RTNetlink
import XCTest
@testable import ReachabilityEngine

/// "Each distinct parse error logged once": a repeated error is written once, a new one always.
final class ParseErrorLogTests: XCTestCase {
    /// One row: errors reported batch by batch, and the lines that must be written.
    struct Row {
        var name: String
        var batches: [[NetlinkParseError]]
        var lines: [String]
        var line: UInt

        init(_ name: String, _ batches: [[NetlinkParseError]], _ lines: [String], line: UInt = #line) {
            self.name = name
            self.batches = batches
            self.lines = lines
            self.line = line
        }
    }

    static let truncated = NetlinkParseError.truncatedPayload(messageType: 16, needed: 16, available: 3)
    static let truncatedElsewhere = NetlinkParseError.truncatedPayload(messageType: 20, needed: 8, available: 3)
    static let badAttribute = NetlinkParseError.invalidAttributeValue(messageType: 24, attributeType: 4, length: 3)

    static func written(_ error: NetlinkParseError) -> String {
        "Failed to parse rtnetlink message: \(error), ignoring."
    }

    static let rows: [Row] = [
        Row("nothing to report", [[], []], []),
        Row("one error", [[truncated]], [written(truncated)]),
        Row("the same error in a later batch", [[truncated], [truncated], [truncated]], [written(truncated)]),
        Row("the same error twice in one batch", [[truncated, truncated]], [written(truncated)]),
        Row("a distinct error after a repeated one", [[truncated], [truncated, badAttribute]], [written(truncated), written(badAttribute)]),
        Row("the same kind of error with other values is distinct", [[truncated], [truncatedElsewhere]], [written(truncated), written(truncatedElsewhere)]),
        Row("order of first appearance", [[badAttribute, truncated], [truncated, badAttribute]], [written(badAttribute), written(truncated)]),
    ]

    func testThatEachDistinctParseErrorIsLoggedExactlyOnce() {
        for row in Self.rows {
            // Given
            var lines: [String] = []
            var log = ParseErrorLog { lines.append($0) }

            // When
            for batch in row.batches { log.report(batch, parsing: "rtnetlink message") }

            // Then
            XCTAssertEqual(lines, row.lines, row.name, line: row.line)
        }
    }

    func testThatAnErrorSeenInEventsIsNotLoggedAgainFromADump() {
        // Given
        var lines: [String] = []
        var log = ParseErrorLog { lines.append($0) }
        log.report([Self.truncated], parsing: "rtnetlink message")

        // When
        log.report([Self.truncated, Self.badAttribute], parsing: "rtnetlink dump message")

        // Then
        XCTAssertEqual(lines, [
            Self.written(Self.truncated),
            "Failed to parse rtnetlink dump message: \(Self.badAttribute), ignoring.",
        ])
    }
}
