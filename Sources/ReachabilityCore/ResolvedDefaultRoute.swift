/// Which of systemd-resolved's servers a name outside every routing domain goes to — a public
/// name such as `example.com` — the servers `DNS` judges.
///
/// resolved sends such a name to its global servers (`DNS=` of resolved.conf, or `FallbackDNS=`
/// while it knows no other), and to a link's servers only when that link is a default route
/// (`DNSDefaultRoute=` of systemd.network(5), resolvectl's `default-route`). What a link's
/// servers get is resolved's own decision (`dns_scope_is_default_route`): the configured value
/// when one is set, else "yes" unless the link has a routing-only domain (`~corp.example`) and
/// not `~.` — a split-DNS VPN's link, whose server only knows its own domains. resolved publishes
/// that decision as the link's `DefaultRoute` property (the configured value, else the one in
/// effect), which is read rather than worked out again here, so the two never disagree.
/// A link whose property cannot be read (a resolved older than the property, or the link gone
/// meanwhile) is counted, as before the property existed.
package enum ResolvedDefaultRoute {
    /// Whether a name outside every routing domain may go to a server of `origin`.
    ///
    /// - Parameters:
    ///   - origin: where the server was configured.
    ///   - linkIsDefaultRoute: for a per-link server of resolved, its link's `DefaultRoute`
    ///     property; nil when it could not be read (ignored for other origins).
    /// - Returns: false only for a per-link server whose link is no default route.
    package static func servesAnyDomain(_ origin: NameServerOrigin, linkIsDefaultRoute: Bool?) -> Bool {
        guard case .resolvedLink = origin else { return true }
        return linkIsDefaultRoute ?? true
    }
}
