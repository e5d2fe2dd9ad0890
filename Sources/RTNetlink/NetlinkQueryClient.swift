#if canImport(Glibc)
import Glibc
#endif
import NetworkTypes
import SystemSupport

/// Request/response rtnetlink: dumps and route lookups on a blocking, unsubscribed socket.
///
/// Not thread-safe: owned by one serial queue.
package final class NetlinkQueryClient {
    private let socket: NetlinkSocket
    private var sequence: UInt32 = 0
    private let buffer: UnsafeMutableRawBufferPointer

    /// Opens the socket; receives time out after `timeoutSeconds` so a lost reply cannot hang the caller.
    package init(timeoutSeconds: Int = 2) throws(SystemError) {
        socket = try NetlinkSocket.open()
        do throws(SystemError) {
            try socket.setBlocking(timeoutSeconds: timeoutSeconds)
        } catch {
            socket.close()
            throw error
        }
        buffer = .allocate(byteCount: 64 * 1024, alignment: 8)
    }

    deinit {
        socket.close()
        buffer.deallocate()
    }

    /// The answer to a dump: the messages, and those that could not be parsed.
    package struct DumpResult: Sendable {
        /// Parsed messages of the dump (without the closing `NLMSG_DONE`).
        package var messages: [NetlinkMessage]
        /// Messages that could not be parsed and were skipped.
        package var parseErrors: [NetlinkParseError]
        /// The kernel flagged the dump as interrupted (`NLM_F_DUMP_INTR`) on every attempt:
        /// objects may be missing or stale, and the caller should dump again later.
        package var isInterrupted = false
    }

    /// Runs a dump request built by `request` (given the sequence number) and collects the answer.
    ///
    /// A dump the kernel flags as interrupted (`NLM_F_DUMP_INTR`: the table changed while it was
    /// being read) is run again, up to `attempts` times in all; the last one is returned with
    /// ``DumpResult/isInterrupted`` set when it was interrupted too.
    package func dump(attempts: Int = 5, _ request: (UInt32) -> [UInt8]) throws(SystemError) -> DumpResult {
        try dump(attempts: attempts, skipping: { _, _ in false }, request)
    }

    /// The default routes (prefix length 0) of every table and family, from a dump of every
    /// route: the others are passed over unparsed (their `rtm_dst_len` read), so that a large
    /// table costs the kernel's dump and little more.
    package func dumpDefaultRoutes(attempts: Int = 5) throws(SystemError) -> DumpResult {
        try dump(attempts: attempts, skipping: NetlinkParser.isRouteWithPrefix, NetlinkRequest.dumpRoutes)
    }

    private func dump(
        attempts: Int, skipping skip: (NetlinkHeader, UnsafeRawBufferPointer) -> Bool, _ request: (UInt32) -> [UInt8]
    ) throws(SystemError) -> DumpResult {
        for _ in 1..<max(attempts, 1) {
            let result = try dumpOnce(request, skipping: skip)
            if !result.interrupted { return result.dump }
        }
        var (dump, interrupted) = try dumpOnce(request, skipping: skip)
        dump.isInterrupted = interrupted
        return dump
    }

    private func dumpOnce(
        _ request: (UInt32) -> [UInt8], skipping skip: (NetlinkHeader, UnsafeRawBufferPointer) -> Bool
    ) throws(SystemError) -> (dump: DumpResult, interrupted: Bool) {
        let expected = nextSequence()
        try socket.send(request(expected))
        var result = DumpResult(messages: [], parseErrors: [])
        var interrupted = false
        while true {
            for parsed in try receiveReply(sequence: expected, skipping: skip) {
                switch parsed {
                case .failure(let error):
                    result.parseErrors.append(error)
                case .success(let message):
                    interrupted = interrupted || message.header.flags.contains(.dumpInterrupted)
                    switch message.payload {
                    case .done: return (result, interrupted)
                    case .error(let code) where code != 0: throw SystemError(action: "dump rtnetlink objects", errno: code)
                    default: result.messages.append(message)
                    }
                }
            }
        }
    }

    /// The kernel's answer to a route lookup.
    package enum RouteAnswer: Sendable, Hashable {
        /// The route the kernel would use.
        case route(RouteMessage)
        /// The kernel refused (positive errno: `ENETUNREACH` when nothing routes there).
        case error(errno: Int32)

        /// The answer a reply carries: its first route or error message; nil when it has neither.
        /// Pure, so the status reducer can be fed captured replies.
        package init?(reply: [Result<NetlinkMessage, NetlinkParseError>]) {
            for parsed in reply {
                guard case .success(let message) = parsed else { continue }
                switch message.payload {
                case .newRoute(let route): self = .route(route); return
                case .error(let code): self = .error(errno: code); return
                default: continue
                }
            }
            return nil
        }
    }

    /// The neighbour entry for `address` on `link` (`RTM_GETNEIGH`: its state and link-layer
    /// address); nil when the kernel has none.
    package func neighbourEntry(of address: IPAddress, on link: InterfaceIndex) throws(SystemError) -> NeighbourMessage? {
        let expected = nextSequence()
        try socket.send(NetlinkRequest.getNeighbour(address.bytes, family: address.family.netlinkFamily, index: link.rawValue, sequence: expected))
        while true {
            for case .success(let message) in try receiveReply(sequence: expected) {
                switch message.payload {
                case .newNeighbour(let neighbour): return neighbour
                case .error(let code) where code == ENOENT: return nil
                case .error(let code): throw SystemError(action: "read the neighbour entry", errno: code)
                default: continue
                }
            }
        }
    }

    /// One route lookup (`RTM_GETROUTE`): which route the kernel would use to reach
    /// ``destination`` for a flow.
    package struct RouteQuestion: Sendable, Hashable {
        /// The destination.
        package var destination: IPAddress
        /// The source address of the flow (`RTA_SRC`), e.g. the one ``SourceAddressQuery``
        /// found; nil for a lookup without one.
        package var source: IPAddress?
        /// The link the flow is bound to (`RTA_OIF`: a link-local destination's zone); nil for none.
        package var outputInterface: InterfaceIndex?
        /// The flow's keys (`RTA_IP_PROTO`, `RTA_DPORT`, `RTA_UID`), which policy rules on
        /// `ipproto`, `dport` and `uidrange` match; nil for a lookup without them.
        package var flow: FlowKeys?
        /// Answer with the routing-table entry that matched (prefix, metric) rather than the
        /// resolved next hop (`RTM_F_FIB_MATCH`).
        package var matchedEntry: Bool

        /// A lookup of `destination` from `source`, bound to `outputInterface`, with `flow`'s keys.
        package init(
            to destination: IPAddress, source: IPAddress? = nil, outputInterface: InterfaceIndex? = nil, flow: FlowKeys? = nil, matchedEntry: Bool = false
        ) {
            self.destination = destination
            self.source = source
            self.outputInterface = outputInterface
            self.flow = flow
            self.matchedEntry = matchedEntry
        }

        func request(sequence: UInt32) -> [UInt8] {
            NetlinkRequest.lookupRoute(
                to: destination.bytes, family: destination.family.netlinkFamily, source: source?.bytes, outputInterface: outputInterface?.rawValue,
                flow: flow, matchedEntry: matchedEntry, sequence: sequence
            )
        }
    }

    /// The most lookups sent in one datagram: their replies (a few hundred bytes each) fit the
    /// socket's default receive buffer many times over.
    static let lookupsPerSend = 32

    /// Asks the kernel `questions` together: their requests go in one datagram (each with its
    /// own sequence number; the kernel answers each in turn, an error as its own answer), and
    /// the replies are read and matched by sequence number. One system call out and one per
    /// answer back, instead of a round trip per question.
    ///
    /// - Returns: the answers, in the order of `questions`.
    package func lookupRoutes(_ questions: [RouteQuestion]) throws(SystemError) -> [RouteAnswer] {
        var answers: [RouteAnswer] = []
        answers.reserveCapacity(questions.count)
        var start = 0
        while start < questions.count {
            let part = Array(questions[start..<min(start + Self.lookupsPerSend, questions.count)])
            do {
                answers += try lookupRoutesOnce(part)
            } catch where error.errno == ENOBUFS {
                // The queue overflowed and replies may be lost: ask once more on the drained socket.
                answers += try lookupRoutesOnce(part)
            }
            start += part.count
        }
        return answers
    }

    private func lookupRoutesOnce(_ questions: [RouteQuestion]) throws(SystemError) -> [RouteAnswer] {
        guard !questions.isEmpty else { return [] }
        let first = nextSequence()
        var datagram = questions[0].request(sequence: first)
        for question in questions.dropFirst() { datagram += question.request(sequence: nextSequence()) }
        try socket.send(datagram)
        var answers = [RouteAnswer?](repeating: nil, count: questions.count)
        var remaining = questions.count
        while remaining > 0 {
            for (sequence, answer) in try receiveRouteAnswers() {
                // (Wrapping: a sequence before `first` gives a large offset and is dropped.)
                let offset = Int(sequence &- first)
                guard offset < answers.count, answers[offset] == nil else { continue }
                answers[offset] = answer
                remaining -= 1
            }
        }
        return answers.map { $0! }
    }

    /// Receives one datagram from the kernel and returns the route answers it carries with
    /// their sequence numbers (stale answers to earlier, timed-out requests included: the
    /// caller drops them).
    private func receiveRouteAnswers() throws(SystemError) -> [(sequence: UInt32, answer: RouteAnswer)] {
        var answers: [(sequence: UInt32, answer: RouteAnswer)] = []
        for case .success(let message) in NetlinkParser.parse(datagram: try receiveKernelDatagram()) {
            if let answer = RouteAnswer(reply: [.success(message)]) { answers.append((message.header.sequence, answer)) }
        }
        return answers
    }

    /// Receives the next datagram from the kernel (another sender's are passed over); its bytes
    /// are valid until the next receive.
    private func receiveKernelDatagram() throws(SystemError) -> UnsafeRawBufferPointer {
        while true {
            switch try socket.receive(into: buffer) {
            case .empty:
                throw SystemError(action: "receive rtnetlink reply", errno: EAGAIN)
            case .overrun:
                throw SystemError(action: "receive rtnetlink reply", errno: ENOBUFS)
            case .foreign:
                continue
            case .datagram(let count):
                return UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            }
        }
    }

    /// The selectors of every policy rule (``PolicyRuleSelectors``), from an `RTM_GETRULE` dump
    /// (retried as ``dump(attempts:_:)`` is when interrupted; still interrupted, it is used).
    package func dumpRuleSelectors(attempts: Int = 5) throws(SystemError) -> [PolicyRuleSelectors] {
        var rules: [PolicyRuleSelectors] = []
        _ = try dump(attempts: attempts, skipping: { header, body in
            // Read here and passed over: the parser keeps no rule's attributes.
            guard let rule = NetlinkParser.policyRuleSelectors(header, body) else { return false }
            rules.append(rule)
            return true
        }, { sequence in
            // (Each attempt starts again.)
            rules.removeAll()
            return NetlinkRequest.dumpRules(sequence: sequence)
        })
        return rules
    }

    private func nextSequence() -> UInt32 {
        sequence &+= 1
        return sequence
    }

    /// Receives datagrams until one from the kernel answers `sequence`; stale answers to
    /// earlier (timed-out) requests are dropped.
    private func receiveReply(
        sequence expected: UInt32, skipping skip: (NetlinkHeader, UnsafeRawBufferPointer) -> Bool = { _, _ in false }
    ) throws(SystemError) -> [Result<NetlinkMessage, NetlinkParseError>] {
        while true {
            let parsed = NetlinkParser.parse(datagram: try receiveKernelDatagram(), skipping: skip)
            let answers = parsed.filter { if case .success(let message) = $0 { message.header.sequence == expected } else { true } }
            if answers.contains(where: { if case .success = $0 { true } else { false } }) { return answers }
        }
    }
}
