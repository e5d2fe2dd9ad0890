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
/// An address's or a host name's manager resolves the name here and asks `CheckDestination`
/// for each address (``VarlinkMethodCall``, a connection per call), as the daemon's source does
/// over the bus: when the subscription starts and on every published change (the socket has no
/// signal for a route change that changes nothing published).
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
    /// The machine's snapshot as the daemon last published it: a destination's snapshot takes its
    /// evidence beyond the route (``EvidenceRule/destination(_:machine:)``).
    private var machine = ReachabilitySnapshot.unknown
    /// Checks an address or a host name with the daemon; cancelled when the connection ends.
    private lazy var checker = DestinationChecker(
        queue: queue, target: target,
        ask: { [weak self] addresses, answered in self?.askDaemon(addresses, answered: answered) },
        finished: { [weak self] snapshot in self?.checkFinished(snapshot) }
    )

    /// How long one `CheckDestination` call waits for its reply.
    private static let checkTimeout = Duration.seconds(5)

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
        checker.cancel()
        connect()
    }

    func stop() {
        running = false
        checker.cancel()
        reconnect.cancel()
        disconnect()
    }

    /// Connects and subscribes; on failure reports why and tries again later.
    /// The corresponding C function is `send`.
    private func connect() {
        guard running else { return }
        do throws(SystemError) {
            let descriptor = try VarlinkMethodCall.connect(to: path)
            self.descriptor = descriptor
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
                machine = ReachabilitySnapshot(varlinkState: state)
                switch target {
                case .machine: report(machine, true, session)
                case .address, .domain:
                    // The daemon answers; the destination's snapshot comes when its check ends.
                    report(nil, true, session)
                    checker.check()
                }
            }
        } catch {
            lost("reachabilityd sent what is no Varlink reply (\(error))")
        }
    }

    /// The connection ended or never was: `.unknown` with `why`, and a new try later.
    private func lost(_ why: String) {
        checker.cancel()
        disconnect()
        guard running else { return }
        report(.busUnavailable(why), false, session)
        reconnect.schedule { [weak self] in self?.connect() }
    }

    /// Asks `CheckDestination` for each address, away from the queue (the calls block); `answered`
    /// gets the answers in order on the queue. An address the daemon did not answer is unknown; one
    /// it rejected, not reachable.
    private func askDaemon(_ addresses: [String], answered: @escaping ([AddressAnswer]) -> Void) {
        let (path, queue) = (path, queue)
        // Called back on the queue only, where it was made.
        nonisolated(unsafe) let answered = answered
        DispatchQueue.global().async {
            let answers = addresses.map { address in
                Self.answer(VarlinkMethodCall.call(BusContract.checkDestinationMethod, parameters: ["address": .string(address)], path: path, timeout: Self.checkTimeout), address: address)
            }
            queue.async { answered(answers) }
        }
    }

    /// What the reply to `CheckDestination` says of `address`.
    private static func answer(_ reply: Result<[String: JSONValue], VarlinkCallFailure>, address: String) -> AddressAnswer {
        switch reply {
        case .success(let parameters):
            guard case .object(let destination)? = parameters["destination"] else { break }
            return AddressAnswer(address: address, checkedDestination: { key in
                if case .string(let text)? = destination[key] { text } else { "" }
            })
        case .failure(.error(let name, _)) where name == VarlinkError.invalidAddressName:
            return AddressAnswer(address: address, status: .notReachable, interface: "")
        case .failure:
            break
        }
        return AddressAnswer(address: address, status: .unknown, interface: "")
    }

    private func checkFinished(_ snapshot: ReachabilitySnapshot) {
        // A connection that ended meanwhile has already reported `.unknown`.
        if running, reading != nil { report(EvidenceRule.destination(snapshot, machine: machine), true, session) }
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
