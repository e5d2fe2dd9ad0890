// Which link and address events can change the published status, so that the engine asks the
// kernel about the probes again only for those: on a Kubernetes-like node a thousand veth pairs
// come and go in a bridge, and none of them is on the probes' path.

/// A change the engine's mirror took from a link or address message.
package enum MirrorChange: Sendable, Hashable {
    /// A link appeared, changed or went (`RTM_NEWLINK`, `RTM_DELLINK`).
    case link(LinkChange)
    /// An address came, changed or went (`RTM_NEWADDR`, `RTM_DELADDR`) on link `index`;
    /// `isGlobalScope`: of universe scope (any address but link- and host-scoped ones).
    case address(index: InterfaceIndex, isGlobalScope: Bool)
}

/// One link message's change: the link's index, and its names and masters before and after
/// (both when they differ; none before for a new link, none after for a deleted one).
package struct LinkChange: Sendable, Hashable {
    /// The link's index.
    package var index: InterfaceIndex
    /// The link's name before and after the message.
    package var names: Set<String>
    /// The bridge, bond or VRF (`IFLA_MASTER`) the link was and is a port of.
    package var masters: Set<InterfaceIndex>

    /// The change from `before` (nil: a new link) to `after` (nil: deleted) of link `index`.
    package init(index: InterfaceIndex, before: LinkDescription?, after: LinkDescription?) {
        self.index = index
        names = Set([before?.name, after?.name].compactMap { $0 })
        masters = Set([before?.masterIndex, after?.masterIndex].compactMap { $0 })
    }
}

/// The links the last evaluation read, besides the kernel's answers: a change of any other link
/// cannot change what the kernel answers for the probes nor what the rule concludes from them.
///
/// - ``links``: the links the probes' routes (and the nameservers' routes) go out of, and those
///   the selected sources are on; every link holding an address of universe scope (the kernel
///   selects a source among them, IPv4 from any link, and a tunnel's underlying link is one of
///   them); every link a default route goes out of (in any table); and the ``classified`` ones.
/// - ``classified``: the links whose transport and ignore reason the evaluation read (the route
///   links, the links beneath them and their ports, recursively; a tunnel's candidate underlying
///   links): a port joining or leaving one of them changes its classification.
/// - ``zoneNames``: the names the nameservers' IPv6 zones give (a link appearing or renamed to
///   one changes the link a zone names).
///
/// A change of a link outside them — a container's veth end, a bridge port, a link without a
/// global address or a default route — takes no walk. (Assumed: no route containing a probe goes
/// out of such a link but a default route; the kernel announces any route added later, and that
/// walks.)
package struct LinksInUse: Sendable, Equatable {
    /// The links whose any change takes a walk.
    package var links: Set<InterfaceIndex>
    /// The links whose ports' changes take a walk.
    package var classified: Set<InterfaceIndex>
    /// The names whose appearance takes a walk.
    package var zoneNames: Set<String>
    /// Whether every change takes a walk (before the first evaluation, or while the evaluation
    /// reads more than this records: a NAT64 prefix in use).
    package var isEveryLink: Bool

    /// Every change takes a walk.
    package static let every = LinksInUse(links: [], classified: [], zoneNames: [], isEveryLink: true)

    /// Creates the record.
    package init(links: Set<InterfaceIndex>, classified: Set<InterfaceIndex>, zoneNames: Set<String> = [], isEveryLink: Bool = false) {
        self.links = links
        self.classified = classified
        self.zoneNames = zoneNames
        self.isEveryLink = isEveryLink
    }

    /// The links an evaluation read.
    ///
    /// - Parameters:
    ///   - routeLinks: the links the kernel's answers go out of (the probes', the nameservers').
    ///   - sourceLinks: the links holding the selected sources.
    ///   - links: every link the mirror holds.
    ///   - globalAddressHolders: the links holding an address of universe scope.
    ///   - defaultRouteLinks: the links default routes go out of.
    ///   - zoneNames: the nameservers' zones.
    ///   - configuration: the configuration in force (its container patterns leave ports out of a
    ///     bridge's classification, not out of this record: every port counts here).
    package static func read(
        routeLinks: Set<InterfaceIndex>, sourceLinks: Set<InterfaceIndex>, links: [InterfaceIndex: LinkDescription],
        globalAddressHolders: Set<InterfaceIndex>, defaultRouteLinks: Set<InterfaceIndex>, zoneNames: Set<String>, configuration: DaemonConfiguration
    ) -> LinksInUse {
        var classifiedRoots = routeLinks
        // A tunnel without a bound link is classified with the physical links that could carry it.
        if routeLinks.contains(where: { TransportClassifier.classify($0, in: links, configuration: configuration).transport == .vpn }) {
            classifiedRoots.formUnion(globalAddressHolders)
        }
        let classified = closure(of: classifiedRoots, in: links)
        return LinksInUse(
            links: classified.union(sourceLinks).union(globalAddressHolders).union(defaultRouteLinks), classified: classified, zoneNames: zoneNames
        )
    }

    /// `roots`, the links beneath them (`IFLA_LINK`) and their ports (`IFLA_MASTER`), recursively.
    private static func closure(of roots: Set<InterfaceIndex>, in links: [InterfaceIndex: LinkDescription]) -> Set<InterfaceIndex> {
        guard !roots.isEmpty else { return [] }
        var found = roots
        var frontier = Array(roots)
        // Ports, found with one pass over the links per level.
        let portsByMaster = Dictionary(grouping: links.values.filter { $0.masterIndex != nil }, by: { $0.masterIndex! })
        while let index = frontier.popLast() {
            let next = (links[index]?.lowerIndex.map { [$0] } ?? []) + (portsByMaster[index]?.map(\.index) ?? [])
            for link in next where found.insert(link).inserted { frontier.append(link) }
        }
        return found
    }

    /// Whether `change` can change what the evaluation concludes: an address of universe scope
    /// anywhere, or any change of a link in use (a port of a classified one included, a link
    /// appearing under a zone's name).
    package func needsWalk(_ change: MirrorChange) -> Bool {
        if isEveryLink { return true }
        switch change {
        case .address(let index, let isGlobalScope):
            return isGlobalScope || links.contains(index)
        case .link(let link):
            return links.contains(link.index) || !link.masters.isDisjoint(with: classified) || !link.names.isDisjoint(with: zoneNames)
        }
    }
}
