#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityCore
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
/// again before it gave up, however often the checks restart — and each answer reused
/// (``RememberedResolution``): a success for 30 s, a failure until the name's next lookup is
/// due (1 s after the first failure in a row, doubling up to 30 s), so that routing churn
/// does not become DNS traffic whether the name resolves or not.
///
/// A resolution in flight cannot be cancelled (`getaddrinfo` has no cancellation): its thread
/// ends when the resolver answers or gives up (resolv.conf's `timeout:` × `attempts:`).
/// Thread-safe.
package final class HostLookup: Sendable, Equatable {
    /// What a lookup answers.
    struct Answer: Sendable, Equatable {
        /// The addresses, or why there are none.
        var outcome: HostResolver.Outcome
        /// For a failure, when the resolver is asked again: until then the failure is the
        /// answer. Nil for addresses.
        var retryAt: ContinuousClock.Instant?
    }

    /// The host name.
    let host: String
    /// How the name is resolved: ``HostResolver/resolve(_:)`` (a test's stand-in otherwise).
    private let resolver: @Sendable (String) -> HostResolver.Outcome
    private let state = Mutex(State())

    private struct State {
        var resolution = HostResolution.notAsked
        var remembered = RememberedResolution()
        /// Who waits for the resolution in flight.
        var waiters: [(queue: DispatchQueue, completion: @Sendable (Answer) -> Void)] = []
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
    /// the last answer is still reused, else when the resolver answers (the resolution in
    /// flight, or a new one).
    func resolve(on queue: DispatchQueue, _ completion: @escaping @Sendable (Answer) -> Void) {
        let startsResolution = state.withLock { state -> Bool in
            if let answer = state.remembered.fresh() {
                queue.async { completion(answer) }
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
            let (answer, waiters) = state.withLock { state in
                let answer = state.remembered.remember(outcome)
                switch outcome {
                case .addresses(let addresses): state.resolution = .resolved(addresses)
                case .failed(let why): state.resolution = .failed(why)
                }
                defer { state.waiters = [] }
                return (answer, state.waiters)
            }
            for waiter in waiters { waiter.queue.async { waiter.completion(answer) } }
        }
    }

    /// Two lookups are equal when they are of the same host.
    package static func == (lhs: HostLookup, rhs: HostLookup) -> Bool {
        lhs.host == rhs.host
    }
}

/// A host's last resolution and how long it is reused, so that a burst of routing changes (each
/// a new check) does not ask the resolver (DNS) each time: a success for ``lifetime``; a failure
/// until the name's next lookup is due, ``failureReuse`` after it (1 s after the first failure
/// in a row, doubling up to ``lifetime``). Pure.
struct RememberedResolution {
    /// How long a successful resolution is reused, and the longest a failure is.
    static let lifetime: Duration = .seconds(30)
    /// How long failures in a row are reused: the waits between a failing name's lookups.
    static let failureReuse = RetryDelays(first: .seconds(1), longest: lifetime)

    private var last: HostLookup.Answer?
    private var reusedUntil = ContinuousClock.now
    private var failuresInARow = 0

    /// The last answer while it is reused; nil before the first and once it is stale.
    func fresh(now: ContinuousClock.Instant = .now) -> HostLookup.Answer? {
        guard let last, now < reusedUntil else { return nil }
        return last
    }

    /// Remembers the resolver's answer.
    ///
    /// - Returns: the answer, with when a failure's name is looked up again.
    mutating func remember(_ outcome: HostResolver.Outcome, now: ContinuousClock.Instant = .now) -> HostLookup.Answer {
        let retryAt: ContinuousClock.Instant?
        switch outcome {
        case .addresses:
            failuresInARow = 0
            reusedUntil = now + Self.lifetime
            retryAt = nil
        case .failed:
            failuresInARow += 1
            reusedUntil = now + Self.failureReuse.delay(afterFailures: failuresInARow)
            retryAt = reusedUntil
        }
        let answer = HostLookup.Answer(outcome: outcome, retryAt: retryAt)
        last = answer
        return answer
    }
}
