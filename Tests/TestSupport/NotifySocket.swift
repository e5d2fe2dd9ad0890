import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bound unix datagram socket standing in for systemd's notification socket: the daemon
/// finds it through `NOTIFY_SOCKET` and reports `READY=1` to it.
package final class NotifySocket {
    /// The socket's path, the value of `NOTIFY_SOCKET`.
    package let path: String
    /// Every datagram received so far, in order.
    package private(set) var messages: [String] = []
    /// When each of `messages` was read, in `CLOCK_MONOTONIC` seconds: its arrival while
    /// ``startDraining()`` runs.
    package private(set) var arrivals: [Double] = []
    private var descriptor: Int32
    /// Guards `messages` and `descriptor` once `startDraining()` reads on another thread.
    private let lock = NSLock()
    private var drainSource: DispatchSourceRead?

    /// Creates and binds the socket.
    ///
    /// - Parameter path: where to bind it; must fit in `sun_path` (108 bytes).
    /// - Throws: `HarnessError` when `socket` or `bind` fails.
    ///
    /// The corresponding C functions are `socket` and `bind`.
    package init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else {
            throw HarnessError("Failed to create the notification socket: \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(descriptor)
            throw HarnessError("Notification socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw HarnessError("Failed to bind the notification socket at \(path): \(message)")
        }
    }

    deinit {
        close()
    }

    /// Reads every datagram queued now, without blocking, and appends it to `messages`.
    ///
    /// - Returns: all messages received so far.
    ///
    /// The corresponding C function is `recv` with `MSG_DONTWAIT`.
    @discardableResult
    package func receive() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        guard descriptor >= 0 else { return messages }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { break }
            messages.append(String(decoding: buffer[..<count], as: UTF8.self))
            arrivals.append(Monotonic.seconds())
        }
        return messages
    }

    /// Reads datagrams as they arrive, on a background queue, until `close()`.
    ///
    /// A unix datagram socket queues only `net.unix.max_dgram_qlen` datagrams (10 here, 512
    /// under systemd); beyond that the daemon's `sd_notify` blocks, and with it its event loop.
    /// Tests that make the daemon publish many statuses while the test thread is busy call this.
    package func startDraining() {
        lock.lock()
        defer { lock.unlock() }
        guard drainSource == nil, descriptor >= 0 else { return }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DispatchQueue(label: "NotifySocket.drain"))
        source.setEventHandler { [weak self] in self?.receive() }
        source.activate()
        drainSource = source
    }

    /// When each datagram holding the line `line` (e.g. `WATCHDOG=1`) arrived, in
    /// `CLOCK_MONOTONIC` seconds.
    package func arrivals(of line: String) -> [Double] {
        let messages = receive()
        lock.lock()
        defer { lock.unlock() }
        return zip(messages, arrivals).filter { $0.0.split(separator: "\n").contains(Substring(line)) }.map(\.1)
    }

    /// Whether any datagram so far holds the line `READY=1`.
    package var hasReceivedReady: Bool {
        receive().contains { $0.split(separator: "\n").contains("READY=1") }
    }

    /// Closes the socket and removes its path; harmless when repeated.
    package func close() {
        lock.lock()
        defer { lock.unlock() }
        guard descriptor >= 0 else { return }
        let closing = descriptor
        descriptor = -1
        unlink(path)
        if let source = drainSource {
            // The descriptor is closed only once the source no longer watches it.
            drainSource = nil
            source.setCancelHandler { _ = Glibc.close(closing) }
            source.cancel()
        } else {
            Glibc.close(closing)
        }
    }
}
