#if canImport(Glibc)
import Glibc
#endif
@testable import ReachabilityService
import SystemSupport
import XCTest

/// The notification socket kept open: the addresses `sd_notify` sends to, and datagrams that
/// arrive whole and in order through the one socket.
final class NotificationSocketTests: XCTestCase {
    func testThatAddressesAreSdNotifys() {
        let rows: [(value: String, name: [UInt8]?, line: UInt)] = [
            ("/run/systemd/notify", Array("/run/systemd/notify".utf8) + [0], #line),
            ("@abstract", [0] + Array("abstract".utf8), #line),
            // sd_notify refuses these (EINVAL), or knows them in a later version: it judges them.
            ("relative/path", nil, #line),
            ("/", nil, #line),
            ("@", nil, #line),
            ("", nil, #line),
            ("vsock:2:1234", nil, #line),
            ("/" + String(repeating: "x", count: 108), nil, #line),
        ]
        for row in rows {
            let address = UnixSocketAddress.of(row.value)
            guard let name = row.name else {
                XCTAssertNil(address, row.value, line: row.line)
                continue
            }
            guard let address else { return XCTFail("no address for \(row.value)", line: row.line) }
            let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
            XCTAssertEqual(Int(address.length), pathOffset + name.count, row.value, line: row.line)
            let bytes = withUnsafeBytes(of: address.address.sun_path) { Array($0.prefix(name.count)) }
            XCTAssertEqual(bytes, name, row.value, line: row.line)
        }
    }

    func testThatNotificationsArriveInOrderThroughOneSocket() throws {
        let (receiver, path) = try boundReceiver("notify")
        defer {
            close(receiver)
            unlink(path)
        }
        let sender = NotificationSocket(notifySocket: path)
        let states = ["READY=1\nSTATUS=reachable: a route", "STATUS=not-reachable: no route", "WATCHDOG=1"]
        for (number, state) in states.enumerated() { XCTAssertGreaterThan(sender.send(state, waiting: number == 0), 0, state) }
        var received: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in states {
            let count = buffer.withUnsafeMutableBytes { recv(receiver, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count >= 0 else { break }
            received.append(String(decoding: buffer.prefix(count), as: UTF8.self))
        }
        XCTAssertEqual(received, states)
    }

    func testThatAFullManagerQueueFailsAtOnceUnlessAskedToWait() throws {
        let (receiver, path) = try boundReceiver("notify-full")
        defer {
            close(receiver)
            unlink(path)
        }
        let sender = NotificationSocket(notifySocket: path)
        // Nobody reads: the queue (net.unix.max_dgram_qlen datagrams) fills, and then the next
        // notification fails with EAGAIN instead of waiting.
        var results: [Int32] = []
        for _ in 0..<100_000 {
            let result = sender.send("STATUS=reachable: a route", waiting: false)
            results.append(result)
            if result <= 0 { break }
        }
        XCTAssertEqual(results.last, -EAGAIN, "after \(results.count) notifications")
    }

    func testThatNothingIsSentWithoutAManager() {
        XCTAssertEqual(NotificationSocket(notifySocket: nil).send("READY=1", waiting: true), 0)
    }

    /// A datagram socket bound at a fresh path in the temporary directory, as the service
    /// manager's notification socket is; the caller closes it and unlinks the path.
    private func boundReceiver(_ name: String) throws -> (descriptor: Int32, path: String) {
        let path = NSTemporaryDirectory() + "\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        XCTAssertGreaterThanOrEqual(receiver, 0)
        var address = try XCTUnwrap(UnixSocketAddress.of(path), "no address for \(path)")
        let bound = withUnsafePointer(to: &address.address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, address.length) }
        }
        XCTAssertEqual(bound, 0, String(cString: strerror(errno)))
        return (receiver, path)
    }
}
