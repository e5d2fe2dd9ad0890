/// A way to ask the network's resolver for a name's AAAA records: RFC 7050's lookup of
/// `ipv4only.arpa`. The daemon picks the way (systemd-resolved over the bus while resolv.conf
/// names its stub, else the check helper's system resolver); discovery only asks.
public protocol IPv6AddressLookup: AnyObject {
    /// Looks up `name`'s IPv6 addresses over `link` (the network whose resolver is asked, where
    /// the way can choose one); `completion` runs once, on the caller's queue.
    func lookUpIPv6Addresses(of name: String, over link: InterfaceIndex, completion: @escaping @Sendable (IPv6AddressLookupAnswer) -> Void)
}

/// What an ``IPv6AddressLookup`` came to.
public enum IPv6AddressLookupAnswer: Sendable, Equatable {
    /// The addresses, in the resolver's order (at least one).
    case addresses([IPAddress])
    /// None: `reason` says why ("no AAAA record", a resolver's error); `remedy` says what the
    /// operator can change when the way itself may be what fails (a sandbox that drops the
    /// lookup's packets, a resolver that does not run), nil when the network answered.
    case failed(reason: String, remedy: String?)
}

/// RFC 7050's lookup through an ``HTTPCheckClient``'s resolver (the system resolver, as the
/// checks' own lookups go), which says nothing of why a lookup found nothing: every empty
/// answer carries `remedyWhenEmpty`.
package final class CheckClientAddressLookup: IPv6AddressLookup {
    private let client: HTTPCheckClient
    private let remedyWhenEmpty: String?

    /// - Parameters:
    ///   - client: the client whose resolver is asked.
    ///   - remedyWhenEmpty: what the operator may change when nothing comes back (nil: nothing).
    package init(client: HTTPCheckClient, remedyWhenEmpty: String? = nil) {
        self.client = client
        self.remedyWhenEmpty = remedyWhenEmpty
    }

    /// The system resolver has no choice of link: `link` is not used.
    package func lookUpIPv6Addresses(of name: String, over link: InterfaceIndex, completion: @escaping @Sendable (IPv6AddressLookupAnswer) -> Void) {
        client.lookUpAddresses(of: name, family: .ipv6) { [remedyWhenEmpty] addresses in
            completion(addresses.isEmpty
                ? .failed(reason: "no address came back through the system resolver (it failed or found none)", remedy: remedyWhenEmpty)
                : .addresses(addresses))
        }
    }
}
