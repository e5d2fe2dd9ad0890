import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A DNS server in a test namespace: a UDP socket on port 53 of an address of the namespace, read by a thread that drops every query (a resolver that
/// never answers) or answers each with NXDOMAIN. Name it in `/etc/netns/NAME/resolv.conf`.
package final class StubResolver: @unchecked Sendable {
    /// What the server does with a query.
    package enum Behaviour: Sendable {
        /// Reads it and drops it: the client's resolver waits for its timeouts.
        case silent
        /// Answers "no such name" (RCODE 3): `getaddrinfo` fails with `EAI_NONAME`.
        case nameError
    }

    /// Set at `deinit`: the thread closes the socket and ends.
    private let stopped = StopFlag()

    /// How many queries the server has read so far.
    package var queries: Int {
        stopped.queries.load(ordering: .relaxed)
    }

    /// Binds `address`:53 inside `namespace` and starts answering (or not).
    ///
    /// - Throws: `HarnessError` when the socket cannot be made.
    package init(_ behaviour: Behaviour, address: String, in namespace: TestNamespace) throws {
        let descriptor = try namespace.runInside { () -> Result<Int32, HarnessError> in
            let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { return .failure(.lastError("socket(AF_INET, SOCK_DGRAM)")) }
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = in_port_t(53).bigEndian
            inet_pton(AF_INET, address, &socketAddress.sin_addr)
            let bound = withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let failure = HarnessError.lastError("bind \(address):53")
                close(descriptor)
                return .failure(failure)
            }
            // Reads wake up every 100 ms to see whether the server was stopped.
            var interval = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
            return .success(descriptor)
        }
        let stopped = stopped
        let thread = Thread {
            var query = [UInt8](repeating: 0, count: 512)
            while !stopped.isSet.load(ordering: .relaxed) {
                var peer = sockaddr_storage()
                var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let count = withUnsafeMutablePointer(to: &peer) { peerPointer in
                    peerPointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, &query, query.count, 0, $0, &peerLength) }
                }
                guard count >= 12 else { continue }
                stopped.queries.add(1, ordering: .relaxed)
                guard case .nameError = behaviour else { continue }
                // The query with QR (response), RD and RA set and RCODE 3 (NXDOMAIN).
                var answer = Array(query[..<count])
                answer[2] = 0x80 | (answer[2] & 0x01)
                answer[3] = 0x80 | 0x03
                _ = withUnsafePointer(to: &peer) { peerPointer in
                    peerPointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, answer, answer.count, 0, $0, peerLength) }
                }
            }
            close(descriptor)
        }
        thread.start()
    }

    deinit {
        stopped.isSet.store(true, ordering: .relaxed)
    }

    /// What the server's thread shares with it: the stop flag and the count of queries.
    private final class StopFlag: Sendable {
        let isSet = Atomic<Bool>(false)
        let queries = Atomic<Int>(0)
    }
}
