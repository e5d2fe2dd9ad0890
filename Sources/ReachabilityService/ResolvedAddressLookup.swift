#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import ReachabilityBus
import ReachabilityCore
import SystemSupport

/// RFC 7050's lookup asked of systemd-resolved over the system bus
/// (`org.freedesktop.resolve1.Manager.ResolveHostname`), from the daemon itself: the packaged
/// unit's sandbox lets no lookup out of the check helper (`IPAddressDeny=any` drops even
/// loopback's packets to resolved's stub, and the helper's seccomp filter refuses the
/// `AF_UNIX` socket nss-resolve would use), while the bus is open to the daemon.
///
/// The link asked over is IPv6's path's (RFC 7050 §3: the network's own resolver; resolved
/// then uses that link's servers only, where interface 0 would use every default-route link's,
/// a VPN's among them). resolved's errors (`NoSuchRR`, `DnssecFailed`, a timeout…) are
/// answers that found nothing; one that says resolved does not run names the remedy. Confined
/// to `queue`, where answers come; the call is made on the connection's own queue.
package final class ResolvedAddressLookup: IPv6AddressLookup {
    private let queue: DispatchQueue
    /// The system bus; nil until ``attach(to:)``.
    private var connection: BusConnection?
    /// The lookups asked for before ``attach(to:)`` (the engine starts before the bus is up).
    private var waiting: [(name: String, link: InterfaceIndex, completion: @Sendable (IPv6AddressLookupAnswer) -> Void)] = []

    /// What the operator can do when resolved does not answer at all.
    static let remedy = "resolv.conf names systemd-resolved's stub but resolved does not answer on the system bus: "
        + "start systemd-resolved, or name the network's resolver in resolv.conf and allow its address with an IPAddressAllow= drop-in (reachabilityd(8))."

    /// - Parameter queue: where answers come (the engine's).
    package init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// The system bus is up: lookups go to resolved from now on.
    package func attach(to connection: BusConnection) {
        dispatchPrecondition(condition: .onQueue(queue))
        self.connection = connection
        for lookup in waiting { lookUpIPv6Addresses(of: lookup.name, over: lookup.link, completion: lookup.completion) }
        waiting = []
    }

    package func lookUpIPv6Addresses(of name: String, over link: InterfaceIndex, completion: @escaping @Sendable (IPv6AddressLookupAnswer) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let connection else { return waiting.append((name, link, completion)) }
        let queue = queue
        connection.queue.async {
            do throws(SystemError) {
                try connection.call(
                    destination: NameServerSources.resolvedBusName, path: "/org/freedesktop/resolve1", interface: "org.freedesktop.resolve1.Manager",
                    member: "ResolveHostname", arguments: [.int32(link.rawValue), .string(name), .int32(AF_INET6), .uint64(0)],
                    returning: ResolvedHostnameAddresses.self, timeoutMicroseconds: 10_000_000, startsService: false
                ) { reply in
                    let answer = Self.answer(reply.map(\.addresses))
                    queue.async { completion(answer) }
                }
            } catch {
                queue.async { completion(.failed(reason: "\(error)", remedy: nil)) }
            }
        }
    }

    /// What resolved's reply (its IPv6 addresses, or its error) comes to.
    static func answer(_ reply: Result<[IPAddress], BusError>) -> IPv6AddressLookupAnswer {
        switch reply {
        case .success(let addresses) where addresses.isEmpty:
            .failed(reason: "systemd-resolved found no IPv6 address", remedy: nil)
        case .success(let addresses):
            .addresses(addresses)
        case .failure(let error) where error.name == BusError.serviceUnknown || error.name == BusError.nameHasNoOwner:
            .failed(reason: "systemd-resolved: \(error)", remedy: remedy)
        case .failure(let error):
            .failed(reason: "systemd-resolved: \(error)", remedy: nil)
        }
    }
}

/// `ResolveHostname`'s reply, `a(iiay)st`: the IPv6 addresses among its `(ifindex, family,
/// address)` entries (the canonical name and flags are not needed).
struct ResolvedHostnameAddresses: BusReplyValue {
    var addresses: [IPAddress]

    init(reading reply: BusMessage) throws(SystemError) {
        addresses = try reply.readLinkAddresses().compactMap { entry in
            entry.family == AF_INET6 ? IPAddress(family: .ipv6, bytes: entry.address) : nil
        }
    }
}
