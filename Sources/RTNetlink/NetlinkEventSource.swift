#if canImport(Glibc)
import Glibc
#endif
import CReachabilityShims
import Dispatch
import SystemSupport

/// Everything one wake-up of the event source read: all messages that were queued.
public struct NetlinkBatch: Sendable {
    /// Parsed kernel messages, in arrival order. Empty when ``overflowed``.
    public var messages: [NetlinkMessage] = []
    /// The kernel dropped messages (`ENOBUFS`): what was queued was discarded and the reader
    /// must resynchronise from dumps.
    public var overflowed = false
    /// Messages that could not be parsed.
    public var parseErrors: [NetlinkParseError] = []
    /// Datagrams from user-space senders, ignored (only the kernel is believed).
    public var foreignDatagrams = 0
}

/// Reads a subscribed rtnetlink socket: on each wake-up it drains every queued datagram and
/// hands the whole batch to the handler once, on `queue`.
///
/// A thread of its own waits in `poll` on the socket and runs the drain and the handler with
/// `queue.sync`, that is on that thread while it holds the serial queue. A `DispatchSource`
/// would cost a second wake-up on every event: libdispatch's manager thread sees the socket
/// readable in `epoll_wait`, then wakes a worker thread to run the queue (about 60 µs of the
/// latency from a kernel event to the bus signal on a 2-vCPU VM). The queue still serialises
/// everything, so the handler can use whatever the queue owns (the sd-bus connection included).
///
/// Confined to `queue`; the handler runs there too.
public final class NetlinkEventSource: @unchecked Sendable {
    private let socket: NetlinkSocket
    private let queue: DispatchQueue
    private let handler: (NetlinkBatch) -> Void
    private let buffer: UnsafeMutableRawBufferPointer
    /// An eventfd that wakes the thread to end it.
    private let stopSignal: Int32
    /// Set on the queue by ``cancel()``; checked there before each drain.
    private var cancelled = false

    /// Creates a source reading `socket` (which it owns and closes) on `queue`.
    public init(socket: NetlinkSocket, queue: DispatchQueue, handler: @escaping (NetlinkBatch) -> Void) throws(SystemError) {
        self.socket = socket
        self.queue = queue
        self.handler = handler
        stopSignal = try valueOrErrno("create eventfd") { eventfd(0, Int32(EFD_CLOEXEC)) }
        buffer = .allocate(byteCount: 64 * 1024, alignment: 8)
    }

    /// Runs once the owner has let go and the thread (which holds a reference) has ended, so no
    /// descriptor is closed while the thread could still poll it or ``cancel()`` write to it.
    deinit {
        socket.close()
        Glibc.close(stopSignal)
        buffer.deallocate()
    }

    /// Starts reading, on a new thread (which inherits the caller's signal mask).
    /// The corresponding C function is `pthread_create`.
    public func start() throws(SystemError) {
        dispatchPrecondition(condition: .onQueue(queue))
        // The thread keeps the source alive until it ends.
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            let source = Unmanaged<NetlinkEventSource>.fromOpaque(context!).takeRetainedValue()
            source.waitForEvents()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<NetlinkEventSource>.fromOpaque(context).release()
            throw SystemError(action: "start the netlink reader thread", errno: created)
        }
        pthread_detach(thread)
    }

    /// Stops reading: no handler runs after this returns, and the thread ends. The socket is
    /// closed when the last reference (the owner's, the thread's) goes.
    public func cancel() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !cancelled else { return }
        cancelled = true
        var one: UInt64 = 1
        _ = write(stopSignal, &one, MemoryLayout<UInt64>.size)
    }

    /// The thread's loop: wait until the socket is readable, drain it on the queue; until cancelled.
    private func waitForEvents() {
        var descriptors = [
            pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stopSignal, events: Int16(POLLIN), revents: 0),
        ]
        var failing = false
        while true {
            do {
                try valueOrErrno("wait for netlink events") { poll(&descriptors, nfds_t(descriptors.count), -1) }
                failing = false
            } catch {
                // Only ENOMEM is possible here: wait and try again rather than stop listening.
                if !failing { Log.error("\(error); trying again every 0.1 s.") }
                failing = true
                usleep(100_000)
                if queue.sync(execute: { cancelled }) { return }
                continue
            }
            if descriptors[1].revents != 0 { return }
            let stopped = queue.sync { () -> Bool in
                guard !cancelled else { return true }
                drain()
                return false
            }
            if stopped { return }
        }
    }

    /// Reads until the socket is empty. After an overrun, the rest of the queue is discarded:
    /// it predates the resynchronisation and would overwrite fresher dump data.
    func drain() {
        dispatchPrecondition(condition: .onQueue(queue))
        var batch = NetlinkBatch()
        reading: while true {
            let received: NetlinkSocket.Received
            do {
                received = try socket.receive(into: buffer)
            } catch {
                Log.error("\(error), ignoring.")
                break reading
            }
            switch received {
            case .empty:
                break reading
            case .overrun:
                batch.overflowed = true
                batch.messages.removeAll()
            case .foreign:
                batch.foreignDatagrams += 1
            case .datagram(let count):
                guard !batch.overflowed else { continue }
                for parsed in NetlinkParser.parse(datagram: UnsafeRawBufferPointer(rebasing: buffer[0..<count])) {
                    switch parsed {
                    case .success(let message): batch.messages.append(message)
                    case .failure(let error): batch.parseErrors.append(error)
                    }
                }
            }
        }
        handler(batch)
    }
}
