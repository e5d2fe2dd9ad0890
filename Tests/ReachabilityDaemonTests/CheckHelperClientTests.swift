#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import ReachabilityCore
import Synchronization
import TestSupport
import XCTest

@testable import reachabilityd

/// The daemon's side of the check helper against a forged helper (a Python script on the
/// socket pair's end, as a compromised helper would answer): what it sends reaches the engine
/// only as a check the engine can hold.
final class CheckHelperClientTests: XCTestCase {
    func testAHelperAnsweringNaNSecondsGetsAFailedCheckNotANaN() throws {
        // Given a helper that answers every exchange "HTTP 204 in NaN seconds"
        let helper = try Self.forgedHelper(seconds: "float('nan')")
        defer { try? FileManager.default.removeItem(atPath: helper) }
        let queue = DispatchQueue(label: "CheckHelperClientTests")
        let client = CheckHelperClient(queue: queue, executable: helper)
        // (Its helper is ended on its queue.)
        defer { queue.sync { client.releaseResources() } }
        let answered = expectation(description: "the exchange answered")
        let answer = Mutex<(HTTPCheckOutcome, Double)?>(nil)

        // When the daemon asks it for an exchange
        queue.sync {
            _ = client.start(HTTPCheckRequest(url: "http://check.example/", family: .ipv4, interfaceName: "lo", timeoutSeconds: 5)) { outcome, seconds, _ in
                answer.withLock { $0 = (outcome, seconds) }
                answered.fulfill()
            }
        }
        wait(for: [answered], timeout: 30)

        // Then the exchange failed, saying why, in a duration the engine can print
        let (outcome, seconds) = try XCTUnwrap(answer.withLock { $0 })
        XCTAssertTrue(seconds.isFinite, "seconds: \(seconds)")
        guard case .failed(let why, _) = outcome else { return XCTFail("delivered: \(outcome)") }
        XCTAssertTrue(why.contains("seconds"), why)
    }

    func testARequestTheHelperWouldRefuseFailsWithoutReachingIt() throws {
        // Given a client whose helper would be a program that does not exist
        let queue = DispatchQueue(label: "CheckHelperClientTests")
        let client = CheckHelperClient(queue: queue, executable: "/nonexistent/reachabilityd")
        let answered = expectation(description: "the exchange answered")
        let failure = Mutex<String?>(nil)

        // When it is asked for an exchange of a URL with a control character (an API's URI
        // comes from the network)
        queue.sync {
            _ = client.start(HTTPCheckRequest(url: "https://portal.example/\u{1B}[2J", family: .ipv6, interfaceName: "eth0", timeoutSeconds: 5)) { outcome, _, _ in
                if case .failed(let why, _) = outcome { failure.withLock { $0 = why } }
                answered.fulfill()
            }
        }
        wait(for: [answered], timeout: 10)

        // Then it failed saying so, before any helper was started
        let why = try XCTUnwrap(failure.withLock { $0 })
        XCTAssertTrue(why.hasPrefix("the request cannot go to the check helper: url holds a control character"), why)
        XCTAssertNil(queue.sync { client.unavailability })
    }

    func testTheHelpersLookupsReachNoUnixSocket() throws {
        try XCTSkipUnless(getuid() == 0, "a mount namespace of its own takes root")
        // Given the real helper in a mount namespace whose /run holds a listener where glibc's
        // resolver looks for nscd (/var/run/nscd/socket), which notes any connection
        let directory = NSTemporaryDirectory() + "check-helper-unix-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let connected = directory + "/connected", wrapper = directory + "/helper", namespaced = directory + "/helper.py"
        try "#!/bin/sh\nexec /usr/bin/unshare --mount --propagation private /usr/bin/python3 \(namespaced)\n".write(toFile: wrapper, atomically: true, encoding: .utf8)
        let script = """
            import os, socket, subprocess
            subprocess.run(['mount', '-t', 'tmpfs', 'tmpfs', '/run'], check=True)
            os.makedirs('/run/nscd')
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind('/run/nscd/socket')
            listener.listen(8)
            listener.settimeout(0.2)
            helper = os.fork()
            if helper == 0:
                os.execve('\(try TestPaths.daemonBinary())', ['reachabilityd', '--connectivity-check-helper'], {})
            while os.waitpid(helper, os.WNOHANG) == (0, 0):
                try:
                    connection, _ = listener.accept()
                    connection.close()
                    open('\(connected)', 'w').close()
                except socket.timeout:
                    pass
            """
        try script.write(toFile: namespaced, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(wrapper, 0o755), 0)
        let queue = DispatchQueue(label: "CheckHelperClientTests")
        let client = CheckHelperClient(queue: queue, executable: wrapper)
        defer { queue.sync { client.releaseResources() } }

        // When it looks a name up
        let answered = expectation(description: "the lookup answered")
        queue.sync { client.lookUpAddresses(of: "localhost", family: .ipv4) { _ in answered.fulfill() } }
        wait(for: [answered], timeout: 60)

        // Then nothing connected to the listener
        XCTAssertFalse(FileManager.default.fileExists(atPath: connected), "the helper connected to a Unix socket (nscd's)")
    }

    /// A script that answers each exchange on descriptor 3 with status 204 in `seconds` (a
    /// Python expression), as the wire format says.
    private static func forgedHelper(seconds: String) throws -> String {
        let path = NSTemporaryDirectory() + "forged-check-helper-\(getpid()).py"
        let script = """
            #!/usr/bin/python3
            import socket, struct
            s = socket.socket(fileno=3)
            while True:
                request = s.recv(65536)
                if not request:
                    break
                if request[0] == 1:
                    token = request[1:9]
                    s.send(bytes([4]) + token + bytes([0]) + struct.pack('<q', 204) + bytes([0]) + struct.pack('<I', 0)
                           + struct.pack('<d', \(seconds)) + bytes([0]))
            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(path, 0o755), 0)
        return path
    }
}
