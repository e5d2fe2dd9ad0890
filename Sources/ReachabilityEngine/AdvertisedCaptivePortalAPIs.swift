import ReachabilityCore

/// How a network's captive-portal API URI (RFC 8910) reached the daemon.
public enum CaptivePortalAPISource: String, CaseIterable, Comparable, Sendable {
    /// An IPv6 router advertisement's option 37, read from the kernel.
    case routerAdvertisement = "router advertisement"
    /// DHCPv4's option 114, as systemd-networkd recorded it.
    case networkdDHCPv4 = "DHCPv4, from systemd-networkd"
    /// DHCPv4's option 114, as NetworkManager recorded it.
    case networkManagerDHCPv4 = "DHCPv4, from NetworkManager"

    /// Source order: the first is asked.
    public static func < (left: Self, right: Self) -> Bool {
        allCases.firstIndex(of: left)! < allCases.firstIndex(of: right)!
    }
}

/// The captive-portal API URIs networks advertise (RFC 8910), per link and per way they came.
/// Pure state; the engine feeds it and the active check asks it.
struct AdvertisedCaptivePortalAPIs: Equatable {
    typealias Source = CaptivePortalAPISource

    /// RFC 8910's "there is no captive portal" URN, which clears what a source said.
    static let unrestricted = "urn:ietf:params:capport:unrestricted"

    private var uris: [InterfaceIndex: [Source: String]] = [:]
    /// The router whose advertisement named each link's router-advertisement URI.
    private var advertisingRouters: [InterfaceIndex: IPAddress] = [:]

    /// Records what `source` says for `link`: a URI, or nothing (nil, "" or the unrestricted URN).
    ///
    /// - Parameters:
    ///   - uri: the URI advertised.
    ///   - link: where.
    ///   - source: how it came.
    ///   - router: for a router advertisement, the router that sent it.
    /// - Returns: whether that changed the URIs.
    @discardableResult
    mutating func set(_ uri: String?, for link: InterfaceIndex, from source: Source, router: IPAddress? = nil) -> Bool {
        let kept = uri.flatMap { $0.isEmpty || $0 == Self.unrestricted ? nil : $0 }
        if source == .routerAdvertisement { advertisingRouters[link] = kept == nil ? nil : router }
        guard uris[link]?[source] != kept else { return false }
        uris[link, default: [:]][source] = kept
        if uris[link]?.isEmpty == true { uris[link] = nil }
        return true
    }

    /// Forgets a link that went away.
    mutating func forget(_ link: InterfaceIndex) {
        uris[link] = nil
        advertisingRouters[link] = nil
    }

    /// Forgets what `router` advertised on `link` once it is no longer a router there (the
    /// kernel removed its default route: it advertised a lifetime of 0, or its lifetime ran out).
    ///
    /// - Returns: whether that changed the URIs.
    mutating func forget(router: IPAddress, on link: InterfaceIndex) -> Bool {
        guard advertisingRouters[link] == router else { return false }
        return set(nil, for: link, from: .routerAdvertisement)
    }

    /// The URI the active check asks for `link`: the router advertisement's, else DHCP's.
    func uri(for link: InterfaceIndex) -> String? {
        advertised(on: link).first?.uri
    }

    /// Every URI advertised on `link`, in source order.
    func advertised(on link: InterfaceIndex) -> [(source: Source, uri: String)] {
        (uris[link] ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
