import RTNetlink
import ReachabilityCore

/// The destinations clients recently asked about with `CheckAddress`, per caller, whose route
/// changes reach the engine so that `RoutesChanged` reaches those clients.
///
/// Each caller (a ``CallerShare``: a root connection, or all the connections of one unprivileged
/// user) keeps at most ``capacity`` addresses per family, an unprivileged user ``userCapacity``:
/// asking about a new one when its own family is full forgets its own least recently asked one,
/// never another caller's, however many connections an unprivileged user opens. Asking again about a watched address makes it the most recently
/// asked without changing the set, so the filter is rebuilt only for a new address. A caller
/// that disconnects is forgotten (``forget(caller:)``). At most ``callerCapacity`` callers are
/// kept (the least recently asking goes first): more than dbus-daemon lets one user connect
/// (256 connections per user on the system bus), so one unprivileged user cannot push another
/// user's watches out.
///
/// ``ipv4`` and ``ipv6`` are every caller's addresses together, sorted: the monitor socket's
/// filter lists them while they fit its room (``filterCapacity`` per family); beyond that it
/// lists as many prefixes covering them all, and ``isAffected(byRouteTo:)`` (a binary search)
/// picks the routes that concern a watched address among those the filter keeps.
package struct WatchedDestinations: Sendable, Equatable {
    /// The cap per caller and family in the daemon.
    package static let defaultCapacity = 16
    /// The cap per family for an unprivileged user's connections together.
    package static let defaultUserCapacity = 8
    /// The most callers kept.
    package static let callerCapacity = 1024
    /// The most addresses per family the kernel filter lists one by one, besides the probe
    /// (past that, as many prefixes covering them). The kernel charges a socket filter
    /// to the socket's option memory (`net.core.optmem_max`: 20 KiB by default before Linux
    /// 6.9, so on Debian 12), and while one program replaces another both are charged.
    /// 16 per family leaves room at 20 KiB (the measurement: docs/design.md, "Events and the
    /// kernel filter"; `BusFaultTests` runs the daemon with that setting).
    package static let filterCapacity = 16

    /// One caller's addresses, least recently asked first, and when it last asked.
    private struct Caller: Sendable, Equatable {
        var ipv4: [IPAddress] = []
        var ipv6: [IPAddress] = []
        var lastAsked: UInt64 = 0
    }

    /// The most addresses kept per caller and family.
    package let capacity: Int
    /// The most addresses kept per family for an unprivileged user's share.
    package let userCapacity: Int
    private var callers: [String: Caller] = [:]
    private var clock: UInt64 = 0
    /// How many callers watch each address.
    private var watchers: [IPAddress: Int] = [:]
    /// Every caller's IPv4 addresses, sorted (by their bytes), each once.
    package private(set) var ipv4: [IPAddress] = []
    /// Every caller's IPv6 addresses, sorted (by their bytes), each once.
    package private(set) var ipv6: [IPAddress] = []

    /// An empty set keeping at most `capacity` addresses per caller and family, `userCapacity`
    /// for an unprivileged user's share.
    package init(capacity: Int = defaultCapacity, userCapacity: Int = defaultUserCapacity) {
        precondition(capacity > 0 && userCapacity > 0, "a watch set needs room for one address")
        self.capacity = capacity
        self.userCapacity = userCapacity
    }

    /// Every caller's addresses of `family` and `extra` (an address of that family, e.g. the
    /// probe), sorted by their bytes, each once.
    package func addresses(of family: AddressFamily, with extra: IPAddress) -> [IPAddress] {
        var addresses = family == .ipv4 ? ipv4 : ipv6
        let index = Self.insertionIndex(of: extra, in: addresses)
        if index == addresses.count || addresses[index] != extra { addresses.insert(extra, at: index) }
        return addresses
    }

    /// The callers with watches.
    package var callerCount: Int { callers.count }

    /// Records `caller`'s question about `address`.
    ///
    /// - Returns: true when the set of watched addresses changed (`address` is new, or one went
    ///   out with it), false when it only became the caller's most recently asked.
    package mutating func ask(about address: IPAddress, caller: CallerShare = CallerShare(connection: "")) -> Bool {
        clock += 1
        var changed = false
        if callers[caller.name] == nil, callers.count == Self.callerCapacity,
           let oldest = callers.min(by: { $0.value.lastAsked < $1.value.lastAsked })?.key {
            changed = forget(caller: oldest)
        }
        var entry = callers[caller.name] ?? Caller()
        entry.lastAsked = clock
        var evicted: IPAddress?
        let isNew: Bool
        let room = caller.isUser ? userCapacity : capacity
        if address.family == .ipv4 {
            (isNew, evicted) = Self.ask(about: address, in: &entry.ipv4, capacity: room)
        } else {
            (isNew, evicted) = Self.ask(about: address, in: &entry.ipv6, capacity: room)
        }
        callers[caller.name] = entry
        if let evicted { changed = release(evicted) || changed }
        if isNew { changed = retain(address) || changed }
        return changed
    }

    /// Forgets every watch of the share named `caller` (its last connection closed).
    ///
    /// - Returns: whether the set of watched addresses changed.
    @discardableResult
    package mutating func forget(caller: String) -> Bool {
        guard let entry = callers.removeValue(forKey: caller) else { return false }
        var changed = false
        for address in entry.ipv4 + entry.ipv6 { changed = release(address) || changed }
        return changed
    }

    /// Whether `route` can change the route to a watched address of its family (its prefix
    /// contains one; a default route contains them all; a route of another family may, for all
    /// this set knows). The addresses a prefix contains are consecutive in sorted order: the
    /// first one not below the prefix's network address decides.
    package func isAffected(byRouteTo route: RouteMessage) -> Bool {
        guard let family = route.addressFamily else { return true }
        let addresses = family == .ipv4 ? ipv4 : ipv6
        guard let network = route.network else { return !addresses.isEmpty }
        let index = Self.insertionIndex(of: network, in: addresses)
        return index < addresses.count && route.prefixContains(addresses[index])
    }

    /// Makes `address` the caller's most recently asked; returns whether it was new and the
    /// address pushed out to make room, if one was.
    private static func ask(about address: IPAddress, in addresses: inout [IPAddress], capacity: Int) -> (Bool, IPAddress?) {
        if let index = addresses.firstIndex(of: address) {
            addresses.append(addresses.remove(at: index))
            return (false, nil)
        }
        let evicted = addresses.count == capacity ? addresses.removeFirst() : nil
        addresses.append(address)
        return (true, evicted)
    }

    /// One more caller watches `address`; true when it was watched by none.
    private mutating func retain(_ address: IPAddress) -> Bool {
        watchers[address, default: 0] += 1
        guard watchers[address] == 1 else { return false }
        if address.family == .ipv4 {
            ipv4.insert(address, at: Self.insertionIndex(of: address, in: ipv4))
        } else {
            ipv6.insert(address, at: Self.insertionIndex(of: address, in: ipv6))
        }
        return true
    }

    /// One caller less watches `address`; true when none is left.
    private mutating func release(_ address: IPAddress) -> Bool {
        guard let count = watchers[address] else { return false }
        guard count == 1 else {
            watchers[address] = count - 1
            return false
        }
        watchers[address] = nil
        if address.family == .ipv4 {
            ipv4.remove(at: Self.insertionIndex(of: address, in: ipv4))
        } else {
            ipv6.remove(at: Self.insertionIndex(of: address, in: ipv6))
        }
        return true
    }

    /// The first position in sorted `addresses` (of one family) whose address is not below `address`.
    private static func insertionIndex(of address: IPAddress, in addresses: [IPAddress]) -> Int {
        var low = 0
        var high = addresses.count
        while low < high {
            let middle = (low + high) / 2
            if addresses[middle].bytes.lexicographicallyPrecedes(address.bytes) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
