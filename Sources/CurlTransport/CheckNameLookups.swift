#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityCore
import SystemSupport

/// The check's host-name lookups, through the system resolver as an application makes them
/// (`getaddrinfo` for one family, `/etc/hosts` and DNS as `nsswitch.conf` says), each on a
/// Dispatch queue of its own, away from the daemon's; shared and bounded by
/// ``SharedLookups``: a check that comes while its name's lookup is out waits for that
/// lookup's answer, and at most ``capacity`` lookups (threads) are ever out.
///
/// That bound is what libcurl's own resolving lacks here: a transfer given up on while its
/// name lookup waits for a silent nameserver (up to 30 s with glibc's defaults) leaves the
/// lookup's thread behind, and with a check per path change a route flapping during a DNS
/// outage left hundreds. Confined to the client's queue: called there, answers delivered there.
final class CheckNameLookups: @unchecked Sendable {
    /// One lookup: a name, for one family.
    struct Key: Hashable, Sendable {
        /// The host name.
        var host: String
        /// The family of the addresses asked for.
        var family: AddressFamily
    }

    /// What a lookup came to.
    enum Answer: Sendable, Equatable {
        /// The addresses, in the resolver's order, without duplicates (at least one).
        case addresses([String])
        /// None: `gai_strerror`'s text ("Name or service not known", "Temporary failure in
        /// name resolution"...), or errno's for `EAI_SYSTEM`; `resolverAnswered` when the
        /// resolver got an answer that there is none (`EAI_NONAME`, or no address of the
        /// family), rather than no answer at all (`EAI_AGAIN`, `EAI_FAIL`, a system error).
        case failed(String, resolverAnswered: Bool)
    }

    /// The most lookups out at once: the check's name and the network's captive-portal API's,
    /// per family, and RFC 7050's `ipv4only.arpa`.
    static let capacity = 5

    private let queue: DispatchQueue
    private var lookups = SharedLookups<Key, Int>(capacity: capacity)
    /// Who waits, by the token the client gave.
    private var waiters: [Int: @Sendable (Answer) -> Void] = [:]

    /// Lookups answering on `queue`.
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Calls `completion` on the queue with `key`'s addresses, or why there are none, when the
    /// lookup out for it (or a new one) answers; not if ``abandon(_:)`` comes first.
    ///
    /// - Parameters:
    ///   - key: the name and family.
    ///   - waiter: a token no other waiter holds.
    ///   - completion: gets the answer.
    func resolve(_ key: Key, for waiter: Int, completion: @escaping @Sendable (Answer) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        waiters[waiter] = completion
        if lookups.wait(waiter, for: key) { start(key) }
    }

    /// Stops waiting for `waiter`'s answer (its lookup runs on if it started: it cannot be called
    /// off, and the next check of the name joins it).
    func abandon(_ waiter: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard waiters.removeValue(forKey: waiter) != nil else { return }
        lookups.leave(waiter)
    }

    private func start(_ key: Key) {
        // A queue per lookup: getaddrinfo blocks its thread, and a serial queue of its own gets
        // a thread at once (never waiting behind another blocked lookup in a shared pool).
        DispatchQueue(label: "org.reachabilityd.check-name-lookup").async { [self] in
            let answer = Self.lookUp(key)
            queue.async { self.finished(key, answer) }
        }
    }

    private func finished(_ key: Key, _ answer: Answer) {
        let (served, next) = lookups.finished(key)
        if let next { start(next) }
        for waiter in served {
            waiters.removeValue(forKey: waiter)?(answer)
        }
    }

    /// `key`'s addresses from the system resolver, as libcurl asks for them (one family, stream
    /// sockets). Blocks while the resolver works.
    /// The corresponding C functions are `getaddrinfo` and `inet_ntop`.
    private static func lookUp(_ key: Key) -> Answer {
        var hints = addrinfo()
        hints.ai_family = key.family == .ipv6 ? AF_INET6 : AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(key.host, nil, &hints, &list)
        guard result == 0 else {
            // EAI_SYSTEM: a system call failed; errno says which way.
            return .failed(
                result == EAI_SYSTEM ? SystemError.describe(errno: errno) : String(cString: gai_strerror(result)), resolverAnswered: result == EAI_NONAME
            )
        }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            entry = current.pointee.ai_next
            guard let address = current.pointee.ai_addr, Int32(address.pointee.sa_family) == hints.ai_family else { continue }
            // The address without its scope (a CURLOPT_RESOLVE entry takes none).
            let offset = key.family == .ipv6 ? MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)! : MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(hints.ai_family, UnsafeRawPointer(address) + offset, &text, socklen_t(text.count)) != nil else { continue }
            let literal = String(nulTerminated: text)
            if !addresses.contains(literal) { addresses.append(literal) }
        }
        return addresses.isEmpty ? .failed("No address associated with hostname", resolverAnswered: true) : .addresses(addresses)
    }
}
