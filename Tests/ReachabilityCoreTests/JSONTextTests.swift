import ReachabilityCore
import XCTest

/// JSON written by `JSONValue.text` (what `reachabilityctl --json` prints): sorted members,
/// escapes, and text the parser reads back as the same value.
final class JSONTextTests: XCTestCase {
    func testValuesAreWrittenCompactlyWithSortedMembers() {
        let rows: [(value: JSONValue, text: String, line: UInt)] = [
            (.null, "null", #line),
            (.boolean(true), "true", #line),
            (.number(3), "3", #line),
            (.number(-0.5), "-0.5", #line),
            (.string("a/b \"q\" \\ é\n\u{01}"), #""a/b \"q\" \\ é\n\u0001""#, #line),
            (.string("\r\t\u{1f}\u{7f}€"), #""\r\t\u001f\#u{7f}€""#, #line),
            (.array([.number(1), .string("x")]), #"[1,"x"]"#, #line),
            (.object(["status": .string("not-reachable"), "reachable": .boolean(false), "host": .null]),
             #"{"host":null,"reachable":false,"status":"not-reachable"}"#, #line),
        ]
        for row in rows {
            XCTAssertEqual(row.value.text, row.text, line: row.line)
            XCTAssertEqual(JSONValue.parse(Array(row.text.utf8)), row.value, "round trip", line: row.line)
        }
    }
}
