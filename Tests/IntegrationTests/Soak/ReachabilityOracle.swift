import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ReachabilityCore
import TestSupport

/// What the daemon must publish, by the oracle: the properties the soak compares.
struct OracleVerdict: Equatable, Hashable, CustomStringConvertible {
    /// `Status`.
    var status: String
    /// `Interface`.
    var interface: String
    /// `IPv4Reachable`.
    var ipv4Reachable: Bool
    /// `IPv6Reachable`.
    var ipv6Reachable: Bool

    /// The same four properties as the daemon published them in one `GetAll`.
    ///
    /// - Parameter published: the snapshot.
    init(published: PublishedProperties) {
        status = published.status ?? "?"
        interface = published.string(.interface) ?? "?"
        ipv4Reachable = published.bool(.ipv4Reachable) ?? false
        ipv6Reachable = published.bool(.ipv6Reachable) ?? false
    }

    /// A verdict from the two families' output links (nil: that family is not reachable).
    init(ipv4: String?, ipv6: String?) {
        let chosen = ipv4 ?? ipv6
        status = chosen == nil ? ReachabilityStatus.notReachable.rawValue : ReachabilityStatus.reachableViaEthernet.rawValue
        interface = chosen ?? ""
        ipv4Reachable = ipv4 != nil
        ipv6Reachable = ipv6 != nil
    }

    /// A short label for the tally of checks, e.g. `IPv4 on rb0`, `IPv6 only on ra0`, `none`.
    var label: String {
        switch (ipv4Reachable, ipv6Reachable) {
        case (true, _): "IPv4 on \(interface)"
        case (false, true): "IPv6 only on \(interface)"
        case (false, false): "not reachable"
        }
    }

    var description: String {
        "\(status) on \"\(interface)\" (IPv4 \(ipv4Reachable), IPv6 \(ipv6Reachable))"
    }
}

/// The oracle's verdict, and for each family that is not reachable the clause of the rule that
/// decided it (`IPv4: no carrier`), for the tally of what the churn covered.
struct OracleReading {
    /// What the daemon must publish.
    var verdict: OracleVerdict
    /// E.g. `["IPv4: no unicast route", "IPv6: no usable global source address"]`.
    var whyNot: [String]
}

/// README's rule ("How the status is decided"), implemented a second time from what an
/// application in the namespace sees, sharing no code with the daemon: the soak's oracle.
///
/// Per family it connects a UDP socket inside the namespace to the probe destination (8.8.8.8,
/// 2001:4860:4860::8888; no packet is sent) and reads the source address the kernel selected,
/// then runs `ip route get DESTINATION from SOURCE ipproto tcp dport 443` (the flow the daemon
/// answers for; the churn makes no rule on protocol or port, so UDP's source is TCP's): the
/// family is reachable when the kernel answers with a unicast route whose output link is up
/// with carrier (`UP`, `LOWER_UP`), is
/// not loopback or a container interface, and the source is a global address (`ip address`
/// says `scope global`, wherever it lives) that is neither tentative (unless optimistic) nor
/// DAD-failed. The machine reaches through the IPv4 link when IPv4 is reachable, else through
/// the IPv6 link.
///
/// It decides only what the soak's churn produces: links with an Ethernet hardware address
/// (veth pairs named `r?0`), hence `reachable-via-ethernet`; anything else throws.
enum ReachabilityOracle {
    /// The global probe destinations, as README names them.
    private static let destinations: [(family: String, address: String)] = [("-4", "8.8.8.8"), ("-6", "2001:4860:4860::8888")]
    /// Route types `ip route get` prints first when the answer is not a unicast route.
    private static let nonUnicastTypes: Set<String> = ["unreachable", "blackhole", "prohibit", "throw", "local", "broadcast", "multicast", "anycast", "nat"]
    /// The default `ContainerInterfaces=` names, never a reason to be reachable (the soak makes no bridges).
    private static let containerPrefixes = ["docker0", "br-", "veth", "cni", "virbr"]

    /// Decides what the daemon must publish for the namespace's current state.
    ///
    /// - Parameter namespace: the namespace.
    /// - Returns: the verdict, and which clause of the rule made each unreachable family so.
    /// - Throws: `HarnessError` when `ip` fails or the state is outside what the oracle decides.
    static func read(_ namespace: TestNamespace) throws -> OracleReading {
        let links = try linkLines(in: namespace)
        let addresses = try namespace.ip("-o", "addr", "show").split(separator: "\n").map(String.init)
        var outputs: [String?] = []
        var whyNot: [String] = []
        for (family, destination) in destinations {
            let source = try namespace.runInside { UDPSource.selected(toward: destination) }
            var lookupArguments = ["-n", namespace.name, family, "route", "get", destination]
            if let source, source != "0.0.0.0" { lookupArguments += ["from", source] }
            // The flow README's rule answers for: a TCP connection to port 443.
            lookupArguments += ["ipproto", "tcp", "dport", "443"]
            let lookup = try Command.run("ip", lookupArguments)
            switch try answer(lookup: lookup, source: source, links: links, addresses: addresses) {
            case .reachable(let link):
                outputs.append(link)
            case .notReachable(let clause):
                outputs.append(nil)
                whyNot.append("IPv\(family.dropFirst()): \(clause)")
            }
        }
        return OracleReading(verdict: OracleVerdict(ipv4: outputs[0], ipv6: outputs[1]), whyNot: whyNot)
    }

    /// One family's answer.
    private enum FamilyAnswer {
        /// Reachable through this link.
        case reachable(String)
        /// Not reachable, for the reason the clause of the rule names.
        case notReachable(String)
    }

    /// Applies the rule to one family's lookup and the source the kernel selected (nil: the
    /// UDP `connect` failed).
    private static func answer(
        lookup: CommandResult, source: String?, links: [String: String], addresses: [String]
    ) throws -> FamilyAnswer {
        // A failed lookup is "Network is unreachable", "No route to host"... (non-unicast or none).
        guard lookup.succeeded else { return .notReachable("no unicast route") }
        let words = lookup.standardOutput.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let first = words.first, !nonUnicastTypes.contains(first),
              let devIndex = words.firstIndex(of: "dev"), devIndex + 1 < words.count
        else { return .notReachable("no unicast route") }
        let name = words[devIndex + 1]
        guard let link = links[name] else { throw HarnessError("route get names unknown link \(name): \(lookup.standardOutput)") }
        let flags = TestNamespace.flags(inLinkLine: link) ?? []
        if flags.contains("LOOPBACK") || containerPrefixes.contains(where: { name.hasPrefix($0) }) {
            return .notReachable("loopback or container link")
        }
        guard flags.contains("UP") else { return .notReachable("link down") }
        guard flags.contains("LOWER_UP") else { return .notReachable("no carrier") }
        // `2: ra0    inet6 2001:db8:77::2/64 scope global ...`, `inet 10.80.0.2 peer 10.80.0.1/32 ...`
        let usable = source.map { source in
            addresses.contains { line in
                let fields = line.split(whereSeparator: \.isWhitespace).map(String.init)
                guard fields.count > 3, fields[3].split(separator: "/").first.map(String.init) == source,
                      let scope = fields.firstIndex(of: "scope"), scope + 1 < fields.count, fields[scope + 1] == "global"
                else { return false }
                let tentative = fields.contains("tentative") && !fields.contains("optimistic")
                return !tentative && !fields.contains("dadfailed")
            }
        } ?? false
        guard usable else { return .notReachable("no usable global source address") }
        guard link.contains("link/ether") else {
            throw HarnessError("\(name) is reachable but not an Ethernet link; the oracle does not decide its transport: \(link)")
        }
        return .reachable(name)
    }

    /// `ip -o link` lines by link name (`ra0@ra1` is `ra0`).
    private static func linkLines(in namespace: TestNamespace) throws -> [String: String] {
        var lines: [String: String] = [:]
        for line in try namespace.ip("-o", "link", "show").split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count > 1 else { continue }
            let name = fields[1].dropLast().split(separator: "@").first.map(String.init) ?? ""
            lines[name] = String(line)
        }
        return lines
    }
}

/// An application's UDP socket: what source address the kernel selects for it.
private enum UDPSource {
    /// Connects a UDP socket to `destination` (port 443; no packet is sent) in the calling
    /// thread's namespace and reads its local address.
    ///
    /// - Returns: the source address as text (`0.0.0.0` when IPv4 found none), nil when
    ///   `connect` failed (no route, an unreachable route, no IPv6 source address).
    static func selected(toward destination: String) -> Result<String?, HarnessError> {
        let family = destination.contains(":") ? AF_INET6 : AF_INET
        let descriptor = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(.lastError("open a UDP socket")) }
        defer { _ = close(descriptor) }
        var remote = sockaddr_storage()
        var length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
        withUnsafeMutableBytes(of: &remote) { raw in
            raw.storeBytes(of: sa_family_t(family), toByteOffset: 0, as: sa_family_t.self)
            raw.storeBytes(of: UInt16(443).bigEndian, toByteOffset: 2, as: UInt16.self)  // sin_port, sin6_port
            _ = inet_pton(family, destination, raw.baseAddress! + (family == AF_INET ? 4 : 8))  // sin_addr, sin6_addr
        }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, length) } }
        guard connected == 0 else { return .success(nil) }
        var local = sockaddr_storage()
        length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        guard named == 0 else { return .failure(.lastError("getsockname")) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = withUnsafeBytes(of: &local) { raw in inet_ntop(family, raw.baseAddress! + (family == AF_INET ? 4 : 8), &text, socklen_t(text.count)) }
        guard written != nil else { return .failure(.lastError("inet_ntop")) }
        return .success(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
