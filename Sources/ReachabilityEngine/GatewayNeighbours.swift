import RTNetlink
import ReachabilityCore

/// The gateway a probe's route goes through, and what its neighbour (ARP / NDP) entry says:
/// passive evidence that packets do not get out, gathered without sending a packet of ours.
public struct GatewayNeighbour: Sendable, Hashable {
    /// The gateway's address.
    public var address: IPAddress
    /// The link the route reaches it over.
    public var link: InterfaceIndex
    /// Whether the kernel failed to resolve it (`NUD_FAILED`) while its link had carrier, and
    /// neither a resolution nor a carrier loss has come since.
    public var hasFailed: Bool
    /// Its link-layer address (a MAC) as its entry last resolved it; nil until then (``NetworkIdentity``).
    public var linkLayerAddress: [UInt8]?

    /// What it says about connectivity: `limited` after a failure, nothing otherwise.
    public var evidence: Connectivity? { hasFailed ? .limited : nil }
}

/// The gateways followed: per family the one the probe's route takes now, and the few taken
/// recently (a default route that comes and goes keeps its gateway followed, so that its return
/// costs neither a new filter nor a read). Pure state, no I/O: the engine reads a new gateway's
/// entry and feeds neighbour messages in.
///
/// Evidence is about the network the link is on: a failure seen on a link without carrier
/// says nothing (nothing could answer), and a carrier loss forgets what was seen before it
/// (the network that comes back may be another, and nothing may be sent to the gateway again
/// for a long time to tell).
struct GatewayNeighbours {
    /// The recently chosen gateways of each family, least recently chosen first.
    private var known: [AddressFamily: [GatewayNeighbour]] = [:]
    /// Where each family's current gateway is in `known`.
    private var chosen: [AddressFamily: (address: IPAddress, link: InterfaceIndex)] = [:]
    /// How many gateways a family keeps following.
    static let capacity = NetlinkSocketFilter.maximumNeighboursPerFamily

    /// The gateway `family`'s probe route takes now, with what is known of it; nil without one.
    func current(_ family: AddressFamily) -> GatewayNeighbour? {
        guard let gateway = chosen[family] else { return nil }
        return known[family]?.first { $0.address == gateway.address && $0.link == gateway.link }
    }

    /// Follows the gateways `chosen` (a family's route without a gateway has none). A gateway
    /// followed already keeps what was learnt about it; the least recently chosen beyond
    /// ``capacity`` is forgotten.
    ///
    /// - Returns: the families whose gateway is new, whose entry the caller reads with
    ///   ``read(_:for:)``. The followed addresses (``addresses(of:)``) change exactly then.
    mutating func follow(_ chosen: [AddressFamily: (address: IPAddress, link: InterfaceIndex)]) -> [AddressFamily] {
        self.chosen = chosen
        var fresh: [AddressFamily] = []
        for (family, gateway) in chosen {
            var list = known[family] ?? []
            if let index = list.firstIndex(where: { $0.address == gateway.address && $0.link == gateway.link }) {
                list.append(list.remove(at: index))
            } else {
                list.append(GatewayNeighbour(address: gateway.address, link: gateway.link, hasFailed: false, linkLayerAddress: nil))
                fresh.append(family)
            }
            known[family] = Array(list.suffix(Self.capacity))
        }
        return fresh.sorted { $0.rawValue < $1.rawValue }
    }

    /// The entry of `family`'s current gateway as read from the kernel (nil: there is none yet),
    /// with its link-layer address, while its link has carrier or not (`linkHasCarrier`).
    mutating func read(_ state: NeighbourState?, linkLayerAddress: [UInt8]? = nil, for family: AddressFamily, linkHasCarrier: Bool) {
        guard let state, let gateway = chosen[family] else { return }
        update(family, address: gateway.address, link: gateway.link, with: state, linkLayerAddress: linkLayerAddress, linkHasCarrier: linkHasCarrier)
    }

    /// A new or changed neighbour entry (`RTM_NEWNEIGH`) of a followed gateway, on a link with
    /// carrier or not (`linkHasCarrier`); returns whether the evidence or the link-layer address
    /// of a family's current gateway changed. (A deleted entry says nothing: a failed gateway stays failed until it
    /// resolves again or its link loses carrier.)
    mutating func apply(_ message: NeighbourMessage, linkHasCarrier: Bool) -> Bool {
        guard let address = message.destinationAddress else { return false }
        let before = current(address.family)
        update(address.family, address: address, link: message.index, with: message.state, linkLayerAddress: message.linkLayerAddress, linkHasCarrier: linkHasCarrier)
        return current(address.family) != before
    }

    /// `link` lost its carrier (or went): what its gateways' entries said is forgotten, their
    /// link-layer addresses too (the network that comes back may be another).
    ///
    /// - Returns: whether the evidence of a family's current gateway changed.
    mutating func linkLostCarrier(_ link: InterfaceIndex) -> Bool {
        let before = AddressFamily.allCases.map(current)
        for (family, var list) in known {
            for index in list.indices where list[index].link == link {
                list[index].hasFailed = false
                list[index].linkLayerAddress = nil
            }
            known[family] = list
        }
        return AddressFamily.allCases.map(current) != before
    }

    /// The addresses the neighbour socket's filter keeps entries of: every followed gateway's.
    func addresses(of family: AddressFamily) -> [IPAddress] {
        var addresses: [IPAddress] = []
        for gateway in known[family] ?? [] where !addresses.contains(gateway.address) {
            addresses.append(gateway.address)
        }
        return addresses
    }

    private mutating func update(
        _ family: AddressFamily, address: IPAddress, link: InterfaceIndex, with state: NeighbourState, linkLayerAddress: [UInt8]?, linkHasCarrier: Bool
    ) {
        guard let index = known[family]?.firstIndex(where: { $0.address == address && $0.link == link }) else { return }
        switch state {
        case .failed: if linkHasCarrier { known[family]?[index].hasFailed = true }
        case .resolved:
            known[family]?[index].hasFailed = false
            // (A resolved entry carries the address; the same gateway address behind another
            // router, a new network, changes it.)
            if let linkLayerAddress, !linkLayerAddress.isEmpty { known[family]?[index].linkLayerAddress = linkLayerAddress }
        case .resolving: break
        }
    }
}
