import Dispatch
import SystemSupport

/// Everything one wake-up of the event source read: all messages that were queued.
package struct NetlinkBatch: Sendable {
    /// Parsed kernel messages, in arrival order. Empty when ``overflowed``.
    package var messages: [NetlinkMessage] = []
    /// The kernel dropped messages (`ENOBUFS`): what was queued was discarded and the reader
    /// must resynchronise from dumps.
    package var overflowed = false
    /// Messages that could not be parsed.
    package var parseErrors: [NetlinkParseError] = []
    /// Datagrams from user-space senders, ignored (only the kernel is believed).
    package var foreignDatagrams = 0
}

/// Reads a subscribed rtnetlink socket on a `DispatchSourceRead`: on each wake-up it drains
/// every queued datagram and hands the whole batch to the handler once, on `queue`.
///
/// The source is scheduled on the serial queue that owns the engine and the sd-bus connection,
/// so the handler can use whatever the queue owns without a further hop.
///
/// Confined to `queue`; the handler runs there too.
package final class NetlinkEventSource: @unchecked Sendable {
    private let socket: NetlinkSocket
    private let queue: DispatchQueue
    private let handler: (NetlinkBatch) -> Void
    private let source: DescriptorReadSource
    private let buffer: UnsafeMutableRawBufferPointer

    /// Creates a source reading `socket` (which it owns and closes once the source is cancelled)
    /// on `queue`.
    package init(socket: NetlinkSocket, queue: DispatchQueue, handler: @escaping (NetlinkBatch) -> Void) {
        self.socket = socket
        self.queue = queue
        self.handler = handler
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        self.buffer = buffer
        nonisolated(unsafe) let unownedBuffer = buffer
        source = DescriptorReadSource(descriptor: socket.fileDescriptor, queue: queue) {
            socket.close()
            unownedBuffer.deallocate()
        }
    }

    /// Starts reading.
    package func start() {
        source.start { [weak self] in self?.drain() }
    }

    /// Stops reading: no handler runs after this returns (it is called on the serial queue the
    /// handler runs on). The socket is closed by the source's cancel handler; an owner that never
    /// cancelled has it closed when this object goes.
    package func cancel() {
        source.cancel()
    }

    /// Reads until the socket is empty. After an overrun, the rest of the queue is discarded:
    /// it predates the resynchronisation and would overwrite fresher dump data.
    func drain() {
        dispatchPrecondition(condition: .onQueue(queue))
        StageTimes.recorder?.mark(.received)
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
