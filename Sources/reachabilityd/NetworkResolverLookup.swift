import ReachabilityCore
import ReachabilityService

/// Where the daemon's RFC 7050 lookup goes, chosen at each lookup as the host's own lookups
/// go: to systemd-resolved over the system bus while resolv.conf names its stub (the packaged
/// unit lets the daemon reach the bus, and nothing reach resolved's stub), else through the
/// check helper's system resolver (which the packaged unit lets out only where a drop-in's
/// `IPAddressAllow=` names the resolver's address). Confined to the daemon's queue.
final class NetworkResolverLookup: IPv6AddressLookup {
    /// What the operator can do when the helper's lookup finds nothing: under the packaged
    /// unit no packet reaches a resolver unless allowed.
    static let helperRemedy = "under the packaged unit (IPAddressDeny=any) with no systemd-resolved, the lookup's packets are dropped "
        + "unless a drop-in allows the resolver's address with IPAddressAllow= (reachabilityd(8))."

    private let resolved: ResolvedAddressLookup
    private let helper: CheckClientAddressLookup
    private let nameServerSources: NameServerSources

    /// - Parameters:
    ///   - resolved: the way to resolved's bus API.
    ///   - helperClient: the check helper's client, whose resolver is asked otherwise.
    ///   - nameServerSources: which says whether resolv.conf names resolved's stub.
    init(resolved: ResolvedAddressLookup, helperClient: HTTPCheckClient, nameServerSources: NameServerSources) {
        self.resolved = resolved
        helper = CheckClientAddressLookup(client: helperClient, remedyWhenEmpty: Self.helperRemedy)
        self.nameServerSources = nameServerSources
    }

    func lookUpIPv6Addresses(of name: String, over link: InterfaceIndex, completion: @escaping @Sendable (IPv6AddressLookupAnswer) -> Void) {
        let way: IPv6AddressLookup = nameServerSources.usesResolved ? resolved : helper
        way.lookUpIPv6Addresses(of: name, over: link, completion: completion)
    }
}
