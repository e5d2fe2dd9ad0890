#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import ReachabilityCore
import Synchronization
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
