import RTNetlink
import ReachabilityCore

/// The daemon's mirror of the kernel's links and addresses, kept from dumps and events.
/// Routes are not mirrored: the kernel is asked for the route it would use.
struct LinkTable {
    private struct AddressKey: Hashable {
        var index: Int32
        var family: UInt8
        var address: [UInt8]
        var prefixLength: UInt8
    }

    private(set) var links: [Int32: LinkFacts] = [:]
    private var addresses: [AddressKey: AddressFacts] = [:]
    private let inspector: SysfsLinkInspector

    init(inspector: SysfsLinkInspector) {
        self.inspector = inspector
    }

    /// Forgets everything (before a resynchronising dump).
    mutating func removeAll() {
        links.removeAll()
        addresses.removeAll()
    }

    /// Applies one link or address message; returns whether it was one.
    @discardableResult
    mutating func apply(_ payload: RouteNetlinkPayload) -> Bool {
        switch payload {
        case .newLink(let link):
            let name = link.name ?? links[link.index]?.name ?? "if\(link.index)"
            let isLoopback = link.flags & LinkFlag.loopback != 0 || link.hardwareType == HardwareType.loopback
            let classification = inspector.classificationFacts(name: name, kind: link.kind, hardwareType: link.hardwareType)
            links[link.index] = LinkFacts(
                index: link.index,
                name: name,
                isUp: link.flags & LinkFlag.up != 0,
                hasCarrier: link.flags & LinkFlag.lowerUp != 0,
                isLoopback: isLoopback,
                transport: TransportClassifier.classify(classification)
            )
        case .deleteLink(let link):
            links[link.index] = nil
            addresses = addresses.filter { $0.key.index != link.index }
        case .newAddress(let address):
            guard let key = Self.key(address), let family = Self.family(address.family) else { return true }
            addresses[key] = AddressFacts(
                family: family,
                isGlobalScope: address.scope == Scope.universe,
                isTentative: address.flags & AddressFlag.tentative != 0,
                isDuplicateAddressDetectionFailed: address.flags & AddressFlag.duplicateAddressDetectionFailed != 0
            )
        case .deleteAddress(let address):
            if let key = Self.key(address) { addresses[key] = nil }
        default:
            return false
        }
        return true
    }

    /// The addresses configured on link `index`.
    func addresses(onLink index: Int32) -> [AddressFacts] {
        addresses.compactMap { $0.key.index == index ? $0.value : nil }
    }

    static func family(_ number: UInt8) -> AddressFamily? {
        switch number {
        case IPAddressBytes.ipv4Family: .ipv4
        case IPAddressBytes.ipv6Family: .ipv6
        default: nil
        }
    }

    private static func key(_ address: AddressMessage) -> AddressKey? {
        guard let bytes = address.address else { return nil }
        return AddressKey(index: address.index, family: address.family, address: bytes, prefixLength: address.prefixLength)
    }
}
