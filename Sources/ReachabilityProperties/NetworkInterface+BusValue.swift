import ReachabilityBus
import ReachabilityCore

// An entry of `Interfaces` in its bus form (`a{sv}`), written by the daemon, read by the client.

extension NetworkInterface {
    /// The entry as one dictionary of the `Interfaces` property (`a{sv}`).
    public var busDictionary: [String: BusValue] {
        [
            Key.name.rawValue: .string(name),
            Key.index.rawValue: .unsigned32(UInt32(clamping: index.rawValue)),
            Key.transport.rawValue: .string(transport.rawValue),
            Key.operational.rawValue: .string(operational.rawValue),
            Key.ipv4.rawValue: .boolean(hasIPv4),
            Key.ipv6.rawValue: .boolean(hasIPv6),
            Key.gateways.rawValue: .strings(gateways.map { $0.description }),
            Key.metered.rawValue: .boolean(isMetered),
            Key.ignored.rawValue: .string(ignoreReason),
            Key.dns.rawValue: .strings(nameServers.map { $0.description }),
            Key.mtu.rawValue: .unsigned32(mtu),
            Key.networkID.rawValue: .string(networkID),
        ]
    }

    /// The entry one dictionary of `Interfaces` describes; keys it does not know are ignored
    /// (a newer daemon may add some), a missing or mistyped one takes its empty value, a
    /// transport or state word it does not know reads as `other` or `down`, a gateway that is
    /// no address is left out. Nil without a name.
    public init?(busDictionary dictionary: [String: BusValue]) {
        func value(_ key: Key) -> BusValue? { dictionary[key.rawValue] }
        guard let name = value(.name)?.string, !name.isEmpty else { return nil }
        func number(_ key: Key) -> UInt64 {
            switch value(key) {
            case .unsigned32(let number)?: UInt64(number)
            case .unsignedInteger(let number)?: number
            default: 0
            }
        }
        self.init(
            name: name,
            index: InterfaceIndex(Int32(clamping: number(.index))),
            transport: value(.transport)?.string.flatMap(Transport.init(rawValue:)) ?? .other,
            operational: value(.operational)?.string.flatMap(OperationalState.init(rawValue:)) ?? .down,
            hasIPv4: value(.ipv4)?.boolean ?? false,
            hasIPv6: value(.ipv6)?.boolean ?? false,
            gateways: (value(.gateways)?.strings ?? []).compactMap(IPAddress.init),
            isMetered: value(.metered)?.boolean ?? false,
            ignoreReason: value(.ignored)?.string ?? "",
            nameServers: (value(.dns)?.strings ?? []).compactMap(IPAddress.init),
            mtu: UInt32(clamping: number(.mtu)),
            networkID: value(.networkID)?.string ?? ""
        )
    }
}
