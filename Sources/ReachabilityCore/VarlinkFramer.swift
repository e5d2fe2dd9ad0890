/// Splits what a connection receives into messages at their terminating NUL, holding at most
/// ``VarlinkContract/callSizeLimit`` bytes of a message not yet complete. Pure: the server
/// appends what it read and takes the messages out.
package struct VarlinkFramer: Sendable {
    private var buffered: [UInt8] = []
    /// Where the next message starts in `buffered`.
    private var start = 0
    /// Where the search for the next NUL goes on: the bytes before it were searched already
    /// (a peer sending a byte at a time costs each byte once, not the whole buffer again).
    private var searched = 0

    /// An empty framer.
    package init() {}

    /// Adds bytes read from the connection.
    package mutating func append(_ bytes: some Collection<UInt8>) {
        buffered.append(contentsOf: bytes)
    }

    /// How many bytes wait: messages not taken yet, and the start of one not yet complete.
    package var bufferedCount: Int { buffered.count - start }

    /// Whether bytes of a message not yet complete wait (what the connection's end cuts off).
    package var holdsPartialMessage: Bool { start < buffered.count && buffered.last != 0 }

    /// The next complete message without its NUL, nil when none is complete yet.
    ///
    /// - Throws: ``VarlinkError/invalidMessage(_:)`` when the bytes waiting for their NUL are
    ///   more than a call may have: the connection is then beyond repair.
    package mutating func next() throws(VarlinkError) -> ArraySlice<UInt8>? {
        guard let end = buffered[max(start, searched)...].firstIndex(of: 0) else {
            if buffered.count - start > VarlinkContract.callSizeLimit {
                throw .invalidMessage("the call is longer than \(VarlinkContract.callSizeLimit) bytes")
            }
            searched = buffered.count
            compact()
            return nil
        }
        let message = buffered[start..<end]
        start = end + 1
        return message
    }

    /// Drops the bytes of messages already taken once nothing refers to them.
    private mutating func compact() {
        guard start > 0 else { return }
        buffered.removeFirst(start)
        searched -= start
        start = 0
    }
}
