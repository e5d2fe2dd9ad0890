#if canImport(Glibc)
import Glibc
#endif

/// Everything known about one link, from rtnetlink and sysfs: the input of classification.
package struct LinkDescription: Sendable, Hashable {
    /// The kernel's interface index.
    package var index: InterfaceIndex
    /// The interface name, e.g. "wlan0".
    package var name: String
    /// The rtnetlink link kind (`IFLA_INFO_KIND`): "veth", "wireguard", "tun", "bridge"...
    package var kind: String?
    /// The hardware type (`ifi_type`, an `ARPHRD_*` value).
    package var hardwareType: HardwareType
    /// `DEVTYPE=` from `/sys/class/net/IF/uevent`: "wlan", "wwan", "bridge", "vlan", "gadget"...
    package var deviceType: String?
    /// `/sys/class/net/IF/wireless` or `/sys/class/net/IF/phy80211` exists.
    package var hasWirelessDirectory: Bool
    /// The kernel driver (basename of `/sys/class/net/IF/device/driver`), e.g. "qmi_wwan".
    package var driver: String?
    /// `IFLA_LINK`: the link this one is stacked on (a VLAN's parent, a tunnel's bound device),
    /// when that link is in this network namespace.
    package var lowerIndex: InterfaceIndex?
    /// The link this one is stacked on is in another network namespace (`IFLA_LINK_NETNSID`):
    /// a container's macvlan or ipvlan, whose parent is the host's. Nothing is known of it here.
    package var isLowerInOtherNamespace: Bool
    /// `IFLA_MASTER`: the bridge or bond this link is a port of.
    package var masterIndex: InterfaceIndex?
    /// Administratively up (`IFF_UP`).
    package var isUp: Bool
    /// Has carrier (`IFF_LOWER_UP`).
    package var hasCarrier: Bool
    /// A loopback device (`IFF_LOOPBACK` or `ARPHRD_LOOPBACK`).
    package var isLoopback: Bool
    /// The link's MTU in bytes (`IFLA_MTU`); 0 when the kernel did not say.
    package var mtu: UInt32 = 0

    /// Creates a link description.
    package init(index: InterfaceIndex, name: String, kind: String? = nil, hardwareType: HardwareType = .ethernet,
                deviceType: String? = nil, hasWirelessDirectory: Bool = false, driver: String? = nil,
                lowerIndex: InterfaceIndex? = nil, isLowerInOtherNamespace: Bool = false, masterIndex: InterfaceIndex? = nil,
                isUp: Bool = true, hasCarrier: Bool = true, isLoopback: Bool = false) {
        self.index = index
        self.name = name
        self.kind = kind
        self.hardwareType = hardwareType
        self.deviceType = deviceType
        self.hasWirelessDirectory = hasWirelessDirectory
        self.driver = driver
        self.lowerIndex = lowerIndex
        self.isLowerInOtherNamespace = isLowerInOtherNamespace
        self.masterIndex = masterIndex
        self.isUp = isUp
        self.hasCarrier = hasCarrier
        self.isLoopback = isLoopback
    }
}

/// A link's transport and the evidence for it, e.g. (.wifi, "DEVTYPE=wlan").
package struct TransportVerdict: Sendable, Hashable {
    /// The medium.
    package var transport: Transport
    /// Why: the first check that decided, in words.
    package var reason: String

    /// Creates a verdict.
    package init(_ transport: Transport, _ reason: String) {
        self.transport = transport
        self.reason = reason
    }
}

/// Classifies links. Checks, in order (the first that decides wins):
///
/// 1. a `Transport=` override from the configuration;
/// 2. the rtnetlink kind: tunnel kinds (wireguard, tun, tap, ppp, ipip, sit, gre, vti...) are
///    `vpn`; stacking kinds (vlan, macvlan, ipvlan on their parent; bridge and bond through
///    their ports) resolve to the medium beneath; a parent in another network namespace is
///    unknown here, so such a link is judged by the checks below, as a link of its own;
/// 3. the hardware type: PPP and IP tunnels are `vpn`, 802.11 is `wifi`, loopback `other`;
/// 4. uevent `DEVTYPE`: `wlan` → wifi, `wwan` → wwan, `vlan`/`bridge`/`bond` → beneath, `gadget` → other;
/// 5. `wireless` or `phy80211` in sysfs → wifi;
/// 6. WWAN drivers (qmi_wwan, cdc_mbim, option, ipa, mhi_net…) and names (wwan*, rmnet*, mhi*) → wwan;
/// 7. `ARPHRD_ETHER` → ethernet (veth included); otherwise other.
package enum TransportClassifier {
    /// Link kinds that are tunnels.
    package static let tunnelKinds: Set<String> = [
        "wireguard", "tun", "tap", "ppp", "ipip", "sit", "gre", "gretap", "ip6gre", "ip6gretap",
        "ip6tnl", "vti", "vti6", "openvpn", "l2tp", "geneve", "vxlan",
    ]
    /// Link kinds stacked on one parent (`IFLA_LINK`).
    package static let parentStackedKinds: Set<String> = ["vlan", "macvlan", "macvtap", "ipvlan"]
    /// Link kinds aggregating ports (`IFLA_MASTER` on the ports).
    package static let portAggregatingKinds: Set<String> = ["bridge", "bond", "team"]
    /// Tunnel hardware types.
    package static let tunnelHardwareTypes: Set<HardwareType> = [.ppp, .ipip, .ip6ip6, .sit, .gre]
    /// Kernel drivers of cellular modems.
    package static let wwanDrivers: Set<String> = ["qmi_wwan", "cdc_mbim", "option", "ipa", "mhi_net", "rmnet", "sierra_net", "huawei_cdc_ncm"]
    /// Interface name patterns of cellular modems.
    package static let wwanNamePatterns = ["wwan*", "rmnet*", "mhi*", "wwp*"]

    /// Classifies link `index` of `links` under `configuration`.
    package static func classify(_ index: InterfaceIndex, in links: [InterfaceIndex: LinkDescription], configuration: DaemonConfiguration = .default) -> TransportVerdict {
        classify(index, in: links, configuration: configuration, visited: [])
    }

    private static func classify(_ index: InterfaceIndex, in links: [InterfaceIndex: LinkDescription], configuration: DaemonConfiguration, visited: Set<InterfaceIndex>) -> TransportVerdict {
        guard let link = links[index] else { return TransportVerdict(.other, "unknown link \(index)") }
        if let override = configuration.transportOverride(forInterface: link.name) {
            return TransportVerdict(override.value, "Transport=\(override.pattern):\(override.value.rawValue) in the configuration")
        }
        var visited = visited
        visited.insert(index)
        func beneath(_ what: String) -> TransportVerdict? {
            if let lower = link.lowerIndex, lower != index, links[lower] != nil, !visited.contains(lower) {
                let verdict = classify(lower, in: links, configuration: configuration, visited: visited)
                return TransportVerdict(verdict.transport, "\(what) on \(links[lower]!.name): \(verdict.reason)")
            }
            // The best port with carrier, in index order: the first ethernet one decides at once,
            // so a bridge with a thousand container ports classifies one of them, not each.
            let ports = links.values
                .filter { $0.masterIndex == index && $0.hasCarrier && !visited.contains($0.index) }
                .sorted { $0.index < $1.index }
            let preference: [Transport] = [.ethernet, .wifi, .wwan, .vpn, .other]
            var best: (port: LinkDescription, verdict: TransportVerdict, rank: Int)?
            for port in ports where configuration.containerPattern(forInterface: port.name) == nil {
                let verdict = classify(port.index, in: links, configuration: configuration, visited: visited)
                let rank = preference.firstIndex(of: verdict.transport) ?? preference.count
                if rank < (best?.rank ?? preference.count) { best = (port, verdict, rank) }
                if rank == 0 { break }
            }
            return best.map { TransportVerdict($0.verdict.transport, "\(what) with port \($0.port.name): \($0.verdict.reason)") }
        }
        /// What the link's own hardware, sysfs entries and name say.
        func ownEvidence() -> TransportVerdict {
            if tunnelHardwareTypes.contains(link.hardwareType) { return TransportVerdict(.vpn, "tunnel hardware type \(link.hardwareType)") }
            if link.hardwareType == .ieee80211 || link.hardwareType == .ieee80211Radiotap {
                return TransportVerdict(.wifi, "802.11 hardware type")
            }
            if link.isLoopback || link.hardwareType == .loopback { return TransportVerdict(.other, "loopback") }
            switch link.deviceType {
            case "wlan": return TransportVerdict(.wifi, "DEVTYPE=wlan")
            case "wwan": return TransportVerdict(.wwan, "DEVTYPE=wwan")
            case "vlan", "bridge", "bond":
                return beneath("DEVTYPE=\(link.deviceType!)") ?? TransportVerdict(.other, "DEVTYPE=\(link.deviceType!) with no physical link beneath")
            case "gadget": return TransportVerdict(.other, "DEVTYPE=gadget (USB gadget)")
            default: break
            }
            if link.hasWirelessDirectory { return TransportVerdict(.wifi, "wireless/phy80211 in sysfs") }
            if let driver = link.driver, wwanDrivers.contains(driver) { return TransportVerdict(.wwan, "WWAN driver \(driver)") }
            if let pattern = wwanNamePatterns.first(where: { Glob.matches($0, link.name) }) {
                return TransportVerdict(.wwan, "WWAN interface name \(pattern)")
            }
            if link.hardwareType == .rawIP { return TransportVerdict(.wwan, "raw-IP hardware type (cellular modem)") }
            if link.hardwareType == .ethernet {
                return TransportVerdict(.ethernet, link.deviceType.map { "ARPHRD_ETHER with DEVTYPE=\($0)" } ?? "ARPHRD_ETHER")
            }
            return TransportVerdict(.other, "hardware type \(link.hardwareType)")
        }
        if let kind = link.kind {
            if tunnelKinds.contains(kind) { return TransportVerdict(.vpn, "link kind \(kind)") }
            if link.isLowerInOtherNamespace && parentStackedKinds.contains(kind) {
                let verdict = ownEvidence()
                return TransportVerdict(verdict.transport, "\(kind) whose parent is in another network namespace: \(verdict.reason)")
            }
            if parentStackedKinds.contains(kind) || portAggregatingKinds.contains(kind) {
                return beneath(kind) ?? TransportVerdict(.other, "\(kind) with no physical link beneath")
            }
        }
        return ownEvidence()
    }

    /// The verdict on a link that holds `clatAddress`, an address from RFC 7335's 192.0.0.0/29
    /// (``CLATPath``), given `verdict`, its classification: a tunnel (the CLAT's tun) carries
    /// the transport of `beneath`, the link it translates onto (`other` when that is not known),
    /// since it is no VPN; any other link (a CLAT on the uplink itself) keeps its verdict. (Not
    /// for a link `Transport=` names: that verdict stands.)
    package static func clatVerdict(_ verdict: TransportVerdict, clatAddress: IPAddress, beneath: UnderlyingLink?) -> TransportVerdict {
        guard verdict.transport == .vpn else { return verdict }
        let onto = beneath.map { " onto \($0.name)" } ?? ", onto a link not known"
        return TransportVerdict(beneath?.transport ?? .other, "CLAT (\(clatAddress) in RFC 7335's 192.0.0.0/29)\(onto)")
    }

    /// The physical transport beneath a tunnel, when it can be determined: the link the tunnel is
    /// bound to (`IFLA_LINK`), else the only non-tunnel link that is up with carrier and has a
    /// usable global address (`candidates`).
    ///
    /// - Parameters:
    ///   - index: the tunnel's index.
    ///   - candidates: indices of links with a usable global address.
    package static func underlying(ofTunnel index: InterfaceIndex, in links: [InterfaceIndex: LinkDescription], candidates: Set<InterfaceIndex>, configuration: DaemonConfiguration = .default) -> (link: LinkDescription, verdict: TransportVerdict)? {
        if let lower = links[index]?.lowerIndex, lower != index, let link = links[lower] {
            let verdict = classify(lower, in: links, configuration: configuration)
            if verdict.transport != .vpn { return (link, verdict) }
        }
        let physical = physicalLinks(besides: index, in: links, candidates: candidates, configuration: configuration)
        return physical.count == 1 ? physical[0] : nil
    }

    /// The non-tunnel, non-ignored, non-loopback links among `candidates` (links with a usable
    /// global address) that are up with carrier: what could carry a tunnel's packets.
    package static func physicalLinks(besides index: InterfaceIndex, in links: [InterfaceIndex: LinkDescription], candidates: Set<InterfaceIndex>, configuration: DaemonConfiguration = .default) -> [(link: LinkDescription, verdict: TransportVerdict)] {
        candidates.sorted().compactMap { candidate -> (LinkDescription, TransportVerdict)? in
            guard candidate != index, let link = links[candidate], link.isUp, link.hasCarrier, !link.isLoopback,
                  ignoreReason(for: link, in: links, configuration: configuration) == nil else { return nil }
            let verdict = classify(candidate, in: links, configuration: configuration)
            return verdict.transport == .vpn ? nil : (link, verdict)
        }
    }

    /// Why link `link` is ignored (never makes the host reachable by itself), or nil. In order:
    ///
    /// 1. `IgnoreInterfaces=` matches: ignored, whatever else is true;
    /// 2. `Transport=` names the link: it counts, whatever the evidence;
    /// 3. a bridge with ports: ignored when every port is a container's end (a veth or tap with
    ///    no hardware of its own), counted when any port is something else (an uplink such as
    ///    OpenStack's `br-ex` or a router's `br-lan` with its physical port);
    /// 4. `ContainerInterfaces=` matches the name: ignored (docker0 without containers, a
    ///    container's veth end).
    ///
    /// - Parameters:
    ///   - link: the link.
    ///   - links: every link, to find a bridge's ports.
    ///   - configuration: the settings.
    package static func ignoreReason(for link: LinkDescription, in links: [InterfaceIndex: LinkDescription], configuration: DaemonConfiguration) -> String? {
        if let pattern = configuration.ignoreInterfaces.first(where: { Glob.matches($0, link.name) }) {
            return "IgnoreInterfaces=\(pattern)"
        }
        if configuration.transportOverride(forInterface: link.name) != nil { return nil }
        if link.kind == "bridge" || link.deviceType == "bridge" {
            let ports = links.values.filter { $0.masterIndex == link.index && $0.index != link.index }.sorted { $0.index < $1.index }
            if !ports.isEmpty {
                guard ports.allSatisfy(ContainerInterfaces.isContainerEnd) else { return nil }
                return "container bridge (its ports \(ports.map(\.name).joined(separator: ", ")) are all veth or tap)"
            }
        }
        if let pattern = configuration.containerPattern(forInterface: link.name) {
            return "container interface (\(pattern))"
        }
        return nil
    }
}

/// Interfaces that belong to containers and virtual machines: they never make the host
/// reachable by themselves.
public enum ContainerInterfaces {
    /// The default of `ContainerInterfaces=`: docker0, br-* (docker networks), veth* (container
    /// ends), cni* (Kubernetes), virbr* (libvirt).
    public static let defaultPatterns = ["docker0", "br-*", "veth*", "cni*", "virbr*"]
    /// Link kinds of a container's or virtual machine's end of a link (a tap's kind is "tun").
    package static let endKinds: Set<String> = ["veth", "tun", "tap"]

    /// Whether `port` is a container's or virtual machine's end: a veth or tap with no hardware
    /// evidence of its own (no driver, `DEVTYPE`, or wireless directory in sysfs).
    package static func isContainerEnd(_ port: LinkDescription) -> Bool {
        port.kind.map(endKinds.contains) == true && port.driver == nil && port.deviceType == nil && !port.hasWirelessDirectory
    }
}

/// Shell-style glob matching of interface names (`*`, `?`, `[...]`).
package enum Glob {
    /// Whether `name` matches `pattern`. The corresponding C function is `fnmatch`.
    package static func matches(_ pattern: String, _ name: String) -> Bool {
        fnmatch(pattern, name, 0) == 0
    }
}
