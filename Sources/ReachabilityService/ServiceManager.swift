#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import Dispatch
import Synchronization
import SystemSupport

/// The service manager's notification protocol (`sd_notify`): readiness, status text, watchdog.
/// Every call is a no-op when the daemon was not started by systemd (`$NOTIFY_SOCKET` unset).
public enum ServiceManager {
    /// A notification goes out at once, from the caller's thread, when it can without waiting;
    /// `sd_notify` blocks while the manager's socket queue is full, so then it is sent from a
    /// queue of its own, which keeps the daemon's event loop and bus answering meanwhile, and
    /// the next ones go behind it there until that queue is empty again. Order is kept.
    private static let notifications = DispatchQueue(label: "org.reachabilityd.notify")
    /// How many notifications wait on `notifications`.
    private static let waiting = Mutex(0)
    /// The socket the notifications go out of, kept open.
    private static let socket = NotificationSocket()

    /// Sends `state` (e.g. "READY=1\nSTATUS=reachable-via-ethernet") to the service manager,
    /// without waiting for it.
    /// The corresponding C function is `sd_notify`.
    public static func notify(_ state: String) {
        let result = waiting.withLock { count -> Int32? in
            if count == 0 {
                let result = socket.send(state, waiting: false)
                if result != -EAGAIN { return result }
            }
            count += 1
            return nil
        }
        if let result { return warnIfFailed(result) }
        notifications.async {
            warnIfFailed(socket.send(state, waiting: true))
            waiting.withLock { $0 -= 1 }
        }
    }

    private static func warnIfFailed(_ result: Int32) {
        if result < 0 {
            Log.warning("\(SystemError(action: "notify the service manager", errno: -result)), ignoring.")
        }
    }

    /// Starts sending `WATCHDOG=1` at half the interval systemd asked for (`$WATCHDOG_USEC`).
    ///
    /// - Returns: the timer (keep it alive), or nil when no watchdog is configured.
    /// The corresponding C function is `sd_watchdog_enabled`.
    public static func startWatchdog(queue: DispatchQueue) -> DispatchSourceTimer? {
        var interval: UInt64 = 0
        guard sd_watchdog_enabled(0, &interval) > 0, interval > 0 else { return nil }
        let period = DispatchTimeInterval.microseconds(Int(interval / 2))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + period, repeating: period)
        timer.setEventHandler { notify("WATCHDOG=1") }
        timer.activate()
        Log.debug("Watchdog enabled: pinging every \(interval / 2) µs.")
        return timer
    }
}

/// One datagram socket kept open for every notification, where `sd_notify` opens, sizes and
/// closes one per call (the ids, the buffer size read and raised, open, send, close: one system
/// call here, and there is a notification per published change; the count: docs/benchmarks.md,
/// "Where the latency goes"). What it sends, where and how is `sd_notify`'s: the same `$NOTIFY_SOCKET` path or abstract name (`@`), no credentials,
/// `MSG_NOSIGNAL`, waiting while the manager's queue is full (or, asked not to wait, failing with
/// `EAGAIN`). Anything else `sd_notify` knows (an address of another kind, or credentials to
/// attach because the real and effective ids differ) goes through `sd_notify` itself.
///
/// Immutable once made: sends may come from any thread.
package final class NotificationSocket: Sendable {
    /// Where notifications go: nil when `$NOTIFY_SOCKET` is unset (nothing is sent), `.other`
    /// when `sd_notify` must send them.
    private enum Destination: Sendable {
        case unix(sockaddr_un, length: socklen_t)
        case other
    }

    private let destination: Destination?
    /// The socket, or the negative errno of its failed opening.
    private let descriptor: Int32

    /// Sends to `notifySocket`: `$NOTIFY_SOCKET`, read once (the daemon never changes it; tests
    /// name their own socket), nil for none.
    init(notifySocket: String? = getenv("NOTIFY_SOCKET").map { String(cString: $0) }) {
        // (Where the ids differ, sd_notify attaches credentials.)
        guard let notifySocket, let unix = UnixSocketAddress.of(notifySocket), getuid() == geteuid(), getgid() == getegid() else {
            destination = notifySocket.map { _ in .other }
            descriptor = -EBADF
            return
        }
        destination = .unix(unix.address, length: unix.length)
        do throws(SystemError) {
            descriptor = try valueOrErrno("open the notification socket") { socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        } catch {
            descriptor = -error.errno
        }
    }

    deinit {
        if descriptor >= 0 { _ = close(descriptor) }
    }

    /// Sends `state` as one datagram; returns 0 when no manager listens (`$NOTIFY_SOCKET`
    /// unset), a positive number when sent, a negative errno on failure (as `sd_notify` does).
    /// Unless `waiting`, `-EAGAIN` when it would have to wait for room in the manager's queue
    /// (or when `sd_notify` must send it: it may wait).
    func send(_ state: String, waiting: Bool) -> Int32 {
        guard let destination else { return 0 }
        guard case .unix(var address, let length) = destination else { return waiting ? sd_notify(0, state) : -EAGAIN }
        guard descriptor >= 0 else { return descriptor }
        let flags = Int32(MSG_NOSIGNAL) | (waiting ? 0 : Int32(MSG_DONTWAIT))
        do throws(SystemError) {
            var bytes = Array(state.utf8)
            _ = try valueOrErrno("send to the service manager") {
                bytes.withUnsafeMutableBytes { text in
                    withUnsafeMutablePointer(to: &address) { name in
                        var vector = iovec(iov_base: text.baseAddress, iov_len: text.count)
                        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                            var header = msghdr()
                            header.msg_name = UnsafeMutableRawPointer(name)
                            header.msg_namelen = length
                            header.msg_iov = vectorPointer
                            header.msg_iovlen = 1
                            return sendmsg(descriptor, &header, flags)
                        }
                    }
                }
            }
            return 1
        } catch {
            return -error.errno
        }
    }
}
