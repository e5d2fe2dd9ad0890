import Dispatch
import Foundation
import ReachabilityCore
import TestSupport
import XCTest

@testable import reachabilityd

/// The metrics file's lifetime: rewritten on its timer while a directory is set (node_exporter's
/// mtime then shows the daemon alive), moved with the setting, removed when it is emptied.
final class MetricsTextfileTests: XCTestCase {
    func testTheFileIsRewrittenOnItsTimerUntilTheDirectoryIsEmptied() throws {
        // Given a metrics file in a directory, rewritten every 100 ms, whose text counts its renders
        let directory = try TemporaryDirectory(prefix: "rtest-textfile")
        defer { directory.remove() }
        let queue = DispatchQueue(label: "test.metrics")
        let renders = Counter()
        let file = MetricsTextfile(queue: queue, interval: .milliseconds(100)) { "reachabilityd_test \(renders.next())\n" }
        let path = directory.file(PrometheusMetrics.fileName)
        func read() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        // When the directory is set, without any change published
        queue.sync { file.directory = directory.path }

        // Then the file appears and is rewritten without one
        try Poll.until("a second rewrite", observe: read) { $0 == "reachabilityd_test 2\n" }

        // When the setting is emptied, the file goes and the rewrites stop
        queue.sync { file.directory = "" }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        let rendered = renders.value
        // (three intervals: an absence can only be waited for)
        Thread.sleep(forTimeInterval: 0.3)
        queue.sync {}
        XCTAssertEqual(renders.value, rendered, "no rewrite without a directory")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    /// A count shared with the render closure (called on the file's queue).
    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func next() -> Int { lock.withLock { count += 1; return count } }
    }
}
