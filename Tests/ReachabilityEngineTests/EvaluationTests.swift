#if canImport(Glibc)
import Glibc
#endif
@testable import RTNetlink
import ReachabilityCore
import SystemSupport
import XCTest
@testable import ReachabilityEngine

/// The walk's rule step, pure: what the walk gathered (the mirror, the kernel's answers, the
/// nameservers, the NAT64 prefixes known, the evidence held) in; the whole published snapshot
/// (route, evidence, `DNS`, `NAT64Prefix`, `IPv4Access`, the CLAT) and what the walk follows out.
final class EvaluationTests: XCTestCase {
    // MARK: Given: the mirror

    private static func link(_ index: InterfaceIndex, _ name: String, kind: String? = nil, type: HardwareType = .ethernet) -> RouteNetlinkPayload {
        .newLink(LinkMessage(index: index, hardwareType: type, flags: [.up, .lowerUp], name: name, kind: kind))
    }

    private static func address(_ text: String, length: UInt8, on index: InterfaceIndex) -> RouteNetlinkPayload {
        let address = IPAddress(text)!
        let family = UInt8(address.family == .ipv4 ? AF_INET : AF_INET6)
        return .newAddress(AddressMessage(family: family, prefixLength: length, flags: [], scope: 0, index: index, address: address.bytes))
    }

    private static func table(_ payloads: [RouteNetlinkPayload]) -> LinkTable {
        var table = LinkTable(inspector: SysfsLinkInspector(root: "/nonexistent/reachabilityd-tests/sys"))
        for payload in payloads { _ = table.apply(payload) }
        return table
    }

    /// Dual-stack: eth0 (index 2) holding 10.0.0.2/24 and 2001:db8::2/64.
    private static let dualStack = table([link(2, "eth0"), address("10.0.0.2", length: 24, on: 2), address("2001:db8::2", length: 64, on: 2)])

    /// IPv6-only: the uplink eth1 (index 3) holding 2001:db8:1::2/64; a CLAT's tun, clat (8),
    /// holding RFC 7335's 192.0.0.1; a VPN client's tun, tun0 (9), holding 10.8.0.2.
    private static let ipv6Only = table([
        link(3, "eth1"), address("2001:db8:1::2", length: 64, on: 3),
        link(8, "clat", kind: "tun", type: .none), address("192.0.0.1", length: 29, on: 8),
        link(9, "tun0", kind: "tun", type: .none), address("10.8.0.2", length: 24, on: 9),
    ])

    // MARK: Given: the kernel's answers

    /// A route out of `link` via `gateway`, from `source`.
    private static func routed(from source: String, via gateway: String?, on link: InterfaceIndex = 2) -> StatusReducer.KernelAnswers {
        StatusReducer.KernelAnswers(
            source: .success(IPAddress(source)!), lookup: .route(RouteFacts(type: .unicast, outputInterfaceIndex: link, gateway: gateway.flatMap(IPAddress.init)))
        )
    }

    private static let unreachable = StatusReducer.KernelAnswers(
        source: .failure(SystemError(action: "connect", errno: ENETUNREACH)), lookup: .failed(errno: Errno(ENETUNREACH))
    )
    private static let ipv4ViaRouter = routed(from: "10.0.0.2", via: "10.0.0.1")
    private static let ipv4ViaOther = routed(from: "10.0.0.2", via: "10.0.0.254")
    private static let ipv6ViaRouter = routed(from: "2001:db8::2", via: "fe80::1")
    private static let ipv6ViaUplink = routed(from: "2001:db8:1::2", via: "fe80::1", on: 3)
    private static let ipv4ViaCLAT = routed(from: "192.0.0.1", via: nil, on: 8)
    private static let ipv4ViaVPN = routed(from: "10.8.0.2", via: nil, on: 9)
    private static let ipv4Path = CheckPath(link: 2, linkName: "eth0", gateway: IPAddress("10.0.0.1"))
    private static let ipv6Path = CheckPath(link: 2, linkName: "eth0", gateway: IPAddress("fe80::1"))
    private static let uplinkPath = CheckPath(link: 3, linkName: "eth1", gateway: IPAddress("fe80::1"))
    private static let portal = "http://portal.example/login"

    private static func verdict(_ connectivity: Connectivity, on path: CheckPath, portal: String = "") -> CheckEvidence {
        CheckEvidence(path: path, connectivity: connectivity, portalURL: portal)
    }

    /// A nameserver from /etc/resolv.conf whose queries the kernel routes as `answers` say.
    private static func nameServer(_ text: String, _ answers: StatusReducer.KernelAnswers, in table: LinkTable) -> NameServerFacts {
        let address = IPAddress(text)!
        return NameServerFacts(
            server: NameServer(address: address, origin: .resolvConf("/etc/resolv.conf")),
            facts: StatusReducer.destinationFacts(in: table, family: address.family, answers: answers, configuration: .default, purpose: .callerAddress)
        )
    }

    // MARK: Given: the NAT64 prefixes known

    private static let wellKnown = IPPrefix(IPAddress("64:ff9b::")!, length: 96)
    private static let networkSpecific = IPPrefix(IPAddress("2001:db8:64::")!, length: 96)

    /// `prefix` advertised (PREF64) on each link given, in order.
    private static func advertised(_ adverts: (prefix: IPPrefix, link: InterfaceIndex)...) -> AdvertisedNAT64Prefixes {
        var prefixes = AdvertisedNAT64Prefixes()
        for (position, advert) in adverts.enumerated() {
            prefixes.set(NAT64PrefixOption(prefix: advert.prefix, lifetimeSeconds: 1800), on: advert.link, router: IPAddress("fe80::\(position + 1)"), now: Double(position))
        }
        return prefixes
    }

    /// IPv4's probe synthesized with `prefix` (RFC 6052), routed out of the uplink or not.
    private static func synthesized(_ prefix: IPPrefix, routed: Bool) -> [IPPrefix: StatusReducer.KernelAnswers] {
        [prefix: routed ? ipv6ViaUplink : unreachable]
    }

    // MARK: Then: the published snapshot

    /// The snapshot published: `status` over `via` (the status's family's link), each family's
    /// own link, and the rest.
    private static func published(
        _ status: ReachabilityStatus, via: (name: String, transport: Transport)?, ipv4: (name: String, transport: Transport)?,
        ipv6: (name: String, transport: Transport)?, reason: String, metered: MeteredVerdict? = nil, evidence: (ipv4: Connectivity?, ipv6: Connectivity?) = (nil, nil),
        portal: String = "", dns: DNSReadiness = .unknown, nat64Prefix: IPPrefix? = nil, access: IPv4Access, networkID: String = ""
    ) -> ReachabilitySnapshot {
        // (Without a metered verdict: the link type's, as MeteredRule gives it with nothing else said.)
        let metered = metered ?? MeteredVerdict(isMetered: false, reason: via == nil ? .noRoute : .transport)
        var snapshot = ReachabilitySnapshot(
            status: status, isIPv4Reachable: ipv4 != nil, isIPv6Reachable: ipv6 != nil, interface: via?.name ?? "", transport: via?.transport, isMetered: metered.isMetered,
            reason: reason, ipv4Evidence: evidence.ipv4, ipv6Evidence: evidence.ipv6, captivePortal: portal,
            ipv4Link: (ipv4?.name ?? "", ipv4?.transport), ipv6Link: (ipv6?.name ?? "", ipv6?.transport)
        )
        snapshot.dns = dns
        snapshot.nat64Prefix = nat64Prefix?.description ?? ""
        snapshot.ipv4Access = access
        snapshot.meteredReason = metered.reason
        snapshot.networkID = networkID
        return snapshot
    }

    private static let eth0 = (name: "eth0", transport: Transport.ethernet)
    private static let eth1 = (name: "eth1", transport: Transport.ethernet)
    private static let tun0 = (name: "tun0", transport: Transport.vpn)
    private static let eth0Reason = "default route via 10.0.0.1 on eth0 (ethernet), table main"
    private static let eth1Reason = "IPv6 default route via fe80::1 on eth1 (ethernet), table main"
    private static let clatReason = "default route on clat (CLAT over eth1, ethernet), table main; via CLAT on clat onto eth1 (ethernet)"

    /// One row: what the walk gathered, then the whole snapshot and what the walk follows.
    private struct Row {
        var name: String
        var given: StatusReducer.Gathered
        var then: ReachabilitySnapshot
        var paths: [AddressFamily: CheckPath]
        /// The path RFC 7050 discovery follows; nil: not wanted.
        var discovery: CheckPath?
        /// The `network-id` of each link's entry.
        var networkIDs: [InterfaceIndex: String] = [:]
        var line: UInt
    }

    private static func given(
        _ table: LinkTable, ipv4: StatusReducer.KernelAnswers, ipv6: StatusReducer.KernelAnswers, nameServers: [NameServerFacts]? = nil,
        advertised: AdvertisedNAT64Prefixes = AdvertisedNAT64Prefixes(), discovered: RFC7050Discovery.Discovered? = nil,
        synthesized: [IPPrefix: StatusReducer.KernelAnswers] = [:], gateways: [AddressFamily: Connectivity] = [:],
        checks: [AddressFamily: CheckEvidence] = [:], isCheckEnabled: Bool = false, gatewayMACs: [AddressFamily: [UInt8]] = [:],
        ssids: [InterfaceIndex: String] = [:]
    ) -> StatusReducer.Gathered {
        StatusReducer.Gathered(
            table: table, ipv4: ipv4, ipv6: ipv6, nameServers: nameServers, advertisedNAT64Prefixes: advertised, discoveredNAT64Prefix: discovered,
            synthesizedProbes: synthesized, gatewayEvidence: gateways, gatewayLinkLayerAddresses: gatewayMACs, networkIDKey: machineKey,
            wifiSSIDs: ssids, checkEvidence: checks, isCheckEnabled: isCheckEnabled
        )
    }

    /// A machine's key (``NetworkIdentity``), and two routers' MACs.
    private static let machineKey = [UInt8](repeating: 7, count: 16)
    private static let routerMAC: [UInt8] = [0x02, 0, 0, 0, 0, 1]
    private static let otherRouterMAC: [UInt8] = [0x02, 0, 0, 0, 0, 2]
    private static func networkID(_ mac: [UInt8], ssid: String? = nil) -> String {
        NetworkIdentity.id(gatewayLinkLayerAddress: mac, ssid: ssid.map { Array($0.utf8) }, key: machineKey)
    }

    /// The dual-stack table with NetworkManager's `Metered` and the lease's ANDROID_METERED on eth0.
    private static func dualStack(hints: MeteredHints) -> LinkTable {
        var table = dualStack
        _ = table.setMeteredHints(hints, for: 2)
        return table
    }

    /// IPv6-only, IPv6 routed over the uplink: RFC 7050 discovery found `networkSpecific` on
    /// `path`, and IPv4's probe synthesized with it is routed.
    private static func rfc7050Found(on path: CheckPath, ipv4: StatusReducer.KernelAnswers) -> StatusReducer.Gathered {
        given(
            ipv6Only, ipv4: ipv4, ipv6: ipv6ViaUplink, discovered: RFC7050Discovery.Discovered(prefix: networkSpecific, path: path),
            synthesized: synthesized(networkSpecific, routed: true)
        )
    }

    private static let rows: [Row] = [
        // The route rule and the evidence (ReachabilityRule, EvidenceRule)
        Row(
            name: "no route, no evidence, no path", given: given(dualStack, ipv4: unreachable, ipv6: unreachable),
            then: published(.notReachable, via: nil, ipv4: nil, ipv6: nil, reason: "no default route", access: .none), paths: [:], line: #line
        ),
        Row(
            name: "each reachable family's path: its output link and gateway; IPv4's link is the status's; IPv4 native",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: eth0, reason: eth0Reason, access: .native),
            paths: [.ipv4: ipv4Path, .ipv6: ipv6Path], line: #line
        ),
        Row(
            name: "a verdict on the path in use counts",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter, checks: [.ipv4: verdict(.full, on: ipv4Path), .ipv6: verdict(.portal, on: ipv6Path, portal: portal)]),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: eth0, reason: eth0Reason, evidence: (.full, .portal), portal: portal, access: .native),
            paths: [.ipv4: ipv4Path, .ipv6: ipv6Path], line: #line
        ),
        Row(
            name: "a verdict on the path before a gateway change does not count",
            given: given(dualStack, ipv4: ipv4ViaOther, ipv6: unreachable, checks: [.ipv4: verdict(.portal, on: ipv4Path, portal: portal)]),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: nil, reason: "default route via 10.0.0.254 on eth0 (ethernet), table main", access: .native),
            paths: [.ipv4: CheckPath(link: 2, linkName: "eth0", gateway: IPAddress("10.0.0.254"))], line: #line
        ),
        Row(
            name: "a verdict on a path whose route went does not count, the gateway's evidence does",
            given: given(
                dualStack, ipv4: unreachable, ipv6: ipv6ViaRouter, gateways: [.ipv4: .limited],
                checks: [.ipv4: verdict(.full, on: ipv4Path), .ipv6: verdict(.full, on: ipv6Path)]
            ),
            then: published(
                .reachableViaEthernet, via: eth0, ipv4: nil, ipv6: eth0, reason: "IPv6 default route via fe80::1 on eth0 (ethernet), table main",
                evidence: (.limited, .full), access: .none
            ),
            // (no IPv4 route: RFC 7050 discovery follows IPv6's path)
            paths: [.ipv6: ipv6Path], discovery: ipv6Path, line: #line
        ),
        Row(
            name: "a failed gateway beats the check on its path (EvidenceRule)",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: unreachable, gateways: [.ipv4: .limited], checks: [.ipv4: verdict(.full, on: ipv4Path)]),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: nil, reason: eth0Reason, evidence: (.limited, nil), access: .native),
            paths: [.ipv4: ipv4Path], line: #line
        ),
        // Metered (MeteredRule): NetworkManager, then the lease, then the link type; MeteredReason says which
        Row(
            name: "the lease's ANDROID_METERED meters the status's link",
            given: given(dualStack(hints: MeteredHints(isDHCPAndroidMetered: true)), ipv4: ipv4ViaRouter, ipv6: unreachable),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: nil, reason: eth0Reason, metered: MeteredVerdict(isMetered: true, reason: .dhcp), access: .native),
            paths: [.ipv4: ipv4Path], line: #line
        ),
        Row(
            name: "NetworkManager's guess over the lease's ANDROID_METERED",
            given: given(dualStack(hints: MeteredHints(networkManager: .guessNo, isDHCPAndroidMetered: true)), ipv4: ipv4ViaRouter, ipv6: unreachable),
            then: published(
                .reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: nil, reason: eth0Reason, metered: MeteredVerdict(isMetered: false, reason: .networkManager), access: .native
            ),
            paths: [.ipv4: ipv4Path], line: #line
        ),
        // NetworkID (NetworkIdentity): from the gateway's MAC where its entry resolved it
        Row(
            name: "NetworkID: the status's family's gateway's; each link's entry its own",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter, gatewayMACs: [.ipv4: routerMAC, .ipv6: otherRouterMAC]),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: eth0, reason: eth0Reason, access: .native, networkID: networkID(routerMAC)),
            paths: [.ipv4: ipv4Path, .ipv6: ipv6Path], networkIDs: [2: networkID(routerMAC)], line: #line
        ),
        Row(
            name: "NetworkID: with the link's SSID where the network manager says it",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: unreachable, gatewayMACs: [.ipv4: routerMAC], ssids: [2: "cafe"]),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: nil, reason: eth0Reason, access: .native, networkID: networkID(routerMAC, ssid: "cafe")),
            paths: [.ipv4: ipv4Path], networkIDs: [2: networkID(routerMAC, ssid: "cafe")], line: #line
        ),
        Row(
            name: "NetworkID: IPv6's gateway's when IPv4 has no route; another router, another id",
            given: given(dualStack, ipv4: unreachable, ipv6: ipv6ViaRouter, gatewayMACs: [.ipv6: otherRouterMAC]),
            then: published(
                .reachableViaEthernet, via: eth0, ipv4: nil, ipv6: eth0, reason: "IPv6 default route via fe80::1 on eth0 (ethernet), table main",
                access: .none, networkID: networkID(otherRouterMAC)
            ),
            paths: [.ipv6: ipv6Path], discovery: ipv6Path, networkIDs: [2: networkID(otherRouterMAC)], line: #line
        ),
        Row(
            name: "NetworkID: \"\" while the gateway's MAC is not known, and without a route",
            given: given(dualStack, ipv4: unreachable, ipv6: unreachable, gatewayMACs: [.ipv4: routerMAC]),
            then: published(.notReachable, via: nil, ipv4: nil, ipv6: nil, reason: "no default route", access: .none), paths: [:], line: #line
        ),
        // DNS (DNSRule): unknown until the nameservers are known (the rows above)
        Row(
            name: "no nameserver configured: DNS none, and the reason says so",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter, nameServers: []),
            then: published(
                .reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: eth0, reason: eth0Reason + ", but no nameserver is configured", dns: .none, access: .native
            ),
            paths: [.ipv4: ipv4Path, .ipv6: ipv6Path], line: #line
        ),
        Row(
            name: "a nameserver routed: DNS reachable",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter, nameServers: [nameServer("10.0.0.53", ipv4ViaRouter, in: dualStack)]),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: eth0, reason: eth0Reason, dns: .reachable, access: .native),
            paths: [.ipv4: ipv4Path, .ipv6: ipv6Path], line: #line
        ),
        Row(
            name: "no nameserver routed: DNS unreachable, and the reason says so",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter, nameServers: [nameServer("192.0.2.53", unreachable, in: dualStack)]),
            then: published(
                .reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: eth0, reason: eth0Reason + ", but no nameserver is routed (192.0.2.53: no default route)",
                dns: .unreachable, access: .native
            ),
            paths: [.ipv4: ipv4Path, .ipv6: ipv6Path], line: #line
        ),
        // NAT64Prefix and RFC 7050 discovery on a dual-stack host
        Row(
            name: "dual-stack with the check running: discovery follows IPv6's path; IPv4 stays native",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter, isCheckEnabled: true),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: eth0, reason: eth0Reason, access: .native),
            paths: [.ipv4: ipv4Path, .ipv6: ipv6Path], discovery: ipv6Path, line: #line
        ),
        Row(
            name: "dual-stack with a PREF64 advertised: the prefix published, IPv4 native, no discovery",
            given: given(dualStack, ipv4: ipv4ViaRouter, ipv6: ipv6ViaRouter, advertised: advertised((wellKnown, 2)), synthesized: synthesized(wellKnown, routed: false),
                         isCheckEnabled: true),
            then: published(.reachableViaEthernet, via: eth0, ipv4: eth0, ipv6: eth0, reason: eth0Reason, nat64Prefix: wellKnown, access: .native),
            paths: [.ipv4: ipv4Path, .ipv6: ipv6Path], line: #line
        ),
        // IPv6-only: IPv4Access through NAT64
        Row(
            name: "IPv6-only, no prefix known: IPv4 none, discovery follows IPv6's path",
            given: given(ipv6Only, ipv4: unreachable, ipv6: ipv6ViaUplink),
            then: published(.reachableViaEthernet, via: eth1, ipv4: nil, ipv6: eth1, reason: eth1Reason, access: .none),
            paths: [.ipv6: uplinkPath], discovery: uplinkPath, line: #line
        ),
        Row(
            name: "a PREF64 on the uplink and the synthesized probe routed: IPv4 through NAT64, no discovery",
            given: given(ipv6Only, ipv4: unreachable, ipv6: ipv6ViaUplink, advertised: advertised((wellKnown, 3)), synthesized: synthesized(wellKnown, routed: true)),
            then: published(.reachableViaEthernet, via: eth1, ipv4: nil, ipv6: eth1, reason: eth1Reason, nat64Prefix: wellKnown, access: .nat64),
            paths: [.ipv6: uplinkPath], line: #line
        ),
        Row(
            name: "a PREF64 known but the synthesized probe not routed: IPv4 none",
            given: given(ipv6Only, ipv4: unreachable, ipv6: ipv6ViaUplink, advertised: advertised((wellKnown, 3)), synthesized: synthesized(wellKnown, routed: false)),
            then: published(.reachableViaEthernet, via: eth1, ipv4: nil, ipv6: eth1, reason: eth1Reason, nat64Prefix: wellKnown, access: .none),
            paths: [.ipv6: uplinkPath], line: #line
        ),
        Row(
            name: "two routers' prefixes: the one on IPv6's route's link is in use, though learned later",
            given: given(
                ipv6Only, ipv4: unreachable, ipv6: ipv6ViaUplink, advertised: advertised((networkSpecific, 5), (wellKnown, 3)),
                synthesized: synthesized(networkSpecific, routed: false).merging(synthesized(wellKnown, routed: true)) { $1 }
            ),
            then: published(.reachableViaEthernet, via: eth1, ipv4: nil, ipv6: eth1, reason: eth1Reason, nat64Prefix: wellKnown, access: .nat64),
            paths: [.ipv6: uplinkPath], line: #line
        ),
        Row(
            name: "RFC 7050's prefix, found on IPv6's path's link: published while discovery follows it",
            given: rfc7050Found(on: uplinkPath, ipv4: unreachable),
            then: published(.reachableViaEthernet, via: eth1, ipv4: nil, ipv6: eth1, reason: eth1Reason, nat64Prefix: networkSpecific, access: .nat64),
            paths: [.ipv6: uplinkPath], discovery: uplinkPath, line: #line
        ),
        Row(
            name: "RFC 7050's prefix found on another link: dropped with that link's path",
            given: rfc7050Found(on: ipv6Path, ipv4: unreachable),
            then: published(.reachableViaEthernet, via: eth1, ipv4: nil, ipv6: eth1, reason: eth1Reason, access: .none),
            paths: [.ipv6: uplinkPath], discovery: uplinkPath, line: #line
        ),
        Row(
            name: "RFC 7050's prefix once IPv4 is back without the check: discovery no longer wanted, the prefix dropped",
            given: rfc7050Found(on: uplinkPath, ipv4: ipv4ViaVPN),
            then: published(
                .reachableViaEthernet, via: tun0, ipv4: tun0, ipv6: eth1, reason: "default route on tun0 (vpn over eth1, ethernet), table main", access: .native
            ),
            paths: [.ipv4: CheckPath(link: 9, linkName: "tun0", gateway: nil), .ipv6: uplinkPath], line: #line
        ),
        // The CLAT (CLATPath): known by RFC 7335's address, never guessed
        Row(
            name: "a CLAT: IPv4Access clat; Status, Interface, Transport and IPv4's link the uplink's; the reason says via CLAT",
            given: given(ipv6Only, ipv4: ipv4ViaCLAT, ipv6: ipv6ViaUplink, advertised: advertised((wellKnown, 3)), synthesized: synthesized(wellKnown, routed: true)),
            then: published(.reachableViaEthernet, via: eth1, ipv4: eth1, ipv6: eth1, reason: clatReason, nat64Prefix: wellKnown, access: .clat),
            paths: [.ipv4: CheckPath(link: 8, linkName: "clat", gateway: nil), .ipv6: uplinkPath], line: #line
        ),
        Row(
            name: "a CLAT with no prefix known is a CLAT still",
            given: given(ipv6Only, ipv4: ipv4ViaCLAT, ipv6: ipv6ViaUplink),
            then: published(.reachableViaEthernet, via: eth1, ipv4: eth1, ipv6: eth1, reason: clatReason, access: .clat),
            paths: [.ipv4: CheckPath(link: 8, linkName: "clat", gateway: nil), .ipv6: uplinkPath], line: #line
        ),
        Row(
            name: "issue 38: a VPN's tun over an IPv6-only uplink that advertises PREF64 is a VPN, not a CLAT",
            given: given(ipv6Only, ipv4: ipv4ViaVPN, ipv6: ipv6ViaUplink, advertised: advertised((wellKnown, 3)), synthesized: synthesized(wellKnown, routed: true)),
            then: published(
                .reachableViaEthernet, via: tun0, ipv4: tun0, ipv6: eth1, reason: "default route on tun0 (vpn over eth1, ethernet), table main",
                nat64Prefix: wellKnown, access: .native
            ),
            paths: [.ipv4: CheckPath(link: 9, linkName: "tun0", gateway: nil), .ipv6: uplinkPath], line: #line
        ),
        Row(
            name: "a CLAT with no nameserver routed: the DNS reason first, then via CLAT",
            given: given(ipv6Only, ipv4: ipv4ViaCLAT, ipv6: ipv6ViaUplink, nameServers: [nameServer("192.0.2.53", unreachable, in: ipv6Only)]),
            then: published(
                .reachableViaEthernet, via: eth1, ipv4: eth1, ipv6: eth1,
                reason: "default route on clat (CLAT over eth1, ethernet), table main, but no nameserver is routed (192.0.2.53: no default route)"
                    + "; via CLAT on clat onto eth1 (ethernet)",
                dns: .unreachable, access: .clat
            ),
            paths: [.ipv4: CheckPath(link: 8, linkName: "clat", gateway: nil), .ipv6: uplinkPath], line: #line
        ),
    ]

    func testThatTheRuleStepDecidesTheWholePublishedSnapshot() {
        for row in Self.rows {
            // Given what the walk gathered

            // When
            let evaluation = StatusReducer.evaluation(of: row.given, configuration: .default)
            let again = StatusReducer.evaluation(of: row.given, configuration: .default)

            // Then: the whole snapshot, the paths to follow, the same evaluation for the same inputs
            XCTAssertEqual(evaluation.snapshot, row.then, "\(row.name): the snapshot", line: row.line)
            XCTAssertEqual(evaluation.checkPaths, row.paths, "\(row.name): the checks' paths", line: row.line)
            XCTAssertEqual(evaluation.nat64DiscoveryPath, row.discovery, "\(row.name): RFC 7050 discovery's path", line: row.line)
            XCTAssertEqual(evaluation.networkIDs, row.networkIDs, "\(row.name): the links' network ids", line: row.line)
            XCTAssertEqual(again, evaluation, "\(row.name): the same inputs, the same evaluation", line: row.line)
            // the prefix in use is one the walk asked the synthesized probe of, and CheckDestination's
            let prefix = NAT64Prefix(evaluation.snapshot.nat64Prefix)
            XCTAssertEqual(evaluation.destinationContext.nat64Prefix, prefix, "\(row.name): CheckDestination's prefix", line: row.line)
            if let prefix {
                let possible = StatusReducer.nat64PrefixesPossiblyInUse(advertised: row.given.advertisedNAT64Prefixes, discovered: row.given.discoveredNAT64Prefix)
                XCTAssertTrue(possible.contains(IPPrefix(prefix.network, length: prefix.length)), "\(row.name): the synthesized probe asked", line: row.line)
                XCTAssertEqual(evaluation.linksInUse, .every, "\(row.name): every event walks while a prefix is in use", line: row.line)
            }
        }
    }

    func testThatTheSessionAVerdictCameWithIsCountedDownToTheWalkAndFollowedToItsNextMark() {
        // Given a session read at 100 s with 1000 s left, over IPv4's path or an old one
        let reading = CaptivePortalSessionReading(session: CaptivePortalSession(secondsRemaining: 1000, canExtendSession: true), readAt: 100)
        func gathered(on path: CheckPath, now: Double) -> StatusReducer.Gathered {
            var gathered = Self.given(Self.dualStack, ipv4: Self.ipv4ViaRouter, ipv6: Self.unreachable)
            gathered.checkEvidence[.ipv4] = CheckEvidence(path: path, connectivity: .full, portalURL: "", session: reading)
            gathered.now = now
            return gathered
        }
        let oldPath = CheckPath(link: 2, linkName: "eth0", gateway: IPAddress("10.0.0.254"))
        let rows: [(name: String, given: StatusReducer.Gathered, session: CaptivePortalSession, countdown: Double?, line: UInt)] = [
            ("as read", gathered(on: Self.ipv4Path, now: 100), CaptivePortalSession(secondsRemaining: 1000, canExtendSession: true), 140, #line),
            ("at the mark", gathered(on: Self.ipv4Path, now: 140), CaptivePortalSession(secondsRemaining: 960, canExtendSession: true), 200, #line),
            ("ran out", gathered(on: Self.ipv4Path, now: 1200), CaptivePortalSession(secondsRemaining: 0, canExtendSession: true), nil, #line),
            ("a verdict on another path: none", gathered(on: oldPath, now: 100), CaptivePortalSession(), nil, #line),
        ]
        for row in rows {
            // When the rule step decides
            let evaluation = StatusReducer.evaluation(of: row.given, configuration: .default)
            // Then the session published, and when the walk is taken again for it
            XCTAssertEqual(evaluation.snapshot.captivePortalSession, row.session, row.name, line: row.line)
            XCTAssertEqual(evaluation.sessionCountdown, row.countdown, row.name, line: row.line)
        }
    }

    func testThatCheckDestinationGoesThroughTheCLATTheSnapshotWasDecidedWith() {
        // Given the state of the rows above: a CLAT, a VPN's tun, each with the well-known prefix advertised on the uplink
        let gathered: [(route: StatusReducer.KernelAnswers, isCLAT: Bool)] = [(Self.ipv4ViaCLAT, true), (Self.ipv4ViaVPN, false)]
        let rows: [(address: String, overCLAT: Bool, status: ReachabilityStatus, interface: String, via: DestinationPath, line: UInt)] = [
            ("8.8.8.8", true, .reachableViaEthernet, "eth1", .clat, #line),
            // issue 38: through a CLAT, a private destination is not "reachable via clat"
            ("10.1.2.3", true, .notReachable, "", .clat, #line),
            ("192.168.1.1", true, .notReachable, "", .clat, #line),
            // through a VPN, it is
            ("8.8.8.8", false, .reachableViaEthernet, "tun0", .direct, #line),
            ("10.1.2.3", false, .reachableViaEthernet, "tun0", .direct, #line),
        ]
        for row in rows {
            let route = gathered.first { $0.isCLAT == row.overCLAT }!.route
            let evaluation = StatusReducer.evaluation(
                of: Self.given(Self.ipv6Only, ipv4: route, ipv6: Self.ipv6ViaUplink, advertised: Self.advertised((Self.wellKnown, 3)),
                               synthesized: Self.synthesized(Self.wellKnown, routed: true)),
                configuration: .default
            )

            // When the kernel answers for the address as for IPv4's probe
            let answer = DestinationRule.answer(for: IPAddress(row.address)!, as: row.address, context: evaluation.destinationContext) { destination in
                StatusReducer.destinationFacts(in: Self.ipv6Only, family: destination.family, answers: route, configuration: .default, purpose: .callerAddress)
            }

            // Then
            XCTAssertEqual(answer.verdict.status, row.status, row.address, line: row.line)
            XCTAssertEqual(answer.verdict.link?.name ?? "", row.interface, row.address, line: row.line)
            XCTAssertEqual(answer.path, row.via, row.address, line: row.line)
            XCTAssertEqual(evaluation.snapshot.ipv4Access, row.overCLAT ? .clat : .native, row.address, line: row.line)
        }
    }
}
