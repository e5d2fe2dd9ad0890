#if canImport(Glibc)
import Glibc
#endif

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
