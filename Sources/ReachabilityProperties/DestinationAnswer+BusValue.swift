import ReachabilityBus
import ReachabilityCore

// `CheckDestination`'s reply in its bus form (`a{sv}`).

extension DestinationAnswer {
    /// The reply's dictionary, every key always present (strings, "" when none): `status`,
    /// `interface`, `transport`, `source`, `gateway`, `via`, `address`, `reason`.
    public var dictionary: [String: BusValue] {
        [
            Self.statusKey: .string(verdict.status.rawValue),
            "interface": .string(verdict.link?.name ?? ""),
            "transport": .string(verdict.link.map(\.effectiveTransport.rawValue) ?? ""),
            "source": .string(source?.description ?? ""),
            "gateway": .string(gateway?.description ?? ""),
            Self.viaKey: .string(path.rawValue),
            "address": .string(address),
            "reason": .string(verdict.reason),
        ]
    }
}
