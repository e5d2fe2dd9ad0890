import RTNetlink
import ReachabilityCore

/// The gateway a probe's route goes through, and what its neighbour (ARP / NDP) entry says:
/// passive evidence that packets do not get out, gathered without sending a packet of ours.
public struct GatewayNeighbour: Sendable, Hashable {
    /// The gateway's address.
    public var address: IPAddress
    /// The link the route reaches it over.
    public var link: InterfaceIndex
    /// Whether the kernel failed to resolve it (`NUD_FAILED`) and nothing has resolved it since.
    public var hasFailed: Bool

    /// What it says about connectivity: `limited` after a failure, nothing otherwise.
    public var evidence: Connectivity? { hasFailed ? .limited : nil }
}

/// The gateways followed, one per family: the ones the probes' routes take. Pure state, no I/O:
/// the engine reads a new gateway's entry and feeds neighbour messages in.
struct GatewayNeighbours {
    /// The followed gateway of each family that has one.
    private(set) var byFamily: [AddressFamily: GatewayNeighbour] = [:]

    /// Follows the gateways `chosen` (a family's route without a gateway has none). A gateway
    /// followed already keeps what was learnt about it.
    ///
    /// - Returns: the families whose gateway is new, whose entry the caller reads with ``read(_:for:)``.
    mutating func follow(_ chosen: [AddressFamily: (address: IPAddress, link: InterfaceIndex)]) -> [AddressFamily] {
        var fresh: [AddressFamily] = []
        var next: [AddressFamily: GatewayNeighbour] = [:]
        for (family, gateway) in chosen {
            if let known = byFamily[family], known.address == gateway.address, known.link == gateway.link {
                next[family] = known
            } else {
                next[family] = GatewayNeighbour(address: gateway.address, link: gateway.link, hasFailed: false)
                fresh.append(family)
            }
        }
        byFamily = next
        return fresh.sorted { $0.rawValue < $1.rawValue }
    }

    /// The entry of `family`'s gateway as read from the kernel (nil: there is none yet).
    mutating func read(_ state: NeighbourState?, for family: AddressFamily) {
        guard let state else { return }
        update(family, with: state)
    }

    /// A new or changed neighbour entry (`RTM_NEWNEIGH`); returns whether a followed gateway's
    /// evidence changed. (A deleted entry says nothing: a failed gateway stays failed until it
    /// resolves again.)
    mutating func apply(_ message: NeighbourMessage, family: AddressFamily) -> Bool {
        guard let gateway = byFamily[family], message.index == gateway.link.rawValue,
              message.destination == gateway.address.bytes
        else { return false }
        return update(family, with: message.state)
    }

    /// The addresses the socket filter keeps neighbour messages of.
    func addresses(of family: AddressFamily) -> [[UInt8]] {
        byFamily[family].map { [$0.address.bytes] } ?? []
    }

    @discardableResult
    private mutating func update(_ family: AddressFamily, with state: NeighbourState) -> Bool {
        guard var gateway = byFamily[family] else { return false }
        switch state {
        case .failed: gateway.hasFailed = true
        case .resolved: gateway.hasFailed = false
        case .resolving: return false
        }
        defer { byFamily[family] = gateway }
        return gateway != byFamily[family]
    }
}
