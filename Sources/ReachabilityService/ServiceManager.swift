#if canImport(Glibc)
import Glibc
#endif
import CSystemd
import Dispatch
import SystemSupport

/// The service manager's notification protocol (`sd_notify`): readiness, status text, watchdog.
/// Every call is a no-op when the daemon was not started by systemd (`$NOTIFY_SOCKET` unset).
public enum ServiceManager {
    /// `sd_notify` blocks while the manager's socket queue is full; sending from a queue of its
    /// own keeps the daemon's event loop and bus answering meanwhile. Order is kept.
    private static let notifications = DispatchQueue(label: "org.reachabilityd.notify")
    /// The socket the notifications go out of, kept open (confined to `notifications`).
    private static let socket = NotificationSocket()

    /// Sends `state` (e.g. "READY=1\nSTATUS=reachable-via-ethernet") to the service manager,
    /// without waiting for it.
    /// The corresponding C function is `sd_notify`.
    public static func notify(_ state: String) {
        notifications.async { send(state) }
    }

    private static func send(_ state: String) {
        let result = socket.send(state)
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
/// closes one per call (eleven system calls for one datagram in libsystemd 252: the ids, the
/// buffer size read and raised twice, open, send, close; one here, and there is a notification per
/// published change: docs/benchmarks.md). What it sends, where and how is `sd_notify`'s (libsystemd
/// 252): the same `$NOTIFY_SOCKET` path or abstract name (`@`), no credentials, `MSG_NOSIGNAL`,
/// blocking while the manager's queue is full. Anything else `sd_notify` knows (an address of
/// another kind, or credentials to attach because the real and effective ids differ) goes
/// through `sd_notify` itself.
///
/// Confined to one serial queue (``ServiceManager``'s).
final class NotificationSocket: @unchecked Sendable {
    /// Where notifications go: nil when `$NOTIFY_SOCKET` is unset (nothing is sent), `.other`
    /// when `sd_notify` must send them.
    private enum Destination {
        case unix(sockaddr_un, length: socklen_t)
        case other
    }

    private let destination: Destination?
    /// The open socket; -1 until the first notification.
    private var descriptor: Int32 = -1

    /// Sends to `notifySocket`: `$NOTIFY_SOCKET`, read once (the daemon never changes it; tests
    /// name their own socket), nil for none.
    init(notifySocket: String? = getenv("NOTIFY_SOCKET").map { String(cString: $0) }) {
        guard let notifySocket else {
            destination = nil
            return
        }
        // (Where the ids differ, sd_notify attaches credentials.)
        if let unix = Self.unixAddress(notifySocket), getuid() == geteuid(), getgid() == getegid() {
            destination = .unix(unix.address, length: unix.length)
        } else {
            destination = .other
        }
    }

    deinit {
        if descriptor >= 0 { _ = close(descriptor) }
    }

    /// Sends `state` as one datagram; returns 0 when no manager listens (`$NOTIFY_SOCKET`
    /// unset), a positive number when sent, a negative errno on failure (as `sd_notify` does).
    func send(_ state: String) -> Int32 {
        guard let destination else { return 0 }
        guard case .unix(var address, let length) = destination else { return sd_notify(0, state) }
        do throws(SystemError) {
            if descriptor < 0 {
                descriptor = try valueOrErrno("open the notification socket") { socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
            }
            var bytes = Array(state.utf8)
            let descriptor = descriptor
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
                            return sendmsg(descriptor, &header, Int32(MSG_NOSIGNAL))
                        }
                    }
                }
            }
            return 1
        } catch {
            return -error.errno
        }
    }

    /// The `sockaddr_un` `sd_notify` sends to for `value`: an absolute path, or an abstract name
    /// written with a leading `@`; nil for anything else (`sd_notify` judges it).
    static func unixAddress(_ value: String) -> (address: sockaddr_un, length: socklen_t)? {
        let bytes = Array(value.utf8)
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "/") || bytes[0] == UInt8(ascii: "@"), bytes.count <= capacity
        else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: bytes)
            if bytes[0] == UInt8(ascii: "@") { path[0] = 0 }
        }
        // An abstract name's length is exactly its bytes; a path's includes its NUL (as
        // libsystemd's SOCKADDR_UN_LEN: a path of the whole capacity is then refused, EINVAL).
        let pathLength = bytes[0] == UInt8(ascii: "@") ? bytes.count : bytes.count + 1
        return (address, socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathLength))
    }
}
