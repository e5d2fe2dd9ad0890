import RTNetlink
import ReachabilityCore

/// The daemon's mirror of the kernel's links and addresses, kept from dumps and events, with
/// the default routes through them (for the `Interfaces` property's gateways). No other route
/// is mirrored: the kernel is asked for the route it would use.
struct LinkTable: Equatable {
    /// One configured address.
    struct Address: Hashable {
        var index: InterfaceIndex
        var address: IPAddress
        var prefixLength: UInt8

        /// The address's family.
        var family: AddressFamily { address.family }
    }

    private(set) var links: [InterfaceIndex: LinkDescription] = [:]
    private(set) var addresses: [Address: AddressFacts] = [:]
    /// Per link, the address from RFC 7335's 192.0.0.0/29 it holds (``CLATPath``), kept with
    /// ``addresses`` so that classifying a link does not scan every address.
    private(set) var clatAddresses: [InterfaceIndex: IPAddress] = [:]
    /// The default routes (prefix length 0, unicast, one output link) of every table.
    private(set) var defaultRoutes: Set<DefaultRoute> = []
    /// Per link, what NetworkManager and networkd's lease say of its meteredness (``MeteredRule``);
    /// not the kernel's, so a resynchronising dump keeps them, and a link's go with it.
    private(set) var meteredHints: [InterfaceIndex: MeteredHints] = [:]
    private let inspector: SysfsLinkInspector

    init(inspector: SysfsLinkInspector) {
        self.inspector = inspector
    }

    /// Forgets everything (before a resynchronising dump).
    mutating func removeAll() {
        links.removeAll()
        addresses.removeAll()
        clatAddresses.removeAll()
        defaultRoutes.removeAll()
    }

    /// Replaces the contents with what a link, address and route dump says (a
    /// resynchronisation): everything is forgotten, then each message is applied in order.
    /// `keepingDefaultRoutes`: a dump without routes; the default routes of the links that are
    /// still there and up are kept (the kernel flushes the others' routes).
    mutating func replace(withDump messages: [NetlinkMessage], keepingDefaultRoutes: Bool = false) {
        let kept = defaultRoutes
        removeAll()
        for message in messages where !apply(message.payload) { applyDefaultRoute(message.payload, replacing: false) }
        if keepingDefaultRoutes { defaultRoutes = kept.filter { links[$0.outputInterfaceIndex]?.isUp == true } }
    }

    /// Replaces the default routes with those of a route dump.
    mutating func replaceDefaultRoutes(withDump messages: [NetlinkMessage]) {
        defaultRoutes.removeAll()
        for message in messages { applyDefaultRoute(message.payload, replacing: false) }
    }

    /// Applies a route message to ``defaultRoutes``: a new default route is added (in place of
    /// the one it replaces when `replacing`, `NLM_F_REPLACE`: the same family, table and
    /// metric), a deleted one removed. Other prefixes, other types and routes without one
    /// output link (multipath) are not kept. Returns whether ``defaultRoutes`` changed.
    @discardableResult
    mutating func applyDefaultRoute(_ payload: RouteNetlinkPayload, replacing: Bool) -> Bool {
        switch payload {
        case .newRoute(let message):
            guard let route = Self.defaultRoute(message) else { return false }
            var replaced = false
            if replacing {
                let kept = defaultRoutes.filter { ($0.family, $0.table, $0.metric) != (route.family, route.table, route.metric) || $0 == route }
                replaced = kept.count != defaultRoutes.count
                defaultRoutes = kept
            }
            return defaultRoutes.insert(route).inserted || replaced
        case .deleteRoute(let message):
            guard let route = Self.defaultRoute(message) else { return false }
            return defaultRoutes.remove(route) != nil
        default:
            return false
        }
    }

    /// The default route a route message describes; nil for any other route.
    private static func defaultRoute(_ message: RouteMessage) -> DefaultRoute? {
        guard message.destinationLength == 0, message.type == .unicast, let family = message.addressFamily, let link = message.outputInterface else { return nil }
        return DefaultRoute(family: family, outputInterfaceIndex: link, gateway: message.gatewayAddress, table: message.table, metric: message.priority ?? 0)
    }

    /// Applies one link or address message; returns whether it was one.
    @discardableResult
    mutating func apply(_ payload: RouteNetlinkPayload) -> Bool {
        switch payload {
        case .newLink(let link):
            let index = link.index
            let previous = links[index]
            // An empty IFLA_IFNAME (the kernel never sends one) is no name: the status would
            // say reachable on interface "".
            let name = link.name.flatMap { $0.isEmpty ? nil : $0 } ?? previous?.name ?? "if\(link.index)"
            // sysfs is read when a link appears or is renamed, not on every flag change.
            let attributes = previous?.name == name
                ? SysfsLinkInspector.LinkAttributes(deviceType: previous?.deviceType, hasWirelessDirectory: previous?.hasWirelessDirectory ?? false, driver: previous?.driver)
                : inspector.attributes(ofLink: name)
            var description = LinkDescription(
                index: index,
                name: name,
                kind: link.kind ?? previous?.kind,
                hardwareType: link.hardwareType,
                deviceType: attributes.deviceType,
                hasWirelessDirectory: attributes.hasWirelessDirectory,
                driver: attributes.driver,
                // An index in another namespace may be any local link's index too.
                lowerIndex: link.isLowerInOtherNamespace ? nil : link.lowerIndex,
                isLowerInOtherNamespace: link.isLowerInOtherNamespace,
                masterIndex: link.masterIndex,
                isUp: link.isUp,
                hasCarrier: link.hasCarrier,
                isLoopback: link.isLoopback
            )
            description.mtu = link.mtu ?? previous?.mtu ?? 0
            links[index] = description
            // Taken down, the link loses its routes (the kernel flushes them without a word for IPv4).
            if !link.isUp { defaultRoutes = defaultRoutes.filter { $0.outputInterfaceIndex != index } }
        case .deleteLink(let link):
            let index = link.index
            links[index] = nil
            addresses = addresses.filter { $0.key.index != index }
            clatAddresses[index] = nil
            meteredHints[index] = nil
            defaultRoutes = defaultRoutes.filter { $0.outputInterfaceIndex != index }
        case .newAddress(let message):
            guard let address = Self.address(message) else { return true }
            if CLATPath.isCLATAddress(address.address) { clatAddresses[address.index] = address.address }
            addresses[address] = AddressFacts(
                family: address.family,
                isGlobalScope: message.isGlobalScope,
                isTentative: message.isTentative,
                isDuplicateAddressDetectionFailed: message.isDuplicateAddressDetectionFailed,
                isOptimistic: message.isOptimistic
            )
        case .deleteAddress(let message):
            guard let address = Self.address(message) else { return true }
            addresses[address] = nil
            if clatAddresses[address.index] == address.address {
                // (Rare: a second address of the range on the same link takes its place.)
                clatAddresses[address.index] = addresses.keys.first { $0.index == address.index && CLATPath.isCLATAddress($0.address) }?.address
            }
        default:
            return false
        }
        return true
    }

    /// The link that holds `address` (any prefix length) and the address's
    /// facts; nil when no link does. When several links hold it (one copy failed DAD, another
    /// is fine), a usable copy is the one the kernel selected; then the lowest index.
    func address(_ address: IPAddress) -> (link: LinkDescription, facts: AddressFacts)? {
        addresses
            .compactMap { held, facts in
                held.address == address ? links[held.index].map { (link: $0, facts: facts) } : nil
            }
            .min { ($0.facts.isUsableGlobal ? 0 : 1, $0.link.index) < ($1.facts.isUsableGlobal ? 0 : 1, $1.link.index) }
    }

    /// The link named `name`, if any.
    func index(named name: String) -> InterfaceIndex? {
        links.first { $0.value.name == name }?.key
    }

    /// The link an IPv6 zone names: by name ("eth1"), else by index ("2"); nil when none does.
    func index(ofZone zone: String) -> InterfaceIndex? {
        if let named = index(named: zone) { return named }
        guard let number = Int32(zone), links[InterfaceIndex(number)] != nil else { return nil }
        return InterfaceIndex(number)
    }

    /// Indices of links with at least one usable global address.
    var linksWithUsableGlobalAddress: Set<InterfaceIndex> {
        Set(addresses.compactMap { $0.value.isUsableGlobal ? $0.key.index : nil })
    }

    /// Indices of links holding an address of universe scope (usable or not).
    var linksWithGlobalScopeAddress: Set<InterfaceIndex> {
        Set(addresses.compactMap { $0.value.isGlobalScope ? $0.key.index : nil })
    }

    /// The `Interfaces` entries under `configuration`: ``InterfaceListing`` on
    /// ``classifiedLinks(configuration:)``, ``usableFamilies`` and ``defaultRoutes``.
    func interfaces(configuration: DaemonConfiguration) -> [NetworkInterface] {
        InterfaceListing.entries(links: classifiedLinks(configuration: configuration), usableFamilies: usableFamilies, defaultRoutes: Array(defaultRoutes))
    }

    /// Every link's classified facts under `configuration` (in no order): the costly part of
    /// the `Interfaces` entries, each link's name matched against the configuration's globs.
    func classifiedLinks(configuration: DaemonConfiguration) -> [LinkFacts] {
        links.keys.compactMap { facts(forLink: $0, configuration: configuration) }
    }

    /// Records what NetworkManager and networkd's lease say of link `index`'s meteredness;
    /// returns whether that changed. Hints about a link the table does not hold are dropped.
    mutating func setMeteredHints(_ hints: MeteredHints, for index: InterfaceIndex) -> Bool {
        guard links[index] != nil, (meteredHints[index] ?? .none) != hints else { return false }
        meteredHints[index] = hints == .none ? nil : hints
        return true
    }

    /// Per link, the families of its usable global addresses.
    var usableFamilies: [InterfaceIndex: Set<AddressFamily>] {
        var families: [InterfaceIndex: Set<AddressFamily>] = [:]
        for (address, facts) in addresses where facts.isUsableGlobal { families[address.index, default: []].insert(address.family) }
        return families
    }

    /// The classified facts of link `index` under `configuration`: a tunnel's with the link
    /// beneath it, a CLAT's (``clatAddresses``) with ``TransportClassifier/clatVerdict(_:clatAddress:beneath:)``.
    func facts(forLink index: InterfaceIndex, configuration: DaemonConfiguration) -> LinkFacts? {
        guard let link = links[index] else { return nil }
        var verdict = TransportClassifier.classify(index, in: links, configuration: configuration)
        var underlying: UnderlyingLink?
        if verdict.transport == .vpn,
           let beneath = TransportClassifier.underlying(ofTunnel: index, in: links, candidates: linksWithUsableGlobalAddress, configuration: configuration) {
            underlying = UnderlyingLink(name: beneath.link.name, transport: beneath.verdict.transport)
        }
        let clatAddress = clatAddresses[index]
        if let clatAddress, configuration.transportOverride(forInterface: link.name) == nil {
            verdict = TransportClassifier.clatVerdict(verdict, clatAddress: clatAddress, beneath: underlying)
        }
        return LinkFacts(
            index: index,
            name: link.name,
            isUp: link.isUp,
            hasCarrier: link.hasCarrier,
            isLoopback: link.isLoopback,
            transport: verdict.transport,
            transportReason: verdict.reason,
            ignoreReason: TransportClassifier.ignoreReason(for: link, in: links, configuration: configuration),
            underlying: underlying,
            metered: MeteredRule.decide(
                configured: configuration.meteredSetting(interface: link.name, transport: underlying?.transport ?? verdict.transport),
                hints: meteredHints[index] ?? .none, transport: underlying?.transport ?? verdict.transport
            ),
            clatAddress: clatAddress,
            mtu: link.mtu
        )
    }

    private static func address(_ message: AddressMessage) -> Address? {
        guard let address = message.ipAddress else { return nil }
        return Address(index: message.index, address: address, prefixLength: message.prefixLength)
    }
}

/// The links as the engine describes them, for a program that reads a link dump of its own
/// (`reachabilityctl wait --carrier-timeout`) and judges them with ReachabilityCore's rules.
package enum LinkDescriptions {
    /// Every link of a link dump, by index; sysfs is read once per link.
    ///
    /// - Parameters:
    ///   - messages: the dump's messages (any that are not links are skipped).
    ///   - inspector: where sysfs is read.
    package static func of(dump messages: [NetlinkMessage], inspector: SysfsLinkInspector = SysfsLinkInspector()) -> [InterfaceIndex: LinkDescription] {
        var table = LinkTable(inspector: inspector)
        table.replace(withDump: messages)
        return table.links
    }
}
