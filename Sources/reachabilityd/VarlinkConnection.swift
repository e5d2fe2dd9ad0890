#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityCore
import SystemSupport

/// One client's connection to the Varlink socket: its bytes in, split into calls (one served at
/// a time, in order, as the protocol has it), and its replies out without ever blocking the
/// queue. What it holds is bounded: the bytes of calls not yet served (``VarlinkContract/callSizeLimit``),
/// the rest of one reply the socket had no room for, and for a subscriber only the latest state
/// besides (``sendState(_:)``: a reader that does not keep up skips states, it never queues them).
///
/// Confined to the daemon's queue.
final class VarlinkConnection: @unchecked Sendable {
    /// The server's name for it ("varlink:7"): what the engine's connectivity calls are filed under.
    let name: String
    /// Whose share it draws on: its user's (an unprivileged uid), or its own (root).
    let share: CallerShare
    /// The socket, closed once the connection and every source watching it let it go.
    private let socket: SharedDescriptor
    /// Whether the connection is open (``close()`` not called yet).
    private var isOpen = true
    private let queue: DispatchQueue
    private let reading: DescriptorReadSource
    private var writing: DispatchSourceWrite?
    private var framer = VarlinkFramer()
    /// The bytes of replies not yet written (the rest of one, then whole ones after it): a
    /// slice, so that a reply every subscriber shares is written from where it is, and what
    /// was written is dropped without moving the rest.
    private var outgoing: ArraySlice<UInt8> = []
    /// A subscriber's latest state's reply, not yet sent: the socket had no room when it came.
    private var heldState: [UInt8]?
    /// Whether a call is being served (its answer not sent yet); the next waits for it.
    private(set) var isServingCall = false
    /// Whether the call being served wants replies (it was not `oneway`).
    private var wantsReplies = true
    /// Whether the connection streams `Subscribe`'s replies (it then takes no more calls).
    private(set) var isSubscribed = false
    /// Whether the peer closed its end, or the connection is beyond repair: it closes once the
    /// answer in flight is written.
    private var isEnding = false
    /// Takes a decoded call; the server answers it through ``answer(_:continues:)`` or
    /// ``fail(_:)``, then ``callFinished()`` lets the next come.
    private let takeCall: (VarlinkConnection, VarlinkCall) -> Void
    /// Told once when the connection closed.
    private let closed: (VarlinkConnection) -> Void

    /// Starts reading the accepted `descriptor` on `queue`.
    init(descriptor: Int32, name: String, share: CallerShare, queue: DispatchQueue,
         takeCall: @escaping (VarlinkConnection, VarlinkCall) -> Void, closed: @escaping (VarlinkConnection) -> Void) {
        socket = SharedDescriptor(descriptor)
        self.name = name
        self.share = share
        self.queue = queue
        self.takeCall = takeCall
        self.closed = closed
        socket.retain()
        reading = DescriptorReadSource(descriptor: descriptor, queue: queue) { [socket] in socket.release() }
        reading.start { [weak self] in self?.readAvailable() }
    }

    /// Sends one reply to the call being served (none when it was `oneway`); unless `continues`, the call is over and the
    /// next may come.
    func answer(_ parameters: [String: JSONValue], continues: Bool = false) {
        if wantsReplies { send(VarlinkReply.encoded(parameters, continues: continues)) }
        if !continues { callFinished() }
    }

    /// Answers the call being served with `error`; the next may come.
    func fail(_ error: VarlinkError) {
        if wantsReplies { send(error.encoded) }
        callFinished()
    }

    /// Makes the call being served a subscription: from now on it only gets ``sendState(_:)``.
    func subscribe() {
        isSubscribed = true
    }

    /// Sends a subscriber a state's reply (one that continues, encoded once for every
    /// subscriber). When the socket has no room, only the latest state is kept, replacing one
    /// kept before, and sent once there is room.
    func sendState(_ reply: [UInt8]) {
        guard isOpen, !isEnding else { return }
        guard outgoing.isEmpty else {
            heldState = reply
            return
        }
        send(reply)
    }

    /// Closes the connection: no more calls, nothing more sent. The server forgets it.
    func close() {
        guard isOpen else { return }
        isOpen = false
        writing?.cancel()
        writing = nil
        reading.cancel()
        socket.release()
        outgoing = []
        heldState = nil
        closed(self)
    }

    /// Reads what the peer sent and takes the calls it completes.
    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(socket.value, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            return close()
        }
        guard count > 0 else { return peerEnded() }
        framer.append(buffer[..<count])
        takeNextCall()
    }

    /// The peer shut its end: a subscription ends with it, a call in flight is still answered,
    /// a message it cut off is refused.
    private func peerEnded() {
        reading.cancel()
        isEnding = true
        if framer.holdsPartialMessage && !isServingCall && !isSubscribed {
            send(VarlinkError.invalidMessage("the connection ended inside a call").encoded)
        }
        if isSubscribed || (!isServingCall && outgoing.isEmpty) { close() }
    }

    /// Takes the next complete call, if none is being served; refuses bytes that are no call,
    /// and closes after the refusal.
    private func takeNextCall() {
        guard isOpen, !isServingCall, !isSubscribed else { return rejectBacklogOverflow() }
        do throws(VarlinkError) {
            guard let message = try framer.next() else { return }
            let call = try VarlinkCall(decoding: message)
            isServingCall = true
            wantsReplies = !call.oneway
            takeCall(self, call)
        } catch {
            refuse(error)
        }
    }

    /// Refuses a connection that sent more calls ahead of the answers than a call may hold.
    private func rejectBacklogOverflow() {
        guard isOpen, framer.bufferedCount > VarlinkContract.callSizeLimit else { return }
        refuse(.invalidMessage("more than \(VarlinkContract.callSizeLimit) bytes of calls sent ahead of the answers"))
    }

    /// Sends `error` and closes once it is written.
    private func refuse(_ error: VarlinkError) {
        isEnding = true
        reading.cancel()
        heldState = nil
        send(error.encoded)
    }

    private func callFinished() {
        isServingCall = false
        if isEnding {
            if outgoing.isEmpty { close() }
            return
        }
        takeNextCall()
    }

    /// Writes `message` after what waits, as much as the socket takes now; the rest when it
    /// has room.
    private func send(_ message: [UInt8]) {
        guard isOpen else { return }
        // Nothing waiting (the usual case): the message's own bytes, not a copy.
        if outgoing.isEmpty { outgoing = message[...] } else { outgoing += message }
        flush()
    }

    /// Writes what waits, then a held state; closes a connection that was ending once all is
    /// written. The corresponding C function is `send` (`MSG_NOSIGNAL`: a peer gone is EPIPE,
    /// not SIGPIPE).
    private func flush() {
        while isOpen, !outgoing.isEmpty {
            let written = outgoing.withUnsafeBytes { Glibc.send(socket.value, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { return waitForRoom() }
                // The reader is gone for good (EPIPE, ECONNRESET): drop it.
                return close()
            }
            outgoing = outgoing[(outgoing.startIndex + written)...]
            if outgoing.isEmpty {
                // Let go of the written reply's bytes (a slice keeps them all).
                outgoing = heldState.map { $0[...] } ?? []
                heldState = nil
            }
        }
        writing?.cancel()
        writing = nil
        if isEnding && (!isServingCall || isSubscribed) && isOpen { close() }
    }

    /// Flushes again when the socket has room.
    private func waitForRoom() {
        guard writing == nil else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: socket.value, queue: queue)
        socket.retain()
        source.setEventHandler { [weak self] in self?.flush() }
        source.setCancelHandler { [socket] in socket.release() }
        writing = source
        source.activate()
    }

    deinit {
        writing?.cancel()
    }
}

/// A descriptor closed once every holder let it go: the connection and each Dispatch source
/// watching it (libdispatch must have stopped watching a descriptor before it is closed, or it
/// would watch the next one opened with its number). Confined to the daemon's queue.
private final class SharedDescriptor: @unchecked Sendable {
    let value: Int32
    private var holders = 1

    init(_ value: Int32) {
        self.value = value
    }

    func retain() {
        holders += 1
    }

    func release() {
        holders -= 1
        if holders == 0 { Glibc.close(value) }
    }
}
