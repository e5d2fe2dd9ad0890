#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
@testable import SystemSupport
import XCTest

/// ``FollowedPath`` in a directory of its own, changed the ways resolvconf, NetworkManager and
/// systemd-resolved change `/etc/resolv.conf`.
final class FollowedPathTests: XCTestCase {
    private var directory = ""
    private let queue = DispatchQueue(label: "FollowedPathTests")
    /// Fulfilled by the next call back.
    private let calls = CallCounter()

    /// Wakes the test waiting for the next call back.
    final class CallCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var waiting: XCTestExpectation?

        func expect(_ expectation: XCTestExpectation) { lock.withLock { waiting = expectation } }
        func called() { lock.withLock { waiting?.fulfill(); waiting = nil } }
    }

    override func setUp() {
        var template = Array("/tmp/followed-path-XXXXXX".utf8CString)
        directory = String(cString: mkdtemp(&template))
    }

    override func tearDown() {
        XCTAssertEqual(system("rm -rf '\(directory)'"), 0)
    }

    private func follow(_ path: String) throws -> FollowedPath {
        let followed = try FollowedPath(path: path, queue: queue) { [calls] in calls.called() }
        queue.sync { followed.start() }
        return followed
    }

    /// Runs `change` and waits for the call back it must cause.
    private func expectCallBack(_ what: String, line: UInt = #line, _ change: () -> Void) {
        let called = expectation(description: what)
        calls.expect(called)
        change()
        wait(for: [called], timeout: 10)
    }

    private func write(_ text: String, to path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0, "open \(path)")
        XCTAssertNoThrow(try writeAll(Array(text.utf8), to: descriptor, action: "write \(path)"))
        close(descriptor)
    }

    /// Replaces `path` as the tools do: a new file (or link) written beside it, renamed over it.
    private func replace(_ path: String, withLinkTo target: String? = nil, text: String = "") {
        let temporary = path + ".new"
        if let target { XCTAssertEqual(symlink(target, temporary), 0) } else { write(text, to: temporary) }
        XCTAssertEqual(rename(temporary, path), 0)
    }

    func testAFileWrittenInPlaceAndReplacedByRename() throws {
        let path = directory + "/resolv.conf"
        write("nameserver 192.0.2.1\n", to: path)
        let followed = try follow(path)
        expectCallBack("written in place") { write("nameserver 192.0.2.2\n", to: path) }
        expectCallBack("replaced by rename") { replace(path, text: "nameserver 192.0.2.3\n") }
        expectCallBack("the replacement written in place") { write("nameserver 192.0.2.4\n", to: path) }
        expectCallBack("deleted") { XCTAssertEqual(unlink(path), 0) }
        expectCallBack("created again") { write("nameserver 192.0.2.5\n", to: path) }
        queue.sync { followed.cancel() }
    }

    func testASymbolicLinkRepointed() throws {
        let path = directory + "/resolv.conf"
        XCTAssertEqual(mkdir(directory + "/a", 0o755), 0)
        XCTAssertEqual(mkdir(directory + "/b", 0o755), 0)
        write("nameserver 192.0.2.1\n", to: directory + "/a/resolv.conf")
        write("nameserver 192.0.2.2\n", to: directory + "/b/resolv.conf")
        XCTAssertEqual(symlink("a/resolv.conf", path), 0)
        let followed = try follow(path)
        expectCallBack("the link's target written") { write("nameserver 192.0.2.3\n", to: directory + "/a/resolv.conf") }
        expectCallBack("the link re-pointed") { replace(path, withLinkTo: directory + "/b/resolv.conf") }
        expectCallBack("the new target written") { write("nameserver 192.0.2.4\n", to: directory + "/b/resolv.conf") }
        expectCallBack("the new target replaced by rename") { replace(directory + "/b/resolv.conf", text: "nameserver 192.0.2.5\n") }
        queue.sync { followed.cancel() }
    }

    func testADirectoryThatAppearsLater() throws {
        // /etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf before systemd-resolved has started.
        let path = directory + "/resolv.conf"
        XCTAssertEqual(symlink(directory + "/run/resolve/stub-resolv.conf", path), 0)
        let followed = try follow(path)
        expectCallBack("the first directory created") { XCTAssertEqual(mkdir(directory + "/run", 0o755), 0) }
        expectCallBack("the second directory created") { XCTAssertEqual(mkdir(directory + "/run/resolve", 0o755), 0) }
        expectCallBack("the file created") { write("nameserver 127.0.0.53\n", to: directory + "/run/resolve/stub-resolv.conf") }
        expectCallBack("the file written again") { write("nameserver 127.0.0.54\n", to: directory + "/run/resolve/stub-resolv.conf") }
        queue.sync { followed.cancel() }
    }

    func testChainOfLinks() {
        XCTAssertEqual(FollowedPath.directory(of: "/etc/resolv.conf"), "/etc")
        XCTAssertEqual(FollowedPath.directory(of: "/resolv.conf"), "/")
        XCTAssertEqual(FollowedPath.directory(of: "resolv.conf"), ".")
    }
}
