import ReachabilityCore

/// Assembles ``ExplainReport`` from the engine's state: the probes' families as `report()` asked
/// the kernel about them again for this call (not the answers of the last evaluation), the links
/// of the mirror with their addresses and advertised captive-portal APIs, and the publishing
/// state. Pure: reads values, asks the kernel nothing.
enum ExplainAssembly {
    /// What the engine's state is when `Explain()` is called.
    struct State {
        /// The last evaluation.
        var evaluation: ReachabilitySnapshot
        /// What subscribers see while a loss is held back; nil when none is.
        var heldBack: ReachabilitySnapshot?
        /// Whether a `RoutesChanged` waits for the end of its interval.
        var routesChangedPending: Bool
        /// Whether a route filter rebuild waits for the end of its interval.
        var routeFilterRebuildPending: Bool
        /// Whether a listing of `Interfaces` waits for the end of its window.
        var interfacesListingPending = false
        /// The configuration in force.
        var configuration: DaemonConfiguration
        /// What ``AdvertisedNAT64Prefixes/explanation(ipv6Link:now:linkName:)`` says.
        var nat64Prefixes: [String]
    }

    /// The report: `families` (the probes, each with the kernel's answers and verdict), the
    /// probes' output links in full, then the first links by index up to
    /// ``ExplainReport/linkLimit``; the rest only counted (in one pass), so that a host with
    /// thousands of links gets a bounded report at a small cost.
    static func report(
        families: [ExplainReport.Family], table: LinkTable, captivePortalAPIs: AdvertisedCaptivePortalAPIs, state: State
    ) -> ExplainReport {
        let shown = Set(table.links.keys.sorted().prefix(ExplainReport.linkLimit)).union(families.compactMap { $0.facts.outputLink?.index })
        let addressesByLink = Dictionary(grouping: table.addresses.filter { shown.contains($0.key.index) }, by: \.key.index)
        let links = shown.sorted().compactMap { index -> ExplainReport.Link? in
            guard let facts = table.facts(forLink: index, configuration: state.configuration) else { return nil }
            let addresses = (addressesByLink[index] ?? [])
                .map { ExplainReport.Address(text: "\($0.key.address)/\($0.key.prefixLength)", facts: $0.value) }
                .sorted { $0.text < $1.text }
            return ExplainReport.Link(
                facts: facts, addresses: addresses, captivePortalAPIs: captivePortalAPIs.advertised(on: index).map { "\($0.uri) (RFC 8910, \($0.source.rawValue))" }
            )
        }
        var omitted = ExplainReport.OmittedLinks(count: 0, up: 0, withCarrier: 0)
        for (index, link) in table.links where !shown.contains(index) {
            omitted.count += 1
            if link.isUp { omitted.up += 1 }
            if link.isUp, link.hasCarrier { omitted.withCarrier += 1 }
        }
        return ExplainReport(
            evaluation: state.evaluation, heldBack: state.heldBack,
            routesChangedPending: state.routesChangedPending, routeFilterRebuildPending: state.routeFilterRebuildPending,
            interfacesListingPending: state.interfacesListingPending,
            families: families, nat64Prefixes: state.nat64Prefixes, links: links,
            omittedLinks: omitted.count == 0 ? nil : omitted,
            configuration: state.configuration
        )
    }
}
