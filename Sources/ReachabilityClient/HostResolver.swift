#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Where the system resolver stands on a manager's host name (``ReachabilityManager/hostResolution``):
/// a name is resolved in the client's process before the daemon is asked about its addresses,
/// so a resolver that is slow or silent delays the first answer while the daemon is fine.
public enum HostResolution: Sendable, Equatable {
    /// The resolver has not been asked yet: monitoring has not started, or the daemon (or the
    /// in-process engine) has not answered yet, so the addresses are not needed yet.
    case notAsked
    /// The resolver (`getaddrinfo`) was asked at `since` and has not answered yet.
    case waiting(since: ContinuousClock.Instant)
    /// The resolver's last answer: these addresses, in its order of preference (none when the
    /// name has no address of a family the machine uses).
    case resolved([String])
    /// The resolver's last answer was an error; the text is `gai_strerror`'s, e.g. "Name or
    /// service not known" (the name does not exist) or "Temporary failure in name resolution".
    case failed(String)
}

/// Resolves a host name to literal addresses with the system resolver (`/etc/hosts`, DNS…).
enum HostResolver {
    /// The outcome of a resolution.
    enum Outcome: Sendable, Equatable {
        /// The addresses, in the resolver's order of preference, without duplicates.
        case addresses([String])
        /// The resolver failed; the text is `gai_strerror`'s.
        case failed(String)
    }

    /// Resolves `host`. Blocks while the resolver works: never call it on a caller's thread.
    ///
    /// - Parameter host: a host name or a literal address.
    /// - Returns: its addresses, or why there are none.
    /// The corresponding C functions are `getaddrinfo` and `getnameinfo`.
    static func resolve(_ host: String) -> Outcome {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(host, nil, &hints, &list)
        guard result == 0 else { return .failed(String(cString: gai_strerror(result))) }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                // A scoped IPv6 address prints as "fe80::1%eth0"; the daemon wants the literal only.
                let literal = String(text.split(separator: "%").first ?? "")
                if !literal.isEmpty && !addresses.contains(literal) { addresses.append(literal) }
            }
            entry = current.pointee.ai_next
        }
        return .addresses(addresses)
    }
}

/// One host name and its resolution, shared by every check of one manager (and both sources
/// of an automatic one): one `getaddrinfo` at a time — a check that needs the addresses while
/// the resolver works waits for that answer, so a resolver that does not answer is never asked
/// again before it gave up, however often the checks restart — and a successful answer reused
/// for ``ResolvedAddresses/lifetime``. A failure is not reused: the next check asks again.
///
/// A resolution in flight cannot be cancelled (`getaddrinfo` has no cancellation): its thread
/// ends when the resolver answers or gives up (resolv.conf's `timeout:` × `attempts:`).
/// Thread-safe.
final class HostLookup: Sendable, Equatable {
    /// The host name.
    let host: String
    /// How the name is resolved: ``HostResolver/resolve(_:)`` (a test's stand-in otherwise).
    private let resolver: @Sendable (String) -> HostResolver.Outcome
    private let state = Mutex(State())

    private struct State {
        var resolution = HostResolution.notAsked
        var resolved = ResolvedAddresses()
        /// Who waits for the resolution in flight.
        var waiters: [(queue: DispatchQueue, completion: @Sendable (HostResolver.Outcome) -> Void)] = []
    }

    /// Creates the lookup of `host`; nothing is resolved yet.
    ///
    /// - Parameters:
    ///   - host: the host name.
    ///   - resolver: how it is resolved; blocks while it works.
    init(_ host: String, resolver: @escaping @Sendable (String) -> HostResolver.Outcome = HostResolver.resolve) {
        self.host = host
        self.resolver = resolver
    }

    /// Where the resolution stands.
    var resolution: HostResolution {
        state.withLock { $0.resolution }
    }

    /// Calls `completion` on `queue` with the host's addresses, or why there are none: soon when
    /// they were resolved less than ``ResolvedAddresses/lifetime`` ago, else when the resolver
    /// answers (the resolution in flight, or a new one).
    func resolve(on queue: DispatchQueue, _ completion: @escaping @Sendable (HostResolver.Outcome) -> Void) {
        let startsResolution = state.withLock { state -> Bool in
            if let addresses = state.resolved.fresh() {
                queue.async { completion(.addresses(addresses)) }
                return false
            }
            state.waiters.append((queue, completion))
            if case .waiting = state.resolution { return false }
            state.resolution = .waiting(since: .now)
            return true
        }
        guard startsResolution else { return }
        // getaddrinfo blocks: away from every caller's queue.
        DispatchQueue.global().async { [self] in
            let outcome = resolver(host)
            let waiters = state.withLock { state in
                state.resolved.remember(outcome)
                switch outcome {
                case .addresses(let addresses): state.resolution = .resolved(addresses)
                case .failed(let why): state.resolution = .failed(why)
                }
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.queue.async { waiter.completion(outcome) } }
        }
    }

    /// Two lookups are equal when they are of the same host.
    static func == (lhs: HostLookup, rhs: HostLookup) -> Bool {
        lhs.host == rhs.host
    }
}

/// A host's addresses from the last successful resolution, reused for ``lifetime`` so that a
/// burst of routing changes re-checks the addresses without asking the resolver (DNS) each
/// time. Failures are not remembered: the next check resolves again.
struct ResolvedAddresses {
    /// How long a successful resolution is reused.
    static let lifetime: Duration = .seconds(30)

    private var addresses: [String]?
    private var resolvedAt = ContinuousClock.now

    /// The remembered addresses, when resolved less than ``lifetime`` ago.
    func fresh(now: ContinuousClock.Instant = .now) -> [String]? {
        guard let addresses, now - resolvedAt < Self.lifetime else { return nil }
        return addresses
    }

    /// Remembers a successful outcome; forgets on failure.
    mutating func remember(_ outcome: HostResolver.Outcome, now: ContinuousClock.Instant = .now) {
        if case .addresses(let resolved) = outcome {
            addresses = resolved
            resolvedAt = now
        } else {
            addresses = nil
        }
    }
}
