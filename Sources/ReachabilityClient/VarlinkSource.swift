#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityCore
import SystemSupport

/// Follows the machine's reachability through the daemon's Varlink socket
/// (`org.reachabilityd.Reachability.Subscribe`), for processes without a system bus: a
/// container with `/run/reachabilityd` bind-mounted, early boot. Each reply is a snapshot; while
/// the socket cannot be reached, or its connection ends, the status is `.unknown` (the reason
/// says why) and it connects again after 0.1 s, doubling up to every 5 s. Confined to `queue`.
///
/// Answers the machine only: an address's or a host name's manager on this source stays
/// `.unknown`, its reason saying so.
final class VarlinkSource: SnapshotSource, @unchecked Sendable {
    /// The socket the daemon serves, unless `$REACHABILITYD_SOCKET` names another.
    static var defaultPath: String {
        getenv("REACHABILITYD_SOCKET").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? VarlinkContract.socketPath
    }

    /// The daemon's socket (``defaultPath``) when the system bus's socket is not there but that
    /// socket is: what the daemon's source asks instead of the bus (a container with
    /// `/run/reachabilityd` bind-mounted, early boot). Nil when there is a bus to ask.
    /// The corresponding C function is `access`.
    static var insteadOfSystemBus: String? {
        insteadOfSystemBus(busAddress: getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }, socket: defaultPath) { access($0, F_OK) == 0 }
    }

    /// `socket` when the bus at `busAddress` (`$DBUS_SYSTEM_BUS_ADDRESS`; nil: unset) has a
    /// socket path (``BusContract/systemBusSocketPath(address:)``) where nothing `exists` and
    /// `socket` exists; else nil: a bus to ask, an address with no path to look at (abstract,
    /// TCP: the bus may well be there), or no socket either (the bus's absence is then the
    /// answer, as before).
    static func insteadOfSystemBus(busAddress: String?, socket: String, exists: (String) -> Bool) -> String? {
        guard let bus = BusContract.systemBusSocketPath(address: busAddress), !exists(bus), exists(socket) else { return nil }
        return socket
    }

    private let queue: DispatchQueue
    private let path: String
    private let target: MonitoredTarget
    private let report: SnapshotReport
    private let reconnect: RetryBackoff
    private var session: UInt64 = 0
    private var running = false
    private var descriptor: Int32 = -1
    private var reading: DescriptorReadSource?
    private var framer = VarlinkFramer()

    /// A stopped source of the socket at `path`.
    init(queue: DispatchQueue, path: String, target: MonitoredTarget, report: @escaping SnapshotReport) {
        self.queue = queue
        self.path = path
        self.target = target
        self.report = report
        reconnect = RetryBackoff(queue: queue, delays: BusHub.reconnectDelays)
    }

    func start(session: UInt64) {
        self.session = session
        running = true
        guard case .machine = target else {
            return report(.busUnavailable("the Varlink socket answers the machine's reachability only"), false, session)
        }
        connect()
    }

    func stop() {
        running = false
        reconnect.cancel()
        disconnect()
    }

    /// Connects and subscribes; on failure reports why and tries again later.
    /// The corresponding C functions are `socket`, `connect` and `send`.
    private func connect() {
        guard running else { return }
        do throws(SystemError) {
            guard let (address, length) = UnixSocketAddress.of(path) else { throw SystemError(action: "connect to \(path)", errno: EINVAL) }
            var socketAddress = address
            let descriptor = try valueOrErrno("open a socket for \(path)") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
            self.descriptor = descriptor
            try withUnsafePointer(to: &socketAddress) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { name throws(SystemError) in
                    _ = try valueOrErrno("connect to \(path)") { Glibc.connect(descriptor, name, length) }
                }
            }
            let call = VarlinkCall(method: VarlinkContract.interface + ".Subscribe", more: true).encoded
            try writeAll(call, to: descriptor, action: "subscribe on \(path)")
            let flags = try valueOrErrno("read the socket's flags") { fcntl(descriptor, F_GETFL) }
            try valueOrErrno("make the socket non-blocking") { fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
            let reading = DescriptorReadSource(descriptor: descriptor, queue: queue) { close(descriptor) }
            self.reading = reading
            reading.start { [weak self] in self?.readAvailable() }
        } catch {
            lost("no Varlink socket (\(error))")
        }
    }

    /// Reads the replies that arrived; each complete one is the daemon's state.
    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0, errno == EAGAIN || errno == EINTR { return }
        guard count > 0 else { return lost("reachabilityd closed the Varlink connection") }
        framer.append(buffer[..<count])
        do throws(VarlinkError) {
            while let message = try framer.next() {
                let reply = try VarlinkReply(decoding: message)
                if let error = reply.error { return lost("reachabilityd answered \(error)") }
                guard case .object(let state)? = reply.parameters["state"] else { continue }
                reconnect.reset()
                report(ReachabilitySnapshot(varlinkState: state), true, session)
            }
        } catch {
            lost("reachabilityd sent what is no Varlink reply (\(error))")
        }
    }

    /// The connection ended or never was: `.unknown` with `why`, and a new try later.
    private func lost(_ why: String) {
        disconnect()
        guard running else { return }
        report(.busUnavailable(why), false, session)
        reconnect.schedule { [weak self] in self?.connect() }
    }

    private func disconnect() {
        if let reading {
            reading.cancel()
        } else if descriptor >= 0 {
            close(descriptor)
        }
        reading = nil
        descriptor = -1
        framer = VarlinkFramer()
    }
}
